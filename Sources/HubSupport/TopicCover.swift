/// Few subscription filters for many topics: where topics differ in one level only (`bench/s0` … `bench/s99999`,
/// `shellies/<id>/sensor/door`), one filter with `+` at that level covers them all. Mosquitto's cost of a
/// subscription grows with how many one client holds (subscribing 100,000 sensor topics took it 3.1 s, issue 38);
/// a covering filter costs one, and the hub drops what it brings on topics no sensor uses.
///
/// Greedy, not the smallest cover in general: each topic takes, of the filters made by putting `+` at one of its
/// levels, the one that the most topics share (ties: the deepest level); a topic that shares none with at least
/// `minimumGroup - 1` others is kept whole. For topics made from one template that is one filter.
package enum TopicCover {
    package static func filters(covering topics: some Sequence<String>, minimumGroup: Int = 2) -> [String] {
        var counts: [Candidate: Int] = [:]
        for topic in topics { forEachCandidate(of: topic) { counts[$0, default: 0] += 1 } }
        // Filters are built once each at the end: a string per topic and level was a quarter of a 100,000-sensor
        // start (perf, issue 38).
        var chosen = Set<Candidate>()
        var whole = Set<String>()
        for topic in topics {
            var best: (candidate: Candidate, count: Int)?
            forEachCandidate(of: topic) { candidate in
                let count = counts[candidate] ?? 0
                // Later levels come later: `>=` makes the deepest level win a tie.
                if count >= best?.count ?? 0 { best = (candidate, count) }
            }
            if let best, best.count >= minimumGroup { chosen.insert(best.candidate) } else { whole.insert(topic) }
        }
        return (whole.union(chosen.map(\.filter))).sorted()
    }

    /// A topic with `+` in place of one of its levels: what comes before that level and what comes after it.
    private struct Candidate: Hashable {
        var before: Substring
        var after: Substring
        var filter: String { before + "+" + after }
    }

    /// Each filter made from `topic` by putting `+` at one level, in order of the levels. Not at a first level that
    /// starts with `$`: a wildcard there does not match it (MQTT 3.1.1 §4.7.2).
    private static func forEachCandidate(of topic: String, _ body: (Candidate) -> Void) {
        let utf8 = topic.utf8
        var levelStart = utf8.startIndex
        var first = true
        while true {
            let levelEnd = utf8[levelStart...].firstIndex(of: UInt8(ascii: "/")) ?? utf8.endIndex
            if !(first && utf8[levelStart...].first == UInt8(ascii: "$")) {
                body(Candidate(before: topic[..<levelStart], after: topic[levelEnd...]))
            }
            guard levelEnd < utf8.endIndex else { return }
            levelStart = utf8.index(after: levelEnd)
            first = false
        }
    }
}
