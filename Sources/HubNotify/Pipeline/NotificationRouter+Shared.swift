import Foundation
import HubCore
import HubSupport
import Logging

/// Where a backend's queue marks notifications done: the outbox file, or a cluster's outbox.
public protocol NotificationLedger: Sendable {
    /// Marks `keys` done (delivered, failed for good, dropped or expired).
    func markDone(_ keys: [String]) async
    /// Marks `key` done without waiting (a delivery: losing the mark means a duplicate, nothing worse).
    func markDoneLater(_ key: String)
}

extension Outbox: NotificationLedger {}

/// A cluster's outbox (docs/cluster.md; HubAgent adapts PostgreSQL's): the ingest step writes an event's
/// notifications with the event, and every agent claims due ones for its backends, one agent at a time.
public protocol SharedOutbox: NotificationLedger {
    /// Writes notifications made outside an ingest step (a test notification).
    func add(_ notifications: [Notification]) async throws
    /// Claims up to `limit` due notifications for `backend`, oldest first.
    func claim(limit: Int, backend: String) async throws -> [Notification]
    /// Keeps this agent's claims (every `renewal`).
    func renew() async throws
    var renewal: Duration { get }
    /// Gives up this agent's claims (it is stopping).
    func release() async
}

extension NotificationRouter {
    /// Tells the router that the shared outbox has new rows (this agent committed events): claimed at once rather
    /// than at the next poll.
    public func sharedOutboxChanged() {
        sharedDoorbell.ring()
    }

    /// `deliver` in a cluster: the queues take what this agent claims from the shared outbox (as much as each has
    /// room for, at once when rung, else every quarter second), claims are renewed while held, and released when
    /// hubd stops, so another agent takes them without waiting for them to run out.
    func deliverShared(_ shared: any SharedOutbox) async {
        await withTaskGroup(of: Void.self) { group in
            for queue in queues.values {
                group.addTask { await queue.run() }
            }
            group.addTask { await self.routeUntilCancelled() }
            group.addTask { await self.claim(from: shared) }
            group.addTask { await self.renewClaims(shared) }
            if let book = sharedAlerts {
                group.addTask {
                    await self.takeSharedKey(book)
                    await self.followSharedAlerts(book)
                }
            }
            // Each ends once the service is cancelled (graceful shutdown).
        }
        // What was submitted but not routed yet (a test notification) goes to the cluster's outbox, as in one hub
        // it goes to the file.
        await routePass(durableOnly: true)
        await shared.release()
    }

    /// Renews this agent's claims every `renewal`. When two renewals in a row have failed, the claims may be running
    /// out (they last three renewals, by the server's clock): what waits in the queues is dropped, so that this
    /// agent and another that claims them once they have run out do not both send them. They stay in the outbox.
    private func renewClaims(_ shared: any SharedOutbox) async {
        var renewed = ContinuousClock.now
        while !Task.isCancelled {
            try? await Task.sleep(for: shared.renewal)
            guard !Task.isCancelled else { return }
            let sent = ContinuousClock.now
            do {
                try await shared.renew()
                renewed = sent
            } catch {
                logger.error("could not renew this agent's claims on notifications", metadata: ["error": "\(error)"])
                guard ContinuousClock.now - renewed >= shared.renewal * 2 else { continue }
                let dropped = queues.values.reduce(0) { $0 + $1.dropWaiting() }
                if dropped > 0 {
                    logger.warning(
                        "this agent's claims on notifications may have run out: left them to be claimed again",
                        metadata: ["notifications": "\(dropped)"])
                }
            }
        }
    }

    private func claim(from shared: any SharedOutbox) async {
        var failures = LogThrottle()
        while !Task.isCancelled {
            var claimed = 0
            for (name, queue) in queues {
                let room = min(500, queue.policy.capacity - queue.statistics.queued)
                guard room > 0 else { continue }
                do {
                    let notifications = try await shared.claim(limit: room, backend: name)
                    claimed += notifications.count
                    if !notifications.isEmpty { queue.enqueue(notifications) }
                } catch {
                    if let count = failures.note() {
                        logger.error(
                            "could not claim notifications from the cluster's outbox",
                            metadata: ["error": "\(error)", "times_since_last_report": "\(count)"])
                    }
                }
            }
            if claimed == 0 { await sharedDoorbell.wait(until: .now + .milliseconds(250)) }
        }
    }

    /// `route`'s last step in a cluster: the notifications go to the shared outbox, and its claims deliver them.
    func add(_ notifications: [Notification], to shared: any SharedOutbox, through position: Int?) async {
        do {
            try await shared.add(notifications)
            sharedDoorbell.ring()
        } catch {
            inbox.withLock { $0.counters.outboxErrors += 1 }
            logger.error(
                "cannot write the cluster's outbox; these notifications are lost",
                metadata: ["error": "\(error)", "count": "\(notifications.count)"])
        }
        if let position { progress?(position) }
    }
}

extension Outbox {
    /// A notification as the outbox file writes it (`{"add":{…}}`): a cluster's outbox keeps the same text.
    public static func text(_ notification: Notification) -> String {
        String(decoding: line(notification), as: UTF8.self)
    }

    /// The notification `text(_:)` wrote; nil when the text can't be read as one.
    public static func notification(fromText text: String) -> Notification? {
        try? JSONDecoder().decode(Entry.self, from: Data(text.utf8)).add
    }
}
