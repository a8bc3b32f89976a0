import HubCore
import HubSupport

/// The hub's alerts and what to send about them, as a value with no I/O: events and the clock go in, messages come
/// out (`AlertBook+Pipeline.swift`, a file per stage), and it is saved as it is, by what changed (`AlertBook+Change`,
/// `AlertLedger`).
///
/// The stages, in the order a message meets them (as Alertmanager's `notify/` pipeline): dependencies (a child's
/// offline alert waits while its parent is offline) → quiet hours → silences → grouping (wait, interval, storm
/// guard) → reminders and escalation. An alert opens on one event and closes on its pair
/// (`NotificationRule.role(of:)`); its id is its rule, sensor and kind, so the same trouble is one alert however
/// often it is reported.
public struct AlertBook: Sendable, Codable {
    /// Open alerts, and resolved ones whose resolved message is still to go, by id.
    public internal(set) var alerts: [String: Alert] = [:]
    var groups: [String: Group] = [:]
    public internal(set) var silences: [Silence] = []
    /// Sensors offline now, as their events said (only parents, when `Setup.parents` says which): the parents whose
    /// children's alerts wait.
    var offline: Set<String> = []
    /// Rules in quiet hours, with what waits for their digest.
    var quiet: [String: QuietSpell] = [:]
    /// Backends in quiet hours, with what they missed.
    var quietBackends: [String: MissedSpell] = [:]
    /// Each sensor's last event taken (its id's sequence) and when: an event the journal hands over again after a
    /// crash is not taken twice. Kept an hour, far longer than the journal holds what it has handed on.
    var taken: [String: Taken] = [:]
    /// What each message's buttons and links act on, by the message's handle (`ActionToken.handle(of:)`).
    public internal(set) var links: [String: Link] = [:]
    /// Silences added, ended or snoozes taken, to be announced at the next tick (`AlertBook+Announcements`).
    var announcements: [Announcement] = []
    /// Changes (events taken) by the second they came in, over the last storm window: how a storm is recognised
    /// over time (`AlertBook+Storm`).
    var recent: [Int64: Int] = [:]
    public internal(set) var counters = Counters()
    /// Counts the changes, so that the ledger writes the book only after one (not kept in the file).
    public internal(set) var revision = 0
    /// Random, made with the book and kept with it: every message key (and so every link's handle) carries it, so
    /// a book lost or unreadable and begun again never makes a key the outbox already holds as sent (a later alert
    /// silently dropped) nor a handle a used link names (a used link working again). Empty in a book an earlier
    /// version began: its keys stay as they were.
    public internal(set) var epoch: String
    /// When this book was begun in place of one lost or unreadable, and what became of that one.
    public internal(set) var reset: Reset?

    /// A new book, with an epoch of its own.
    public init(epoch: String = AlertBook.newEpoch()) {
        self.epoch = epoch
    }

    /// 8 random hex digits: two books of one hub share one with a chance of 1 in 4 billion.
    public static func newEpoch() -> String {
        String(format: "%08x", UInt32.random(in: 0...UInt32.max))
    }

    /// A book begun in place of one that was lost or could not be read.
    public struct Reset: Sendable, Hashable, Codable {
        public var at: Timestamp
        /// Why, in words: "alerts.json could not be read: …", "alerts.json was missing".
        public var reason: String
        /// Where the unreadable file was kept, if it was.
        public var keptAs: String?
        /// How many times this hub's book was begun again, this one included.
        public var count: Int

        public init(at: Timestamp, reason: String, keptAs: String?, count: Int) {
            (self.at, self.reason, self.keptAs, self.count) = (at, reason, keptAs, count)
        }
    }

    /// Marks the book as begun in place of a lost one.
    public mutating func markReset(_ reset: Reset) {
        self.reset = reset
        revision += 1
    }

    /// The alerts a message's buttons act on, until the token expires; a token is used once.
    public struct Link: Sendable, Hashable, Codable {
        public var alerts: [String]
        public var expires: Timestamp
        /// Who used it, how and when: a second use is refused.
        public var used: Acknowledgement?
    }

    /// Whether it holds nothing at all (a hub with no alerting rule and no silence).
    public var isEmpty: Bool {
        alerts.isEmpty && groups.isEmpty && silences.isEmpty && offline.isEmpty && quiet.isEmpty && taken.isEmpty
            && links.isEmpty && quietBackends.isEmpty && announcements.isEmpty
    }

    public struct Alert: Sendable, Hashable, Codable {
        public var id: String
        public var rule: String
        public var sensor: String
        /// `offline`, `threshold`, `air_quality` or `status`.
        public var kind: String
        public var group: String
        public var firing: Bool
        /// The event that opened it (or, once resolved, closed it).
        public var event: SensorEvent
        public var opened: Timestamp
        public var resolved: Timestamp?
        public var acknowledged: Acknowledgement?
        /// The backends told it is firing: a resolved message goes to these and no others.
        public var told: [String] = []
        /// When it was first told.
        public var notified: Timestamp?
        /// The parent whose being offline holds it back.
        public var heldBy: String?
        /// How many escalation steps it has taken.
        public var escalated = 0
        var labels: [String: String] = [:]

        /// Firing, not sent yet, held by no parent and acknowledged by nobody (someone who acknowledged an alert
        /// before its first message knows of it already).
        var waitsToBeSent: Bool { firing && told.isEmpty && heldBy == nil && acknowledged == nil }

        var fields: AlertFields {
            AlertFields(rule: rule, sensor: sensor, kind: kind, status: event.newStatus, labels: labels)
        }
    }

    public struct Acknowledgement: Sendable, Hashable, Codable {
        public var by: String
        public var at: Timestamp
        /// Where it came from: `hubctl`, `api`, `ntfy`, `telegram`…
        public var via: String
        public init(by: String, at: Timestamp, via: String) {
            self.by = by
            self.at = at
            self.via = via
        }
    }

    struct Group: Sendable, Hashable, Codable {
        var key: String
        var rule: String
        /// Alert ids, in the order they joined.
        var members: [String] = []
        /// Events with no pair, waiting for the next message.
        var notices: [SensorEvent] = []
        /// When its next message is due; `nil` when nothing waits.
        var due: Timestamp?
        var lastSent: Timestamp?
        var sent = 0
        var reminders = 0
        var nextReminder: Timestamp?
        /// Set when the last of its told alerts was acknowledged: the copies on phones are to be taken back.
        var takeBack: Acknowledgement?
        /// An outage's group (`AlertBook+Storm`): the storm's alerts, told as one.
        var outage: Outage?
        /// When it was first held back while other groups changed (a storm gathering): held at most a storm window.
        var heldSince: Timestamp?
    }

    struct QuietSpell: Sendable, Hashable, Codable {
        var until: Timestamp
        var notices: [SensorEvent] = []
    }

    /// What a backend in quiet hours did not get: the alerts its held messages were about (id → sensor).
    struct MissedSpell: Sendable, Hashable, Codable {
        var until: Timestamp
        var alerts: [String: String] = [:]
        var notices: [SensorEvent] = []
    }

    struct Taken: Sendable, Hashable, Codable {
        var sequence: Int
        var at: Timestamp
    }

    public struct Counters: Sendable, Hashable, Codable {
        /// Alerts that opened and closed within `group_wait`: nothing sent.
        public var flapped = 0
        /// Child alerts that closed while their parent held them: nothing sent.
        public var heldAndClosed = 0
        /// Events and alerts a silence kept back.
        public var silenced = 0
        /// Messages sent, and how many of them were outage messages of the storm guard.
        public var messages = 0
        public var outages = 0
        /// Events handed over again after a crash, already taken.
        public var replayed = 0
        public init() {}
    }

    // MARK: - Events

    /// Takes events as they come; what they make is sent by `tick`, after each group's wait.
    public mutating func apply(_ events: [SensorEvent], _ setup: Setup, now: Timestamp) {
        for event in events where event.kind != .test {
            let roles = setup.rules.values.compactMap { rule in rule.role(of: event).map { (rule, $0) } }
            guard Self.takes(event, hasRole: !roles.isEmpty) else { continue }
            if let (sensor, sequence) = Self.sequence(of: event.id) {
                if let last = taken[sensor], last.sequence >= sequence {
                    counters.replayed += 1
                    continue
                }
                taken[sensor] = Taken(sequence: sequence, at: now)
            }
            revision += 1
            if !roles.isEmpty { noteChange(now: now) }
            followParents(event, setup, now: now)
            for (rule, role) in roles {
                guard let policy = rule.alerting else { continue }
                switch role {
                case .opens(let kind): open(event, kind: kind, rule: rule, policy, setup, now: now)
                case .closes(let kind): close(event, kind: kind, rule: rule, policy, now: now)
                case .notice:
                    let fields = AlertFields(
                        rule: rule.name, sensor: event.sensor, kind: event.kind.rawValue, status: event.newStatus,
                        labels: setup.facts(event.sensor).labels)
                    if silences.contains(where: { $0.silences(fields, at: now) }) {
                        counters.silenced += 1
                        continue
                    }
                    let key = groupKey(rule, policy, fields)
                    var group = groups[key] ?? Group(key: key, rule: rule.name)
                    group.notices.append(event)
                    schedule(&group, policy, now: now)
                    groups[key] = group
                }
            }
        }
    }

    /// Whether `event` may change the book: a steady flow of statuses no alerting rule is about writes nothing (and
    /// in a cluster is not queued for the book's keeper).
    public static func takes(_ event: SensorEvent, _ setup: Setup) -> Bool {
        takes(event, hasRole: setup.rules.values.contains { $0.role(of: event) != nil })
    }

    /// `takes` once the rules' roles are known: an event some rule opens or closes an alert with, or one a sensor's
    /// children depend on (going silent or offline, coming back).
    private static func takes(_ event: SensorEvent, hasRole: Bool) -> Bool {
        event.kind != .test && (hasRole || [.silent, .offline, .recovered].contains(event.kind))
    }

    /// A sensor's event id is `<sensor id>-<sequence>` (`SensorEvent.id(sensor:sequence:)`).
    static func sequence(of id: String) -> (String, Int)? {
        guard let dash = id.lastIndex(of: "-"), let sequence = Int(id[id.index(after: dash)...]) else { return nil }
        return (String(id[..<dash]), sequence)
    }

    public static func alertID(rule: String, sensor: String, kind: String) -> String { "\(rule)/\(sensor)/\(kind)" }

    private mutating func open(
        _ event: SensorEvent, kind: String, rule: NotificationRule, _ policy: AlertPolicy, _ setup: Setup,
        now: Timestamp
    ) {
        let id = Self.alertID(rule: rule.name, sensor: event.sensor, kind: kind)
        if var alert = alerts[id] {
            alert.event = event
            if !alert.firing {
                // Back before its resolved message went: as if it never closed.
                alert.firing = true
                alert.resolved = nil
            }
            alerts[id] = alert
            return
        }
        let labels = setup.facts(event.sensor).labels
        var fields = AlertFields(rule: rule.name, sensor: event.sensor, kind: kind, status: event.newStatus)
        fields.labels = labels
        var alert = Alert(
            id: id, rule: rule.name, sensor: event.sensor, kind: kind, group: groupKey(rule, policy, fields),
            firing: true, event: event, opened: now)
        alert.labels = labels
        if kind == "offline", let parent = offlineAncestor(of: event.sensor, setup) {
            alert.heldBy = parent
            alerts[id] = alert
            return
        }
        alerts[id] = alert
        join(alert, policy, now: now)
    }

    private mutating func close(
        _ event: SensorEvent, kind: String, rule: NotificationRule, _ policy: AlertPolicy, now: Timestamp
    ) {
        let id = Self.alertID(rule: rule.name, sensor: event.sensor, kind: kind)
        guard var alert = alerts[id], alert.firing else { return }
        if alert.heldBy != nil {
            counters.heldAndClosed += 1
            alerts[id] = nil
            return
        }
        guard !alert.told.isEmpty else {
            // Never told: nothing to take back.
            counters.flapped += 1
            drop(id)
            return
        }
        alert.firing = false
        alert.resolved = now
        alert.event = event
        alerts[id] = alert
        if var group = groups[alert.group] {
            schedule(&group, policy, now: now)
            groups[alert.group] = group
        }
    }

    /// Puts `alert` in its group and says when the group sends.
    mutating func join(_ alert: Alert, _ policy: AlertPolicy, now: Timestamp) {
        var group = groups[alert.group] ?? Group(key: alert.group, rule: alert.rule)
        if !group.members.contains(alert.id) { group.members.append(alert.id) }
        schedule(&group, policy, now: now)
        groups[alert.group] = group
    }

    /// A new group sends after `group_wait`; one that has sent, `group_interval` after its last message and no
    /// sooner than `group_wait` after the change, so that what comes with it goes in the same message (forty
    /// sensors back a second apart, long after the outage's message, are one "40 sensors back", not "s01 is back"
    /// and then the rest).
    private func schedule(_ group: inout Group, _ policy: AlertPolicy, now: Timestamp) {
        let gathered = now.adding(policy.groupWait)
        let due = group.lastSent.map { max(gathered, $0.adding(policy.groupInterval)) } ?? gathered
        group.due = min(group.due ?? due, due)
    }

    func groupKey(_ rule: NotificationRule, _ policy: AlertPolicy, _ fields: AlertFields) -> String {
        ([rule.name] + policy.groupBy.map { "\($0)=\(fields[$0] ?? "")" }).joined(separator: ",")
    }

    mutating func drop(_ id: String) {
        guard let alert = alerts.removeValue(forKey: id) else { return }
        guard var group = groups[alert.group] else { return }
        group.members.removeAll { $0 == id }
        groups[alert.group] = group.members.isEmpty && group.notices.isEmpty ? nil : group
    }
}

extension Timestamp {
    func adding(_ duration: Duration) -> Timestamp {
        let (seconds, attoseconds) = duration.components
        return adding(milliseconds: seconds * 1000 + attoseconds / 1_000_000_000_000_000)
    }
}
