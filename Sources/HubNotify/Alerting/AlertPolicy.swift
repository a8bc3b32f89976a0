import HubCore
import HubSupport

/// How a rule's events become alerts and when they are sent (its `group_by`, `group_wait`, `repeat`, `escalate`,
/// `quiet_hours`). A rule without one sends each event as it comes, as it always did.
public struct AlertPolicy: Sendable, Hashable {
    /// What splits the rule's alerts into groups, one message each: `kind`, `sensor`, `status`, or a sensor's label
    /// or attribute (`room`, `gateway`); all of the rule's alerts are one group when empty.
    public var groupBy: [String] = []
    /// How long a new group waits before its first message: an alert that opens and closes within it sends nothing.
    public var groupWait: Duration = .seconds(30)
    /// How long after a group's message the next one may say what changed.
    public var groupInterval: Duration = .seconds(300)
    /// Reminders while an alert is firing and nobody acknowledged it: the gaps, the last one repeating.
    public var repeatEvery: [Duration] = []
    /// At most this many reminders per group.
    public var repeatLimit = 10
    /// Steps to other backends after a while without an acknowledgement, each once per alert.
    public var escalate: [Escalation] = []
    /// Names of `alerts.quiet_hours` windows in which the rule's messages below `urgent` wait for a digest.
    public var quietHours: [String] = []

    public struct Escalation: Sendable, Hashable {
        public var after: Duration
        public var backends: [String]
        public init(after: Duration, backends: [String]) {
            self.after = after
            self.backends = backends
        }
    }

    public init() {}

    /// The gap before reminder number `index` (0 is the first).
    func reminderGap(_ index: Int) -> Duration? {
        guard !repeatEvery.isEmpty, index < repeatLimit else { return nil }
        return repeatEvery[min(index, repeatEvery.count - 1)]
    }
}

/// What an event does to a rule's alerts.
enum AlertRole: Equatable {
    /// Opens (or keeps open) the alert of this kind.
    case opens(String)
    /// Closes the alert of this kind, when one is open.
    case closes(String)
    /// News with no pair (a `changed` event under a rule that names no statuses): grouped, silenced and kept for
    /// quiet hours like an alert, but nothing to resolve.
    case notice
}

extension NotificationRule {
    /// What `event` does to this rule's alerts; `nil` when it is none of the rule's business.
    func role(of event: SensorEvent) -> AlertRole? {
        guard event.kind != .test, glob(anyOf: sensors, event.sensor) else { return nil }
        let takes = { (kind: SensorEvent.Kind) in events.isEmpty ? kind.isTakenByDefault : events.contains(kind) }
        switch event.kind {
        case .silent, .offline:
            return takes(event.kind) ? .opens("offline") : nil
        case .recovered:
            if takes(.silent) || takes(.offline) { return .closes("offline") }
            return takes(.recovered) && glob(anyOf: statuses, event.newStatus) ? .notice : nil
        case .threshold, .airQuality:
            guard takes(event.kind) else { return nil }
            return event.newStatus == "alert" ? .opens(event.kind.rawValue) : .closes(event.kind.rawValue)
        case .changed where !statuses.isEmpty:
            guard takes(.changed) else { return nil }
            return glob(anyOf: statuses, event.newStatus) ? .opens("status") : .closes("status")
        default:
            return matches(event) ? .notice : nil
        }
    }
}
