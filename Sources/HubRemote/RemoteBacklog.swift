import HubCore

/// What waits for the remote store, in arrival order, and which of it may go now: the queue's logic without its
/// file, so that it is unit-tested on its own.
///
/// In `record` mode an entry of a recording session (its readings, its start) is held until the session's end is
/// in the backlog; the end releases them all, and they go in the order they came, ahead of the end. Everything
/// else (readings without a session, other events) goes at once, in both modes.
public struct RemoteBacklog: Sendable {
    public let mode: RemoteSettings.Mode
    private var pending: [String: RemoteEntry] = [:]
    /// Keys in arrival order; some may be done already (dropped lazily).
    private var order: [String] = []
    /// Sessions whose end has been seen: their entries are no longer held.
    private(set) var ended = Set<String>()
    private var endedOrder: [String] = []
    /// How many ended sessions are remembered (a late reading of one older than that would be held).
    static let endedMemory = 10_000

    public init(mode: RemoteSettings.Mode) {
        self.mode = mode
    }

    /// Entries waiting, held ones included.
    public var count: Int { pending.count }

    /// Entries held until their session ends (`record` mode).
    public var heldCount: Int { pending.values.count { isHeld($0) } }

    public func contains(_ key: String) -> Bool { pending[key] != nil }

    /// Adds `entry` unless one with its key waits already; returns whether it was added.
    @discardableResult
    public mutating func add(_ entry: RemoteEntry) -> Bool {
        let key = entry.key
        guard pending[key] == nil else { return false }
        pending[key] = entry
        order.append(key)
        if entry.endsSession, let session = entry.session { noteEnded(session) }
        return true
    }

    /// Remembers that `session` ended (from the queue file, after a compaction dropped its end).
    public mutating func noteEnded(_ session: String) {
        guard ended.insert(session).inserted else { return }
        endedOrder.append(session)
        if endedOrder.count > Self.endedMemory + Self.endedMemory / 2 {
            let forgotten = endedOrder.prefix(endedOrder.count - Self.endedMemory)
            for session in forgotten { ended.remove(session) }
            endedOrder.removeFirst(forgotten.count)
        }
    }

    /// The sessions whose end it remembers, oldest first.
    public var endedSessions: [String] { endedOrder }

    /// Whether `entry` must wait for its session's end.
    public func isHeld(_ entry: RemoteEntry) -> Bool {
        guard mode == .record, let session = entry.session else { return false }
        return !ended.contains(session)
    }

    /// The first `limit` entries that may go now, in arrival order.
    public func nextBatch(limit: Int) -> [RemoteEntry] {
        var batch: [RemoteEntry] = []
        for key in order {
            guard let entry = pending[key], !isHeld(entry) else { continue }
            batch.append(entry)
            if batch.count >= limit { break }
        }
        return batch
    }

    /// Every entry waiting, in arrival order (what a compaction keeps).
    public var entries: [RemoteEntry] { order.compactMap { pending[$0] } }

    /// Forgets the entries the database has (or that are gone for good); returns how many were waiting.
    @discardableResult
    public mutating func remove(_ keys: some Sequence<String>) -> Int {
        var removed = 0
        for key in keys where pending.removeValue(forKey: key) != nil { removed += 1 }
        if order.count > 2 * pending.count + 64 { order = order.filter { pending[$0] != nil } }
        return removed
    }
}
