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
        var counts: [String: Int] = [:]
        var all: [String] = []
        for topic in topics {
            all.append(topic)
            forEachCandidate(of: topic) { counts[$0, default: 0] += 1 }
        }
        var chosen = Set<String>()
        for topic in all {
            var best: (filter: String, count: Int)?
            forEachCandidate(of: topic) { filter in
                let count = counts[filter] ?? 0
                // Later levels come later: `>=` makes the deepest level win a tie.
                if count >= best?.count ?? 0 { best = (filter, count) }
            }
            if let best, best.count >= minimumGroup { chosen.insert(best.filter) } else { chosen.insert(topic) }
        }
        return chosen.sorted()
    }

    /// Each filter made from `topic` by putting `+` at one level. Not at a first level that starts with `$`: a
    /// wildcard there does not match it (MQTT 3.1.1 §4.7.2).
    private static func forEachCandidate(of topic: String, _ body: (String) -> Void) {
        let levels = topic.split(separator: "/", omittingEmptySubsequences: false)
        for index in levels.indices {
            if index == 0 && levels[0].hasPrefix("$") { continue }
            var filter = ""
            filter.reserveCapacity(topic.utf8.count)
            for (position, level) in levels.enumerated() {
                if position > 0 { filter += "/" }
                filter += position == index ? "+" : level
            }
            body(filter)
        }
    }
}
