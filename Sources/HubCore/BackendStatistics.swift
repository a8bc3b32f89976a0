/// What a notifier backend has done since hubd started: its queue counts it, the status file, `hubctl status`
/// and `/metrics` show it.
public struct BackendStatistics: Sendable, Hashable, Codable {
    /// Waiting or retrying now.
    public var queued = 0
    public var delivered = 0
    /// Attempts that failed and were scheduled again.
    public var retried = 0
    /// Given up on: a permanent failure, or too old to retry.
    public var failed = 0
    /// Dropped because the queue was full.
    public var dropped = 0
    public var lastError: String?
    /// When it last delivered one, and when its last error was (the dashboard's backend health).
    public var lastDelivered: Timestamp?
    public var lastErrorAt: Timestamp?

    public init() {}
}
