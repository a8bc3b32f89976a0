import HubCore
import HubSupport
import Logging
import PostgresNIO

/// One connection to a database, made when first needed with the schema brought up to date (the registry's and the
/// cluster's tables; PostGIS is `remote:`'s to install, as its settings say), used by one caller at
/// a time (two transactions must not interleave on it), and dropped when a call fails or takes longer than `limit`,
/// so that the next call connects again: a database restart costs the calls made while it is down.
final class DatabaseSession: Sendable {
    let server: DatabaseSettings
    private let applicationName: String
    private let limit: Duration
    private let keepsConnection: Bool
    private let logger: Logger
    private let lock = AsyncLock()
    private let current = Locked<PostgresConnection?>(nil)

    /// - Parameter keepsConnection: keep the connection for the next call; otherwise each call closes it (a command
    ///   that makes a call or two then has no `close()` to forget, which PostgresNIO asserts on).
    init(
        server: DatabaseSettings, applicationName: String, limit: Duration, keepsConnection: Bool, logger: Logger
    ) {
        self.server = server
        self.applicationName = applicationName
        self.limit = limit
        self.keepsConnection = keepsConnection
        self.logger = logger
    }

    /// Runs `body` on the connection, within `limit`.
    /// - Parameter shorter: a tighter limit for this call (a cluster's ingest step, which holds up messages).
    func run<T: Sendable>(
        within shorter: Duration? = nil, _ body: @escaping @Sendable (PostgresConnection) async throws -> T
    ) async throws -> T {
        try await lock.withLock {
            let connection = try await open()
            do {
                let result = try await bounded(min(limit, shorter ?? limit)) { try await body(connection) }
                if !keepsConnection {
                    current.withLock { $0 = nil }
                    try? await connection.close()
                }
                return result
            } catch {
                current.withLock { $0 = nil }
                // Not awaited: a connection whose call hangs may hang its close too (see `bounded`).
                Task { try? await connection.close() }
                throw error
            }
        }
    }

    /// Closes the connection, if there is one.
    func close() async {
        let connection = await lock.withLock { current.withLock { $0.take() } }
        try? await connection?.close()
    }

    /// The open connection, or a new one with the schema brought up to date.
    private func open() async throws -> PostgresConnection {
        if let connection = current.withLock({ $0 }), !connection.isClosed { return connection }
        let (server, applicationName, logger) = (server, applicationName, logger)
        // A server still starting (recovering after a crash) was seen to leave a connection attempt unanswered: a
        // connection is given at most 5 s, so a call made then fails soon and the next one connects again.
        let connection = try await bounded(min(limit, .seconds(5)), late: { try? await $0.close() }) {
            try await PostgresConnection.connect(to: server, applicationName: applicationName, logger: logger)
        }
        do {
            _ = try await bounded(limit) {
                try await PostgresRemote.migrateIfBehind(connection, logger: logger)
            }
        } catch {
            try? await connection.close()
            throw error
        }
        current.withLock { $0 = connection }
        return connection
    }
}
