import Foundation
import HubNotify
import HubRemote
import HubSupport
import Logging

/// The cluster's outbox in PostgreSQL (`PostgresOutbox`) as the router's `SharedOutbox`: a notification a row, in
/// the outbox file's own text.
final class ClusterOutbox: SharedOutbox {
    let database: PostgresOutbox
    private let logger: Logger
    /// Deliveries to mark done, written together (one `DELETE` per batch rather than per delivery).
    private let doneLater = Locked<(keys: [String], scheduled: Bool)>(([], false))

    init(database: PostgresOutbox, logger: Logger) {
        self.database = database
        self.logger = logger
    }

    /// The outbox's rows for `notifications`.
    static func rows(_ notifications: [HubNotify.Notification]) -> [PostgresOutbox.Row] {
        notifications.map { PostgresOutbox.Row(key: $0.key, backend: $0.backend, body: Outbox.text($0)) }
    }

    /// Claims are renewed three times within their visibility.
    var renewal: Duration { database.visibility / 3 }

    func add(_ notifications: [HubNotify.Notification]) async throws {
        try await database.add(Self.rows(notifications))
    }

    func claim(limit: Int, backend: String) async throws -> [HubNotify.Notification] {
        var notifications: [HubNotify.Notification] = []
        var unreadable: [String] = []
        for row in try await database.claim(limit: limit, backends: [backend]) {
            if let notification = Outbox.notification(fromText: row.body) {
                notifications.append(notification)
            } else {
                unreadable.append(row.key)
            }
        }
        if !unreadable.isEmpty {
            logger.error(
                "dropping notifications the cluster's outbox holds that this agent can't read",
                metadata: ["keys": "\(unreadable.prefix(5))", "count": "\(unreadable.count)"])
            await markDone(unreadable)
        }
        return notifications
    }

    func renew() async throws {
        try await database.renew()
    }

    func release() async {
        await flushDone()
        do {
            try await database.release()
        } catch {
            logger.warning(
                "could not release this agent's claims on notifications; others take them once they run out",
                metadata: ["error": "\(error)", "visibility": "\(database.visibility)"])
        }
        await database.close()
    }

    func markDone(_ keys: [String]) async {
        guard !keys.isEmpty else { return }
        do {
            try await database.delete(keys)
        } catch {
            // Still claimed by this agent: delivered again only if it dies before the claim is dropped.
            logger.error(
                "could not mark notifications done in the cluster's outbox; they may be sent again",
                metadata: ["error": "\(error)", "count": "\(keys.count)"])
        }
    }

    /// Deletes at once; marks made while a delete runs go in the next one (no waiting: a mark not yet written when
    /// the agent dies is a notification sent again by another agent).
    func markDoneLater(_ key: String) {
        let start = doneLater.withLock { pending -> Bool in
            pending.keys.append(key)
            defer { pending.scheduled = true }
            return !pending.scheduled
        }
        guard start else { return }
        Task {
            while true {
                let keys = doneLater.withLock { pending -> [String] in
                    defer { pending.keys = [] }
                    if pending.keys.isEmpty { pending.scheduled = false }
                    return pending.keys
                }
                guard !keys.isEmpty else { return }
                await markDone(keys)
            }
        }
    }

    private func flushDone() async {
        let keys = doneLater.withLock { pending -> [String] in
            defer { pending.keys = [] }
            return pending.keys
        }
        await markDone(keys)
    }
}
