import HubCore

// What events make: the rules that match each, their rate limits, and a notification per backend (and device).
extension NotificationRouter {
    /// What `events` make: the rules that match each, their rate limits (suppressed ones logged and counted), the
    /// rendered text, and a notification per backend (and device) the rule names.
    public func notifications(for events: [SensorEvent]) async -> [Notification] {
        await notifications(for: events) { rule, event in
            self.inbox.withLock { $0.limiter.allow(rule: rule, sensor: event.sensor, event: event.id) }
        }
    }

    /// `notifications(for:)` with the rate limits kept elsewhere: `allow` says whether a rule with a `rate_limit`
    /// lets an event through (and records it when it does); a cluster's are in its database (`RateLimits`).
    public func notifications(
        for events: [SensorEvent], allow: (NotificationRule, SensorEvent) async throws -> Bool
    ) async rethrows -> [Notification] {
        let (configuration, queues, alertSetup) = setup.withLock { ($0.configuration, $0.queues, $0.alerts) }
        var batch: [(NotificationRule, SensorEvent)] = []
        var suppressed: [(NotificationRule, SensorEvent)] = []
        let now = Timestamp.now
        let silences = alerts.update { $0.silences }
        for event in events {
            // A rule with alerting sends through the alert book (`alertNotifications`; in a cluster its keeper's).
            for rule in configuration.rules where rule.matches(event) && rule.alerting == nil {
                if event.kind != .test, isSilenced(event, rule: rule, silences: silences, setup: alertSetup, now: now) {
                    continue
                }
                var allowed = true
                if event.kind != .test && rule.rateLimit != nil { allowed = try await allow(rule, event) }
                if allowed { batch.append((rule, event)) } else { suppressed.append((rule, event)) }
            }
        }
        if !suppressed.isEmpty { inbox.withLock { $0.counters.suppressed += suppressed.count } }
        for (rule, event) in suppressed {
            logger.info(
                "notification suppressed by the rate limit",
                metadata: [
                    "rule": "\(rule.name)", "sensor": "\(event.sensor)", "status": "\(event.newStatus)",
                    "rate_limit": "\(rule.rateLimit.map(DurationText.format) ?? "")",
                ])
        }
        var notifications: [Notification] = []
        var routed = Set<String>()
        var ids: [SensorEvent: String] = [:]
        for (rule, event) in batch {
            let id = ids[event] ?? (event.id.isEmpty ? SensorEvent.randomID() : event.id)
            ids[event] = id
            let (title, body) = rule.render(event, id: id)
            for backend in rule.backends {
                guard let queue = queues[backend] else { continue }
                let notification = Notification(
                    id: id, backend: backend, rule: rule.name, event: event, title: title, body: body,
                    priority: rule.priority)
                // Two rules sending one event to one backend: once is enough.
                guard routed.insert(notification.key).inserted else { continue }
                do {
                    let copies = try await queue.notifier.expand(notification)
                    if copies.isEmpty {
                        logger.debug(
                            "no device chose the event",
                            metadata: ["backend": "\(backend)", "sensor": "\(event.sensor)", "id": "\(id)"])
                    }
                    notifications += copies
                } catch {
                    queue.noRecipients(notification, reason: "\(error)")
                }
            }
        }
        return notifications
    }
}
