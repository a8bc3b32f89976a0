import HubCore
import HubSupport
import Logging
import PostgresNIO

/// The registry in a PostgreSQL database (`store: postgres://…`), which several agents and every hubctl share: the
/// document and rules of `defaults.json`, kept a sensor a row (`DefaultsDocument.SensorRow`) so that a change writes
/// only the sensors it touched.
///
/// - Changing: a transaction that locks the registry's one row (`FOR UPDATE`, as flock locks the file), reads the
///   newest document, applies the change with the document's own rules, writes the rows it changed, bumps the
///   revision and sends `NOTIFY sensorhub_registry` — delivered at commit, to every agent listening.
/// - Statuses (`recordStatuses`): the same lock, but only the rows of the sensors concerned are read and written,
///   and nobody is notified: statuses are not what agents follow.
/// - The schema is made, or brought up to date, on connecting (the migrations `remote:` uses; one database can be
///   both).
///
/// One connection, one caller at a time; a failed or slow call (over `limit`) drops it, and the next call connects
/// again, so a database restart costs the calls made while it is down, which fail with `StoreError.unavailable`.
/// A command that makes a call or two (hubctl) closes it after each instead (`keepsConnection: false`).
public final class PostgresRegistry: RegistryStore {
    /// The channel every change of the sensors or the broker settings is announced on; the payload is the revision.
    static let channel = "sensorhub_registry"

    public let server: DatabaseSettings
    let applicationName: String
    private let session: DatabaseSession
    let logger: Logger

    /// - Parameters:
    ///   - applicationName: who connects, as `pg_stat_activity` shows it (`hubd`, `hubctl`).
    ///   - limit: the longest one call (connecting included) may take before it fails as unavailable.
    ///   - keepsConnection: keep the connection for the next call; otherwise each call closes it (no `close()` to
    ///     forget).
    public init(
        server: DatabaseSettings, applicationName: String, limit: Duration = .seconds(30), keepsConnection: Bool = true,
        logger: Logger
    ) {
        self.server = server
        self.applicationName = applicationName
        session = DatabaseSession(
            server: server, applicationName: applicationName, limit: limit, keepsConnection: keepsConnection,
            logger: logger)
        self.logger = logger
    }

    public var location: String { server.url }

    /// Closes the connection, if there is one.
    public func close() async {
        await session.close()
    }

    // MARK: Reading

    public func read() async throws(StoreError) -> DefaultsDocument {
        try await read(ifChangedFrom: nil).document ?? DefaultsDocument()
    }

    public func read(ifChangedFrom known: RegistryVersion?) async throws(StoreError) -> (
        version: RegistryVersion?, document: DefaultsDocument?
    ) {
        let logger = logger
        let read = try await withConnection { connection -> (Revisions, [UInt8], [[UInt8]])? in
            if let known, let current = try await Self.revisions(connection, logger: logger), current.version == known {
                return (current, [], [])
            }
            return try await connection.withTransaction(logger: logger) { connection in
                // One snapshot for the header and the rows: a change committed between the two is in neither.
                try await connection.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ", logger: logger)
                guard let (version, header) = try await Self.header(connection, locking: .none, logger: logger) else {
                    return nil
                }
                let sensors = try await Self.rows(connection, logger: logger)
                return (version, header, sensors)
            }
        }
        guard let (version, header, sensors) = read else { return (nil, DefaultsDocument()) }
        if let known, version.version == known, header.isEmpty { return (known, nil) }
        let size = header.count + sensors.reduce(0) { $0 + $1.count }
        return (
            RegistryVersion(sensors: version.sensors, statuses: version.statuses, byteCount: size),
            try decode(header, sensors)
        )
    }

    public func version() async -> RegistryVersion? {
        let logger = logger
        return try? await withConnection { connection in try await Self.revisions(connection, logger: logger)?.version }
    }

    // MARK: Changing

    public func update<Result: Sendable>(
        _ change: @escaping @Sendable (inout DefaultsDocument) throws(RegistryError) -> Result,
        beforeReplacing: @escaping @Sendable (_ read: RegistryVersion?, _ written: RegistryVersion) -> Void
    ) async throws(StoreError) -> Result {
        let (logger, location) = (logger, location)
        let outcome = try await withConnection { connection -> Swift.Result<Result, StoreError> in
            try await connection.withTransaction(logger: logger) { connection -> Swift.Result<Result, StoreError> in
                let (read, header) = try await Self.lockedHeader(connection, logger: logger)
                let sensors = try await Self.rows(connection, logger: logger)
                var document: DefaultsDocument
                do throws(JSONSyntaxError) {
                    document = try DefaultsDocument.decode(header: header, sensors: sensors)
                } catch {
                    return .failure(.invalidDocument(path: location, error))
                }
                let before = document.sensorIDs
                let result: Result
                do throws(RegistryError) {
                    result = try change(&document)
                } catch {
                    return .failure(.registry(error))
                }
                guard document.revision != 0 else { return .success(result) }
                let removed = Array(before.subtracting(document.sensorIDs))
                try await Self.write(
                    document.changedSensorRows(), removing: removed, header: document.headerJSON(), to: connection,
                    logger: logger)
                let written = try await Self.bump(connection, sensors: true, logger: logger)
                try await Self.announce(written, on: connection, logger: logger)
                beforeReplacing(read.version, written.version)
                return .success(result)
            }
        }
        return try outcome.get()
    }

    /// What `replace` found, and so did.
    public enum Replacement: Sendable, Equatable {
        /// The database's registry is `document` now.
        case written
        /// It was `document` already: nothing was written.
        case alreadyThere
        /// It held another registry (this many sensors), which only `overwriting` replaces: nothing was written.
        case refused(sensors: Int)
    }

    /// Makes the database's registry `document`, every sensor written (`hubctl store migrate`), unless it is that
    /// already, or holds another one (sensors, or only broker settings) and `overwriting` is off; decided and done
    /// under the lock, so no change made meanwhile is lost unseen, and announced like any change.
    public func replace(with document: DefaultsDocument, overwriting: Bool) async throws(StoreError) -> Replacement {
        let (logger, location) = (logger, location)
        let outcome = try await withConnection { connection -> Result<Replacement, StoreError> in
            try await connection.withTransaction(logger: logger) { connection -> Result<Replacement, StoreError> in
                let (_, header) = try await Self.lockedHeader(connection, logger: logger)
                let rows = try await Self.rows(connection, logger: logger)
                let existing: DefaultsDocument
                do throws(JSONSyntaxError) {
                    existing = try DefaultsDocument.decode(header: header, sensors: rows)
                } catch {
                    return .failure(.invalidDocument(path: location, error))
                }
                if existing == document { return .success(.alreadyThere) }
                if existing != DefaultsDocument() && !overwriting {
                    return .success(.refused(sensors: existing.sensors.count))
                }
                try await connection.query("DELETE FROM sensorhub_sensors", logger: logger)
                try await Self.write(
                    document.sensorRows(), removing: [], header: document.headerJSON(), to: connection, logger: logger)
                let written = try await Self.bump(connection, sensors: true, logger: logger)
                try await Self.announce(written, on: connection, logger: logger)
                return .success(.written)
            }
        }
        return try outcome.get()
    }

    /// A transaction is durable when it commits: `durable` changes nothing.
    public func recordStatuses(
        _ updates: [SensorStatusUpdate], durable: Bool,
        beforeReplacing: @escaping @Sendable (_ read: RegistryVersion?, _ written: RegistryVersion) -> Void
    ) async throws(StoreError) {
        let (logger, location) = (logger, location)
        let outcome = try await withConnection { connection -> StoreError? in
            try await connection.withTransaction(logger: logger) { connection -> StoreError? in
                guard let (read, header) = try await Self.header(connection, locking: .update, logger: logger) else {
                    return nil
                }
                let sensors = try await Self.rows(onTopics: updates.map(\.topic), connection, logger: logger)
                var document: DefaultsDocument
                do throws(JSONSyntaxError) {
                    document = try DefaultsDocument.decode(header: header, sensors: sensors)
                } catch {
                    return .invalidDocument(path: location, error)
                }
                for update in updates { document.record(update) }
                guard document.revision != 0 else { return nil }
                try await Self.write(
                    document.changedSensorRows(), removing: [], header: nil, to: connection, logger: logger)
                let written = try await Self.bump(connection, sensors: false, logger: logger)
                beforeReplacing(read.version, written.version)
                return nil
            }
        }
        if let outcome { throw outcome }
    }

    public func syncStatuses() async throws(StoreError) {}

    /// Runs `body` on the session's connection; any failure is the registry being unavailable.
    func withConnection<T: Sendable>(
        within limit: Duration? = nil, _ body: @escaping @Sendable (PostgresConnection) async throws -> T
    ) async throws(StoreError) -> T {
        do {
            return try await session.run(within: limit, body)
        } catch {
            if Self.isServerError(error) { throw .database(location: location, reason: Self.reason(error)) }
            throw .unavailable(location: location, reason: Self.reason(error))
        }
    }

    /// Whether the server itself answered with an error, rather than not answering or not being reached.
    static func isServerError(_ error: any Error) -> Bool {
        if let error = error as? PostgresTransactionError,
            let inner = error.closureError ?? error.commitError ?? error.beginError
        {
            return isServerError(inner)
        }
        return (error as? PSQLError)?.code == .server
    }

    /// What the user is told: the server's own message, or what failed on the way to it.
    public static func reason(_ error: any Error) -> String {
        if let error = error as? RemoteTimeout {
            return "no answer within \(error.limit) (a change already sent may still have been made)"
        }
        if let error = error as? PostgresTransactionError,
            let inner = error.closureError ?? error.commitError ?? error.beginError
        {
            return reason(inner)
        }
        if let error = error as? PSQLError {
            if let message = error.serverInfo?[.message] { return message }
            if error.code == .authMechanismRequiresPassword {
                return "the server asks for a password, and none was given (password_file, or $HUB_STORE_PASSWORD)"
            }
            if let underlying = error.underlying { return "\(underlying)" }
            return "\(error.code)"
        }
        return "\(error)"
    }

    private func decode(_ header: [UInt8], _ sensors: [[UInt8]]) throws(StoreError) -> DefaultsDocument {
        do {
            return try DefaultsDocument.decode(header: header, sensors: sensors)
        } catch {
            throw .invalidDocument(path: location, error)
        }
    }
}
