import Foundation

/// What a running hubd says about itself, in `hubd.status.json` in the state directory (rewritten every few
/// seconds while something changes); `hubctl status` reads it.
public struct AgentStatus: Codable, Sendable, Hashable {
    public static let fileName = "hubd.status.json"
    /// A status older than this, from a process that still exists, means a wedged hubd.
    public static let staleAfter: TimeInterval = 30

    public var pid: Int32
    public var version: String
    public var started: Date
    public var updated: Date
    /// `host:port` of the broker it talks to.
    public var broker: String
    public var connected: Bool
    public var connectedSince: Date?
    /// Sensors in the registry as the agent follows it.
    public var sensors: Int
    public var counters: Counters
    public var lastError: LastError?
    /// What the notifiers did since hubd started.
    public var notifications: Notifications?

    public struct Notifications: Codable, Sendable, Hashable {
        /// In the outbox, not yet delivered.
        public var pending: Int
        /// Held back by a rule's rate limit.
        public var suppressed: Int
        public var backends: [String: BackendStatistics]
        /// The alert stage's state and counters (`nil` in a status file written before there were alerts).
        public var alerts: Alerts?

        public init(
            pending: Int, suppressed: Int, backends: [String: BackendStatistics], alerts: Alerts? = nil
        ) {
            self.pending = pending
            self.suppressed = suppressed
            self.backends = backends
            self.alerts = alerts
        }
    }

    /// The alerts now, and what the alert stage did (counted in its book, so across restarts).
    public struct Alerts: Codable, Sendable, Hashable {
        /// Firing and not acknowledged.
        public var firing = 0
        public var acknowledged = 0
        /// Held while a parent they depend on is offline.
        public var held = 0
        /// Silences in force.
        public var silences = 0
        public var messages = 0
        public var outages = 0
        /// Opened and closed within their group's wait: nothing sent.
        public var flapped = 0
        /// Held back by a silence (alerts and plain rules' notifications).
        public var silenced = 0
        /// How many times the alert book was begun again because it was lost or unreadable (0 when never).
        public var resets = 0
        /// The last such reset, in words ("alerts.json could not be read: …; kept as …"), and when.
        public var lastReset: String?
        public var lastResetAt: Date?
        public init() {}

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            firing = try container.decode(Int.self, forKey: .firing)
            acknowledged = try container.decode(Int.self, forKey: .acknowledged)
            held = try container.decode(Int.self, forKey: .held)
            silences = try container.decode(Int.self, forKey: .silences)
            messages = try container.decode(Int.self, forKey: .messages)
            outages = try container.decode(Int.self, forKey: .outages)
            flapped = try container.decode(Int.self, forKey: .flapped)
            silenced = try container.decode(Int.self, forKey: .silenced)
            // Not in the status of an earlier hubd.
            resets = try container.decodeIfPresent(Int.self, forKey: .resets) ?? 0
            lastReset = try container.decodeIfPresent(String.self, forKey: .lastReset)
            lastResetAt = try container.decodeIfPresent(Date.self, forKey: .lastResetAt)
        }
    }

    public struct Counters: Codable, Sendable, Hashable {
        public var messages: Int = 0
        public var changes: Int = 0
        /// Messages that did not become a status, by reason.
        public var rejected: [String: Int] = [:]
        public var reconnects: Int = 0
        public var storeWrites: Int = 0
        /// What the SDS011's serial line carried that was not a frame; `nil` when no SDS011 is read.
        public var sds011: SerialLine?
        /// Each regional air-quality feed's polls, by feed name; `nil` when no feed is configured.
        public var feeds: [String: FeedCounters]?
        /// The UV source's fetches of the TEMIS page; `nil` when it reads no page.
        public var temis: TEMISCounters?
        /// The write-ahead journal's work; `nil` from a hub that has none.
        public var journal: JournalCounters?
        /// What discovery did; `nil` when it is off.
        public var discovery: DiscoveryCounters?
        /// What the remote store's queue holds and sent; `nil` when no `remote:` is configured (or it is the store's
        /// database, whose writer is `history`'s).
        public var remote: RemoteCounters?
        /// With `store:`, what the queue of the history bound for the store's database holds and sent.
        public var history: RemoteCounters?

        public init() {}
    }

    /// What the remote store (`remote:`) did since start.
    public struct RemoteCounters: Codable, Sendable, Hashable {
        /// Readings, session ends and events in the queue on disk, not yet in the database.
        public var queued = 0
        /// Of those, what a `record` mode holds until its session ends.
        public var held = 0
        /// Entries the database committed since start.
        public var sent = 0
        /// Attempts (a connection, a batch) that failed.
        public var failures = 0
        /// Entries the database refused three times, set aside in `remote-rejected.jsonl`.
        public var rejected = 0
        /// Queue lines that could not be read at start (a torn last line after a crash), skipped.
        public var unreadable = 0
        /// Whether the last attempt reached the database.
        public var connected = false
        /// Whether PostGIS is in use there.
        public var postgis = false
        public var lastError: String?

        public init() {}
    }

    /// What hubd's discovery did.
    public struct DiscoveryCounters: Codable, Sendable, Hashable {
        /// Sensors it added since start.
        public var added = 0
        /// Devices it did not add because `max_auto_sensors` were reached.
        public var overLimit = 0

        public init() {}
    }

    /// What the write-ahead journal did since start.
    public struct JournalCounters: Codable, Sendable, Hashable {
        /// Records written (a status and the events it caused).
        public var records = 0
        /// Batches written and flushed, one `fsync` each.
        public var commits = 0
        /// Writes that failed: what they held was handed on, but not durably.
        public var errors = 0
        /// Records read back at start, from before a crash.
        public var replayed = 0
        /// Lines that could not be read at start (a torn last line after a crash), skipped.
        public var unreadable = 0
        public var compactions = 0
        /// The longest a record waited from `append` until it was durable, in seconds: the window in which a
        /// SIGKILL loses a status the broker counts as delivered (unless acknowledgements are held) or a QoS 0 one.
        public var longestWait = 0.0
        /// Durable records each consumer (`store`, `router`, `history`…) has not yet made durable itself: how far the
        /// registry's flush, the notifications and the history are behind. The journal keeps them until then.
        public var unacknowledged: [String: Int]? = nil

        public init() {}
    }

    /// What one regional air-quality feed did since start.
    public struct FeedCounters: Codable, Sendable, Hashable {
        /// Polls made (each fetches the feed's documents).
        public var polls = 0
        /// Polls the server answered 304 Not Modified.
        public var notModified = 0
        /// Readings published (new region and time).
        public var published = 0
        /// Readings already published (a repeated poll, or the same document after a restart): not published again.
        public var repeated = 0
        /// Readings older than the one published for their region (timestamps going backwards): not published.
        public var older = 0
        /// Readings refused: a region missing, an absurd value, a bad timestamp.
        public var rejected = 0
        /// Polls that failed: an HTTP error, a timeout, a document that is not the feed's.
        public var failures = 0
        /// The last problem, for `hubctl status`.
        public var lastProblem: String?

        public init() {}
    }

    /// What the UV source's fetches of the TEMIS page did since start.
    public struct TEMISCounters: Codable, Sendable, Hashable {
        /// Fetches of the page, good or not.
        public var fetches = 0
        /// Fetches that failed: an HTTP error, a timeout, a page that could not be read.
        public var failures = 0
        /// The last failure's reason, kept after the page is read again.
        public var lastError: String?
        /// When the page whose values are in use was fetched (by an earlier hubd, when it is the page it kept).
        public var lastGoodFetch: Date?

        public init() {}
    }

    /// Bytes skipped on a serial line: noise, frames cut short, frames with a bad checksum.
    public struct SerialLine: Codable, Sendable, Hashable {
        public var discardedBytes = 0
        public var badChecksums = 0

        public init() {}
    }

    public struct LastError: Codable, Sendable, Hashable {
        public var time: Date
        public var message: String

        public init(time: Date, message: String) {
            self.time = time
            self.message = message
        }
    }

    public init(pid: Int32, version: String, started: Date, broker: String) {
        self.pid = pid
        self.version = version
        self.started = started
        self.updated = started
        self.broker = broker
        self.connected = false
        self.sensors = 0
        self.counters = Counters()
    }

    static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return encoder
    }

    static var decoder: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }

    /// Writes the status next to the store: a temporary file renamed over the old one, so readers never see
    /// half of it. No fsync: it describes the running process and is worthless after a crash.
    /// (Foundation's `Data.write(to:)` flushed it to disk all the same: 85,000 fsyncs a day at a home's rate,
    /// `bench/home.sh`.) Owner only, whatever the umask: it names the broker and the sensors (issue 51).
    public func write(to directory: String) throws {
        try replaceFileAtomically(
            at: directory + "/" + Self.fileName, with: Array(try Self.encoder.encode(self)), sync: false)
    }

    /// Makes the status file in `directory` a symbolic link to the one in `runtime` (systemd's `RuntimeDirectory`,
    /// a tmpfs), where hubd then writes it: its heartbeat every `statusInterval` (17,280 files a day, each a block
    /// and an inode written back) costs an SD card nothing, and `hubctl status` reads it through the link. After a
    /// reboot the link points at nothing (`danglingLink(in:)`).
    public static func link(from directory: String, to runtime: String) throws(StoreError) {
        try MemoryLogs.link(directory + "/" + fileName, to: runtime + "/" + fileName)
    }

    /// Where the status file in `directory` links to when what it links to is gone (the machine restarted since
    /// hubd last ran, and `RuntimeDirectory` with it); nil otherwise.
    public static func danglingLink(in directory: String) -> String? {
        let path = directory + "/" + fileName
        guard let target = MemoryLogs.target(of: path), access(path, F_OK) != 0 else { return nil }
        return target
    }

    /// The status hubd last wrote in `directory`, if any.
    public static func read(from directory: String) -> AgentStatus? {
        guard let data = FileManager.default.contents(atPath: directory + "/" + fileName) else { return nil }
        return try? decoder.decode(AgentStatus.self, from: data)
    }

    /// Whether the process that wrote this status is a hubd that still runs and still writes.
    public var isRunning: Bool {
        guard kill(pid, 0) == 0 || errno == EPERM else { return false }
        let command = (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8)) ?? ""
        return command.hasPrefix("hubd") && Date().timeIntervalSince(updated) < Self.staleAfter
    }
}
