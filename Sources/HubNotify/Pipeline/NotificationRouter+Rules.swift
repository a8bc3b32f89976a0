import HubCore

// What events make: the rules that match each, their rate limits, and a notification per backend (and device).
extension NotificationRouter {
    /// What `events` make: the rules that match each, their rate limits (suppressed ones logged and counted), the
    /// rendered text, and a notification per backend (and device) the rule names. Synchronous: the router runs it on
    /// the pipeline's executor.
    public func notifications(for events: [SensorEvent]) -> [Notification] {
        let matched = matches(for: events)
        let allowed = inbox.withLock { inbox in
            matched.map { rule, event in
                !Self.isLimited(rule, event) || inbox.limiter.allow(rule: rule, sensor: event.sensor, event: event.id)
            }
        }
        return render(matched, allowed: allowed)
    }

    /// `notifications(for:)` with the rate limits kept elsewhere: `allow` says whether a rule with a `rate_limit`
    /// lets an event through (and records it when it does); a cluster's are in its database (`RateLimits`).
    public func notifications(
        for events: [SensorEvent], allow: (NotificationRule, SensorEvent) async throws -> Bool
    ) async rethrows -> [Notification] {
        let matched = matches(for: events)
        var allowed: [Bool] = []
        allowed.reserveCapacity(matched.count)
        for (rule, event) in matched {
            allowed.append(Self.isLimited(rule, event) ? try await allow(rule, event) : true)
        }
        return render(matched, allowed: allowed)
    }

    /// Whether `rule`'s rate limit has a say on `event` (a test notification always goes).
    private static func isLimited(_ rule: NotificationRule, _ event: SensorEvent) -> Bool {
        event.kind != .test && rule.rateLimit != nil
    }

    /// The rules without alerting that each of `events` matches and no silence holds back, in order (a rule with
    /// alerting sends through the alert book: `alertNotifications`, in a cluster its keeper's).
    private func matches(for events: [SensorEvent]) -> [(NotificationRule, SensorEvent)] {
        let (configuration, alertSetup) = setup.withLock { ($0.configuration, $0.alerts) }
        let now = Timestamp.now
        let silences = alerts.update { $0.silences }
        var matched: [(NotificationRule, SensorEvent)] = []
        for event in events {
            for rule in configuration.rules where rule.matches(event) && rule.alerting == nil {
                if event.kind != .test, isSilenced(event, rule: rule, silences: silences, setup: alertSetup, now: now) {
                    continue
                }
                matched.append((rule, event))
            }
        }
        return matched
    }

    /// A notification per backend (and device) for each of `matched` its rate limit allowed; those it held back are
    /// logged and counted.
    private func render(_ matched: [(NotificationRule, SensorEvent)], allowed: [Bool]) -> [Notification] {
        let queues = setup.withLock { $0.queues }
        let suppressed = zip(matched, allowed).filter { !$0.1 }.map(\.0)
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
        for ((rule, event), allowed) in zip(matched, allowed) where allowed {
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
                    let copies = try queue.notifier.expand(notification)
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
