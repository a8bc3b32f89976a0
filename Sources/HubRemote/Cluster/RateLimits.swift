import Foundation
import HubCore
import Logging
import PostgresNIO

/// A cluster's notification rate limits (a rule's `rate_limit`: at most one notification per rule and sensor in
/// that long), kept in `sensorhub_rate_limits` and checked in the step that commits the event. A sensor's steps
/// take turns on its row's lock, whichever agent makes them, so one check at a time sees and moves each rule and
/// sensor's last notification, by the database's clock: the limit is the cluster's, not each agent's.
public struct RateLimits: Sendable {
    let connection: PostgresConnection
    let hub: String
    let logger: Logger

    /// Whether a notification of `event` for `sensor` under `rule` may go, at most one per `limit`; records it when
    /// it may. The event let through last is let through again (a step tried again makes the same notifications).
    public func allow(rule: String, sensor: String, limit: Duration, event: String) async throws -> Bool {
        let rows = try await connection.query(
            """
            INSERT INTO sensorhub_rate_limits AS limits (hub, rule, sensor, last, event)
            VALUES (\(hub), \(rule), \(sensor), now(), \(event))
            ON CONFLICT (hub, rule, sensor) DO UPDATE SET last = now(), event = EXCLUDED.event
            WHERE limits.last <= now() - \(limit.milliseconds)::bigint * interval '1 millisecond'
                OR limits.event = EXCLUDED.event
            RETURNING 1
            """, logger: logger)
        var allowed = false
        for try await _ in rows.decode(Int.self) { allowed = true }
        return allowed
    }
}
