import Foundation
import HubCore

// Silences announced (issue 51): nobody silences the alarms unseen. A silence added, one ended early and a snooze
// taken from a phone each become one message, "ana silenced door* for 2 h — painting", to the backends its alerts
// would reach (every rule's the silence could hold, escalation steps included), or to `alerts.announce`. Alertmanager
// does not do this; a household needs it: a silence is the hardest way to make the alarm quiet, so it is the one
// everybody should hear about.
extension AlertBook {
    struct Announcement: Sendable, Hashable, Codable {
        enum What: String, Sendable, Hashable, Codable {
            case added, ended, snoozed
        }

        var what: What
        var silence: Silence
        var by: String
        var at: Timestamp
        /// A snooze's alerts, by id.
        var alerts: [String] = []
    }

    /// Notes a silence to announce at the next tick.
    mutating func announce(
        _ what: Announcement.What, _ silence: Silence, by: String, at: Timestamp, alerts: [String] = []
    ) {
        announcements.append(Announcement(what: what, silence: silence, by: by, at: at, alerts: alerts))
        revision += 1
    }

    /// The backends a silence could hold messages for: `alerts.announce` when set, else those of every rule whose
    /// name its `rule` matchers let through (its other matchers depend on sensors that may come later: every rule
    /// is assumed to be concerned), escalation steps' included.
    func announcementBackends(_ silence: Silence, _ setup: Setup) -> [String] {
        if let configured = setup.announce { return configured }
        let ruleMatchers = silence.matchers.filter { $0.name == "rule" }
        var backends: [String] = []
        for (name, ruleBackends) in setup.ruleBackends.sorted(by: { $0.key < $1.key }) {
            let fields = AlertFields(rule: name, sensor: "", kind: "", status: "")
            guard ruleMatchers.allSatisfy({ $0.matches(fields) }) else { continue }
            var all = ruleBackends
            for step in setup.rules[name]?.alerting?.escalate ?? [] { all += step.backends }
            for backend in all where !backends.contains(backend) { backends.append(backend) }
        }
        return backends
    }

    /// The announcements due, as messages; none is kept after.
    mutating func announcementMessages(_ setup: Setup, now: Timestamp) -> [AlertMessage] {
        defer { announcements = [] }
        return announcements.compactMap { announcement in
            let backends = announcementBackends(announcement.silence, setup)
            guard !backends.isEmpty else { return nil }
            let silence = announcement.silence
            let matchers = Self.spoken(silence.matchers)
            let (title, body) = Self.words(announcement, alerts: announcement.alerts.compactMap { alerts[$0]?.sensor })
            let event = SensorEvent(
                id: "silence-\(silence.id)-\(announcement.what.rawValue)", kind: .silence, sensor: matchers,
                topic: "", oldStatus: "", newStatus: announcement.what.rawValue, time: announcement.at)
            return AlertMessage(
                key: "silence:\(silence.id):\(announcement.what.rawValue)", group: "silence-\(silence.id)",
                rule: "silences", reason: .silence, backends: backends, title: title, body: body,
                priority: Self.announcementPriority, event: event, alerts: announcement.alerts)
        }
    }

    /// Low: seen on the phone, no alarm sound (it is news about the alarms, not one).
    static let announcementPriority = 2

    /// What an announcement says: "ana silenced door* for 2 h — painting", "ana ended the silence on door*",
    /// "ben snoozed kitchen leak for 1 h".
    static func words(_ announcement: Announcement, alerts sensors: [String]) -> (title: String, body: String) {
        let silence = announcement.silence
        let matchers = spoken(silence.matchers)
        let comment = silence.comment.isEmpty ? "" : " — \(silence.comment)"
        let from = max(silence.startsAt, announcement.at)
        let length = spoken(silence.endsAt.millisecondsSince1970 - from.millisecondsSince1970)
        switch announcement.what {
        case .added:
            let starts =
                silence.startsAt.millisecondsSince1970 > announcement.at.millisecondsSince1970 + 60_000
                ? " from \(clock(silence.startsAt, now: announcement.at))" : ""
            return (
                "\(announcement.by) silenced \(matchers)\(starts) for \(length)\(comment)",
                "Until \(clock(silence.endsAt, now: announcement.at)): alerts it matches are not sent meanwhile. "
                    + "hubctl silences expire \(silence.id) (or the alerts page) ends it."
            )
        case .ended:
            return (
                "\(announcement.by) ended the silence on \(matchers)",
                "It was to last until \(clock(silence.endsAt, now: announcement.at))\(comment); alerts it held are "
                    + "sent again."
            )
        case .snoozed:
            let what = sensors.isEmpty ? matchers : names(sensors)
            return (
                "\(announcement.by) snoozed \(what) for \(length)",
                "Until \(clock(silence.endsAt, now: announcement.at)): its reminders wait; it is still open."
            )
        }
    }

    /// Matchers as a person reads them: a sensor glob alone (`door*`), the others as written (`room=garage`).
    static func spoken(_ matchers: [Silence.Matcher]) -> String {
        matchers.map { $0.name == "sensor" && $0.operation == .equal ? $0.value : $0.description }
            .joined(separator: " ")
    }

    /// A length as a person says it: "45 s", "1 min 30 s", "10 min", "2 h", "1 h 30 min", "3 days".
    static func spoken(_ milliseconds: Int64) -> String {
        let seconds = max(0, (milliseconds + 500) / 1000)
        if seconds < 60 { return "\(seconds) s" }
        if seconds < 600, seconds % 60 != 0 { return "\(seconds / 60) min \(seconds % 60) s" }
        let minutes = (seconds + 30) / 60
        if minutes < 60 { return "\(minutes) min" }
        if minutes < 48 * 60 {
            let (hours, rest) = (minutes / 60, minutes % 60)
            return rest == 0 ? "\(hours) h" : "\(hours) h \(rest) min"
        }
        return "\((minutes + 720) / 1440) days"
    }

    /// A time on the hub's clock (or `zone`'s): "18:00" today, "Tue 8 Dec 18:00" another day.
    static func clock(_ time: Timestamp, now: Timestamp, zone: TimeZone = .current) -> String {
        let date = Date(timeIntervalSince1970: Double(time.millisecondsSince1970) / 1000)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let formatter = DateFormatter()
        formatter.timeZone = zone
        formatter.locale = Locale(identifier: "en_GB")
        formatter.dateFormat =
            calendar.isDate(date, inSameDayAs: Date(timeIntervalSince1970: Double(now.millisecondsSince1970) / 1000))
            ? "HH:mm" : "EEE d MMM HH:mm"
        return formatter.string(from: date)
    }
}
