import DequeModule

/// The journal's records that some consumer has not acknowledged yet, oldest first, with their lines: what a
/// compaction keeps. Their bytes are counted as they come and go, so asking whether a compaction is worth it costs
/// nothing. Summing them on every commit was 8 % of hubd's CPU in a burst of 100,000 statuses, when the registry's
/// flush (which acknowledges only once it is written) left up to 100,000 of them waiting.
struct RetainedLines: Sequence {
    private var lines = Deque<(position: Int, line: [UInt8])>()
    /// What they take in the file, a newline after each.
    private(set) var byteCount = 0

    var isEmpty: Bool { lines.isEmpty }

    mutating func append(_ position: Int, _ line: [UInt8]) {
        lines.append((position, line))
        byteCount += line.count + 1
    }

    /// Forgets those at or before `position`.
    mutating func drop(through position: Int) {
        while let first = lines.first, first.position <= position {
            byteCount -= first.line.count + 1
            lines.removeFirst()
        }
    }

    func makeIterator() -> Deque<(position: Int, line: [UInt8])>.Iterator { lines.makeIterator() }
}
