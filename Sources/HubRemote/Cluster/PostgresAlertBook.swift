import Crypto
import Foundation
import HubCore
import HubNotify
import Logging
import PostgresNIO

/// A cluster's alert book in its database (migration 8, docs/cluster.md "Alerts"): one row a hub with the book and the
/// key of its buttons' tokens, and a queue beside it. An ingest step queues the events it commits that may change the
/// book, in its own transaction (so a committed event reaches the book whichever agent dies after); `hubctl`, the
/// API and the button listeners queue people's requests. The keeper (the `alerts` duty's holder) takes the queue in
/// steps (`step`): the book row locked, the lease checked, the book, the messages due and the requests' outcomes
/// written in one transaction. A sensor's events are committed one step after another (its row's lock), so their
/// queue order is theirs; two sensors' events may be taken in another order than they were committed in (a sequence
/// number is drawn at the insert, not at the commit), so a child's `silent` may come a step before its parent's
/// `offline`, and is then not held back by it.
public final class PostgresAlertBook: AlertPlace {
    public let hub: String
    private let session: DatabaseSession
    private let logger: Logger
    /// Rows taken in one step at most; more wait for the next, at once.
    static let batch = 5_000
    /// Where agents announce that something was queued, and that the keeper committed a change of the book.
    static let queued = "sensorhub_alert_queue"
    static let written = "sensorhub_alert_book"

    /// - Parameter keepsConnection: false for a command that makes a call or two (`DatabaseSession`).
    public init(server: DatabaseSettings, hub: String, name: String, keepsConnection: Bool = true, logger: Logger) {
        self.hub = hub
        self.logger = logger
        session = DatabaseSession(
            server: server, applicationName: name, limit: .seconds(10), keepsConnection: keepsConnection,
            logger: logger)
    }

    // MARK: - The ingest's side

    /// Queues `events` for the book, within the caller's transaction, and announces them at its commit.
    static func queue(_ events: [SensorEvent], hub: String, on connection: PostgresConnection, logger: Logger)
        async throws
    {
        guard !events.isEmpty else { return }
        let encoder = JSONEncoder()
        let texts = try events.map { String(decoding: try encoder.encode($0), as: UTF8.self) }
        try await connection.query(
            """
            INSERT INTO sensorhub_alert_queue (hub, event) SELECT \(hub), * FROM unnest(\(texts)::text[])
            """, logger: logger)
        try await connection.query("SELECT pg_notify(\(queued), \(hub))", logger: logger)
    }

    // MARK: - Everyone's side (AlertPlace)

    public func saved() async throws -> SavedAlerts {
        let hub = hub
        let (text, requests) = try await session.run { connection in
            let text = try await Self.bookText(hub, connection)
            var requests: [String] = []
            for try await request in try await connection.query(
                """
                SELECT request FROM sensorhub_alert_queue
                WHERE hub = \(hub) AND request IS NOT NULL AND taken IS NULL ORDER BY seq
                """, logger: connection.logger
            ).decode(String.self) { requests.append(request) }
            return (text, requests)
        }
        let decoder = JSONDecoder()
        let pending = requests.compactMap { try? decoder.decode(AlertRequest.self, from: Data($0.utf8)) }
        return SavedAlerts(book: try Self.book(text), pending: pending)
    }

    public func send(_ requests: [AlertRequest]) async throws {
        _ = try await enqueue(requests)
    }

    /// Queues `requests`; returns their ids.
    public func enqueue(_ requests: [AlertRequest]) async throws -> [Int64] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let texts = try requests.map { String(decoding: try encoder.encode($0), as: UTF8.self) }
        let hub = hub
        return try await session.run { connection in
            try await connection.withTransaction(logger: connection.logger) { connection in
                var ids: [Int64] = []
                for try await id in try await connection.query(
                    """
                    INSERT INTO sensorhub_alert_queue (hub, request) SELECT \(hub), * FROM unnest(\(texts)::text[])
                    RETURNING seq
                    """, logger: connection.logger
                ).decode(Int64.self) { ids.append(id) }
                try await connection.query("SELECT pg_notify(\(Self.queued), \(hub))", logger: connection.logger)
                return ids.sorted()
            }
        }
    }

    /// Queues one request; returns its id.
    public func ask(_ request: AlertRequest) async throws -> Int64 {
        guard let id = try await enqueue([request]).first else {
            throw PostgresAlertBookError(description: "the request was not queued")
        }
        return id
    }

    /// The outcome of the request queued as `id`; nil until the keeper took it.
    public func outcome(of id: Int64) async throws -> String? {
        let hub = hub
        return try await session.run { connection in
            for try await outcome in try await connection.query(
                "SELECT outcome FROM sensorhub_alert_queue WHERE hub = \(hub) AND seq = \(id)",
                logger: connection.logger
            ).decode(String?.self) { return outcome }
            return "refused: the request is gone"
        }
    }

    // MARK: - The keeper's side

    /// The book as last committed; an empty one before the first step.
    public func load() async throws -> AlertBook {
        let hub = hub
        return try Self.book(try await session.run { try await Self.bookText(hub, $0) })
    }

    /// The book's JSON as committed ("" before the first step, or with no row yet); `locking` the row for the
    /// caller's transaction.
    private static func bookText(_ hub: String, _ connection: PostgresConnection, locking: Bool = false)
        async throws -> String
    {
        let rows = try await connection.query(
            locking
                ? "SELECT book FROM sensorhub_alert_book WHERE hub = \(hub) FOR UPDATE"
                : "SELECT book FROM sensorhub_alert_book WHERE hub = \(hub)",
            logger: connection.logger)
        for try await book in rows.decode(String.self) { return book }
        return ""
    }

    /// Makes the hub's row, with a new key, unless it has one.
    private static func makeRow(_ hub: String, _ connection: PostgresConnection) async throws {
        let key = SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) }.base64EncodedString()
        try await connection.query(
            """
            INSERT INTO sensorhub_alert_book (hub, book, key) VALUES (\(hub), '', \(key))
            ON CONFLICT (hub) DO NOTHING
            """, logger: connection.logger)
    }

    private static func book(_ text: String) throws -> AlertBook {
        guard !text.isEmpty else { return AlertBook() }
        return try JSONDecoder().decode(AlertBook.self, from: Data(text.utf8))
    }

    /// The hub's key for buttons and links: the row's, made with the row by the first agent that asks.
    public func key() async throws -> SymmetricKey {
        let hub = hub
        let text = try await session.run { connection in
            try await Self.makeRow(hub, connection)
            for try await key in try await connection.query(
                "SELECT key FROM sensorhub_alert_book WHERE hub = \(hub)", logger: connection.logger
            ).decode(String.self) { return key }
            return ""
        }
        guard let data = Data(base64Encoded: text), data.count == 32 else {
            throw PostgresAlertBookError(description: "the cluster's alert key in sensorhub_alert_book is not 32 bytes")
        }
        return SymmetricKey(data: data)
    }

    /// One keeper's step (see the type): nil, with nothing committed, when `fence` is no longer this agent's; else
    /// whether more rows wait than one step takes.
    public func step(
        fence: PostgresRegistry.Fence?,
        _ body: @escaping @Sendable (SharedAlertStep) async -> SharedAlertStep.Result
    ) async throws -> Bool? {
        let hub = hub
        return try await session.run { connection in
            try await connection.withTransaction(logger: connection.logger) { connection -> Bool? in
                let logger = connection.logger
                try await Self.makeRow(hub, connection)
                let before = try await Self.bookText(hub, connection, locking: true)
                if let fence, try await !PostgresRegistry.holds(fence, connection, logger: logger) { return nil }
                var rows: [(Int64, String?, String?)] = []
                for try await row in try await connection.query(
                    """
                    SELECT seq, event, request FROM sensorhub_alert_queue
                    WHERE hub = \(hub) AND taken IS NULL ORDER BY seq LIMIT \(Self.batch)
                    """, logger: logger
                ).decode((Int64, String?, String?).self) { rows.append(row) }
                let decoder = JSONDecoder()
                var step = SharedAlertStep(book: try Self.book(before), events: [], requests: [], unreadable: 0)
                for (seq, event, request) in rows {
                    if let event, let decoded = try? decoder.decode(SensorEvent.self, from: Data(event.utf8)) {
                        step.events.append(decoded)
                    } else if let request,
                        let decoded = try? decoder.decode(AlertRequest.self, from: Data(request.utf8))
                    {
                        step.requests.append((seq, decoded))
                    } else {
                        step.unreadable += 1
                    }
                }
                let result = await body(step)
                if result.book.revision != step.book.revision {
                    let text = String(decoding: try JSONEncoder().encode(result.book), as: UTF8.self)
                    try await connection.query(
                        "UPDATE sensorhub_alert_book SET book = \(text), updated = now() WHERE hub = \(hub)",
                        logger: logger)
                    try await connection.query("SELECT pg_notify(\(Self.written), \(hub))", logger: logger)
                }
                try await PostgresOutbox.insert(
                    result.notifications.map {
                        PostgresOutbox.Row(key: $0.key, backend: $0.backend, body: Outbox.text($0))
                    }, hub: hub, on: connection, logger: logger)
                // Events (and unreadable rows) go; requests keep their outcome for an hour, for whoever waits on
                // one. A step that takes nothing (a deadline's) writes nothing here.
                let taken = rows.map(\.0).filter { result.outcomes[$0] == nil }
                if !taken.isEmpty {
                    try await connection.query(
                        "DELETE FROM sensorhub_alert_queue WHERE hub = \(hub) AND seq = ANY(\(taken)::bigint[])",
                        logger: logger)
                }
                let answered = result.outcomes.sorted { $0.key < $1.key }
                if !answered.isEmpty {
                    try await connection.query(
                        """
                        UPDATE sensorhub_alert_queue AS q SET outcome = a.outcome, taken = now()
                        FROM unnest(\(answered.map(\.key))::bigint[], \(answered.map(\.value))::text[])
                            AS a(seq, outcome)
                        WHERE q.hub = \(hub) AND q.seq = a.seq
                        """, logger: logger)
                    try await connection.query(
                        """
                        DELETE FROM sensorhub_alert_queue WHERE hub = \(hub) AND taken < now() - interval '1 hour'
                        """, logger: logger)
                }
                return rows.count == Self.batch
            }
        }
    }

    /// A signal each time something is queued for the book (and when the listening connection is made).
    public func queuedChanges() -> AsyncStream<Void> {
        PostgresRegistry.notifications(on: Self.queued, server: session.server, as: "hubd alert queue", logger: logger)
    }

    /// A signal each time the keeper committed a change of the book (and when the listening connection is made).
    public func writtenChanges() -> AsyncStream<Void> {
        PostgresRegistry.notifications(on: Self.written, server: session.server, as: "hubd alert book", logger: logger)
    }

    public func close() async { await session.close() }
}

public struct PostgresAlertBookError: Error, CustomStringConvertible {
    public let description: String
}
