import Foundation
import HubCore
import Logging
import PostgresNIO

/// A cluster's outbox (docs/cluster.md, migration 5): a notification a row, written in the transaction that
/// commits its event, so a committed event's notifications exist whichever agent dies after. Any agent claims due
/// rows for the backends it has, with `FOR UPDATE SKIP LOCKED`, for `visibility` by the server's clock; it renews
/// its claims while it holds them (retries included), and deletes a row once the notification is delivered or given
/// up on. A claim that is not renewed (its agent was killed) comes due again for the others; a stopping agent
/// releases its claims at once. So no two agents hold a row at once: a receiver sees a notification twice only when
/// one agent retried it, or when an agent died between a backend's answer and deleting the row.
public final class PostgresOutbox: Sendable {
    /// One notification: its key (event, backend, device), backend, and what the router makes of it (JSON).
    public struct Row: Sendable, Hashable {
        public var key: String
        public var backend: String
        public var body: String

        public init(key: String, backend: String, body: String) {
            (self.key, self.backend, self.body) = (key, backend, body)
        }
    }

    public let hub: String
    public let visibility: Duration
    /// Who holds a claim: the agent's name and this process.
    private let claimant: String
    private let session: DatabaseSession

    public init(server: DatabaseSettings, hub: String, agent: String, visibility: Duration, logger: Logger) {
        self.hub = hub
        self.visibility = visibility
        claimant = "\(agent)/\(UUID().uuidString)"
        session = DatabaseSession(
            server: server, applicationName: "hubd \(agent) outbox", limit: .seconds(30), keepsConnection: true,
            logger: logger)
    }

    /// Writes `rows` on `connection`, within the caller's transaction; a key the outbox has already stays as it is.
    static func insert(_ rows: [Row], hub: String, on connection: PostgresConnection, logger: Logger) async throws {
        guard !rows.isEmpty else { return }
        try await connection.query(
            """
            INSERT INTO sensorhub_outbox (hub, key, backend, notification)
            SELECT \(hub), * FROM unnest(\(rows.map(\.key))::text[], \(rows.map(\.backend))::text[],
                \(rows.map(\.body))::text[])
            ON CONFLICT (hub, key) DO NOTHING
            """, logger: logger)
    }

    /// Writes `rows` in a transaction of their own (notifications made outside a step: a test notification).
    public func add(_ rows: [Row]) async throws {
        let hub = hub
        try await session.run { connection in
            try await Self.insert(rows, hub: hub, on: connection, logger: connection.logger)
        }
    }

    /// Claims up to `limit` rows for `backends` that nobody holds (or whose holder's claim ran out), oldest first.
    public func claim(limit: Int, backends: [String]) async throws -> [Row] {
        guard limit > 0, !backends.isEmpty else { return [] }
        let (hub, claimant, seconds) = (hub, claimant, visibility.seconds)
        return try await session.run { connection in
            let rows = try await connection.query(
                """
                UPDATE sensorhub_outbox SET claimed_by = \(claimant),
                    claimed_until = now() + \(seconds) * interval '1 second'
                WHERE (hub, key) IN (
                    SELECT hub, key FROM sensorhub_outbox
                    WHERE hub = \(hub) AND backend = ANY(\(backends)::text[])
                        AND (claimed_until IS NULL OR claimed_until < now())
                    ORDER BY seq LIMIT \(limit) FOR UPDATE SKIP LOCKED)
                RETURNING key, backend, notification, seq
                """, logger: connection.logger)
            var claimed: [(Row, Int64)] = []
            for try await (key, backend, body, seq) in rows.decode((String, String, String, Int64).self) {
                claimed.append((Row(key: key, backend: backend, body: body), seq))
            }
            return claimed.sorted { $0.1 < $1.1 }.map(\.0)
        }
    }

    /// Extends this process's claims by `visibility`; returns how many it holds.
    @discardableResult
    public func renew() async throws -> Int {
        let (hub, claimant, seconds) = (hub, claimant, visibility.seconds)
        return try await session.run { connection in
            let rows = try await connection.query(
                """
                WITH renewed AS (
                    UPDATE sensorhub_outbox SET claimed_until = now() + \(seconds) * interval '1 second'
                    WHERE hub = \(hub) AND claimed_by = \(claimant) RETURNING 1)
                SELECT count(*)::bigint FROM renewed
                """, logger: connection.logger)
            var count = 0
            for try await number in rows.decode(Int64.self) { count = Int(number) }
            return count
        }
    }

    /// Deletes delivered (or given up) rows this process holds.
    public func delete(_ keys: [String]) async throws {
        guard !keys.isEmpty else { return }
        let (hub, claimant) = (hub, claimant)
        try await session.run { connection in
            try await connection.query(
                """
                DELETE FROM sensorhub_outbox
                WHERE hub = \(hub) AND key = ANY(\(keys)::text[]) AND claimed_by = \(claimant)
                """, logger: connection.logger)
        }
    }

    /// Gives up this process's claims, so another agent takes them at once (a stopping agent's).
    public func release() async throws {
        let (hub, claimant) = (hub, claimant)
        try await session.run { connection in
            try await connection.query(
                """
                UPDATE sensorhub_outbox SET claimed_by = NULL, claimed_until = NULL
                WHERE hub = \(hub) AND claimed_by = \(claimant)
                """, logger: connection.logger)
        }
    }

    /// Rows waiting, claimed or not.
    public func pending() async throws -> Int {
        let hub = hub
        return try await session.run { connection in
            let rows = try await connection.query(
                "SELECT count(*)::bigint FROM sensorhub_outbox WHERE hub = \(hub)", logger: connection.logger)
            var count = 0
            for try await number in rows.decode(Int64.self) { count = Int(number) }
            return count
        }
    }

    public func close() async {
        await session.close()
    }
}
