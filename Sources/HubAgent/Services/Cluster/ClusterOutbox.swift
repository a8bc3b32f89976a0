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
    /// Deliveries to mark done, written together (one `DELETE` per batch rather than per delivery), and the task
    /// writing them.
    private let done = Locked(DoneMarks())

    struct DoneMarks {
        var keys: [String] = []
        var task: Task<Void, Never>?
        /// Released: no more deletes.
        var stopping = false
    }

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
        // The router calls this as its task is cancelled (hubd stopping): the queries must not be.
        await uncancelled { await self.releaseNow() }
    }

    private func releaseNow() async {
        // The marks still waiting are written first: a row released while delivered would be sent again.
        let flushing = done.withLock { done -> Task<Void, Never>? in
            done.stopping = true
            return done.task
        }
        await flushing?.value
        _ = await delete(
            done.withLock { done in
                defer { done.keys = [] }
                return done.keys
            })
        do {
            try await database.release()
            logger.info("released this agent's claims on notifications")
        } catch {
            logger.warning(
                "could not release this agent's claims on notifications; others take them once they run out",
                metadata: ["error": "\(error)", "visibility": "\(database.visibility)"])
        }
        await database.close()
    }

    func markDone(_ keys: [String]) async {
        guard !keys.isEmpty, !(await delete(keys)) else { return }
        flushSoon()
    }

    /// Deletes at once; marks made while a delete runs go in the next one (no waiting: a mark not yet written when
    /// the agent dies is a notification sent again by another agent).
    func markDoneLater(_ key: String) {
        done.withLock { $0.keys.append(key) }
        flushSoon()
    }

    /// Deletes `keys`; when that fails they wait for the next delete (still claimed by this agent, renewed with its
    /// other claims). Returns whether it worked.
    private func delete(_ keys: [String]) async -> Bool {
        guard !keys.isEmpty else { return true }
        do {
            try await database.delete(keys)
            return true
        } catch {
            logger.error(
                "could not mark notifications done in the cluster's outbox; trying again",
                metadata: ["error": "\(error)", "count": "\(keys.count)"])
            done.withLock { $0.keys += keys }
            return false
        }
    }

    /// Starts the task that writes the waiting marks, unless it runs: one delete after another while marks wait,
    /// a second between attempts that fail, until hubd stops.
    private func flushSoon() {
        done.withLock { done in
            guard done.task == nil, !done.stopping else { return }
            done.task = Task {
                while true {
                    let keys = self.done.withLock { done -> [String]? in
                        guard !done.keys.isEmpty, !done.stopping else {
                            done.task = nil
                            return nil
                        }
                        defer { done.keys = [] }
                        return done.keys
                    }
                    guard let keys else { return }
                    if !(await self.delete(keys)) { try? await Task.sleep(for: .seconds(1)) }
                }
            }
        }
    }
}
