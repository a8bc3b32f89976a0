import HubCore

extension NotificationRouter {
    /// Queues what the outbox file still holds from before.
    func resendFromBefore() async {
        do {
            let pending = try await outbox.open()
            let unreadable = outbox.unreadableLines
            inbox.withLock { $0.counters.outboxUnreadable = unreadable }
            if unreadable > 0 {
                logger.warning(
                    "skipped unreadable outbox lines", metadata: ["lines": "\(unreadable)", "path": "\(outbox.path)"])
            }
            if !pending.isEmpty {
                logger.notice("resending notifications left from before", metadata: ["count": "\(pending.count)"])
            }
            var byBackend: [String: [Notification]] = [:]
            for notification in pending { byBackend[notification.backend, default: []].append(notification) }
            for (backend, notifications) in byBackend {
                if let queue = queues[backend] {
                    queue.enqueue(notifications)
                } else {
                    logger.warning(
                        "dropping notifications for a backend that is no longer configured",
                        metadata: ["backend": "\(backend)", "count": "\(notifications.count)"])
                    await outbox.markDone(notifications.map(\.key))
                }
            }
        } catch {
            logger.error(
                "cannot open the outbox; notifications will not survive a restart", metadata: ["error": "\(error)"])
        }
    }
}
