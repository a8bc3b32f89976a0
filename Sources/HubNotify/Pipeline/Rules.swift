import Foundation
import HubCore
import HubSupport

/// Which events go to which backends, and how they read: one entry of `notifiers.rules`.
public struct NotificationRule: Sendable {
    public var name: String
    /// The kinds of event it takes; when empty, those taken by default (all but `session`).
    public var events: Set<SensorEvent.Kind> = []
    /// Sensor names or globs (`door*`, `*-temp`), matched regardless of case; all sensors when empty.
    public var sensors: [String] = []
    /// Globs on the new status (`open`, `alarm*`); any status when empty.
    public var statuses: [String] = []
    /// Backend names.
    public var backends: [String]
    public var title: Template?
    public var body: Template?
    /// 1 (min) to 5 (urgent).
    public var priority: Int = 3
    /// At most one notification per sensor in this long; the rest are suppressed (logged and counted).
    public var rateLimit: Duration?
    /// How its events become alerts (grouped, silenced, quiet at night, repeated); `nil`: each event is sent as it
    /// comes.
    public var alerting: AlertPolicy?

    public init(name: String, backends: [String]) {
        self.name = name
        self.backends = backends
    }

    /// Whether `event` is one this rule sends.
    public func matches(_ event: SensorEvent) -> Bool {
        if event.kind == .test { return true }
        if events.isEmpty ? !event.kind.isTakenByDefault : !events.contains(event.kind) { return false }
        return glob(anyOf: sensors, event.sensor) && glob(anyOf: statuses, event.newStatus)
    }

    /// The rendered title and message for `event`.
    public func render(_ event: SensorEvent, id: String) -> (title: String, body: String) {
        let defaults = Template.defaults(for: event.kind)
        return ((title ?? defaults.title).render(event, id: id), (body ?? defaults.body).render(event, id: id))
    }
}

/// Per-rule, per-sensor rate limits: at most one notification per interval.
struct RateLimiter: Sendable {
    /// When each rule and sensor last let one through, with that rule's limit (for pruning) and the event's id.
    private var last: [String: (time: ContinuousClock.Instant, limit: Duration, event: String)] = [:]

    /// Whether a notification for `sensor` under `rule` may go now; records it when it may. The event the limit
    /// last let through is let through again (`event`, its id): a cluster's step that failed after the router made
    /// its notifications is tried again with the same events.
    mutating func allow(
        rule: NotificationRule, sensor: String, event: String = "", now: ContinuousClock.Instant = .now
    ) -> Bool {
        guard let limit = rule.rateLimit else { return true }
        let key = rule.name + "\u{0}" + sensor
        if let previous = last[key], now - previous.time < limit {
            return !event.isEmpty && previous.event == event
        }
        last[key] = (now, limit, event)
        // Forget what no longer limits anything, each entry by its own rule's limit.
        if last.count > 10_000 { last = last.filter { now - $0.value.time < $0.value.limit } }
        return true
    }
}
