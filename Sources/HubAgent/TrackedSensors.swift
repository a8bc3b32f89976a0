/// The tracker's sensors by topic, stored densely: the values in one array and a dictionary from topic to position.
///
/// A `[String: Tracked]` keeps a key and a value for every bucket of its hash table, which is kept at most three
/// quarters full and grows by doubling: 100,000 sensors take 262,144 buckets of a 170-byte entry, 44 MB. Here the
/// table holds only the topic and a position (24 bytes a bucket) and the array holds each sensor once. Read and
/// written like the dictionary it replaced (`sensors[topic]`, `for (topic, tracked) in sensors`).
struct TrackedSensors: Sendable, Sequence {
    typealias Tracked = SensorTracker.Tracked

    private var positions: [String: Int] = [:]
    private var topicList: [String] = []
    private var entries: [Tracked] = []

    var count: Int { entries.count }
    var keys: [String] { topicList }
    var values: [Tracked] { entries }

    /// The sensor on `topic`; setting `nil` removes it (the last one takes its place in the array).
    subscript(topic: String) -> Tracked? {
        get { positions[topic].map { entries[$0] } }
        set {
            if let newValue {
                if let position = positions[topic] {
                    entries[position] = newValue
                } else {
                    positions[topic] = entries.count
                    topicList.append(topic)
                    entries.append(newValue)
                }
            } else {
                removeValue(forKey: topic)
            }
        }
    }

    @discardableResult
    mutating func removeValue(forKey topic: String) -> Tracked? {
        guard let position = positions.removeValue(forKey: topic) else { return nil }
        let removed = entries[position]
        let last = entries.count - 1
        if position != last {
            entries.swapAt(position, last)
            topicList.swapAt(position, last)
            positions[topicList[position]] = position
        }
        entries.removeLast()
        topicList.removeLast()
        return removed
    }

    func first(where predicate: ((key: String, value: Tracked)) -> Bool) -> (key: String, value: Tracked)? {
        for position in entries.indices where predicate((topicList[position], entries[position])) {
            return (topicList[position], entries[position])
        }
        return nil
    }

    func mapValues<T>(_ transform: (Tracked) -> T) -> [String: T] {
        var result: [String: T] = [:]
        result.reserveCapacity(entries.count)
        for position in entries.indices { result[topicList[position]] = transform(entries[position]) }
        return result
    }

    struct Iterator: IteratorProtocol {
        fileprivate let topics: [String]
        fileprivate let entries: [Tracked]
        fileprivate var position = 0

        mutating func next() -> (key: String, value: Tracked)? {
            guard position < entries.count else { return nil }
            defer { position += 1 }
            return (topics[position], entries[position])
        }
    }

    func makeIterator() -> Iterator { Iterator(topics: topicList, entries: entries) }
}
