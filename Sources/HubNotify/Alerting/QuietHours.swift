import Foundation
import HubCore

/// A named time window in which a rule's alerts below its passing priority wait (`alerts.quiet_hours`): `from` and
/// `to` as wall-clock times in an IANA zone, on some weekdays; `to` before `from` runs overnight into the next day.
///
/// ```yaml
/// night: { from: "22:00", to: "07:00", zone: Europe/Berlin }
/// weekend-mornings: { from: "00:00", to: "10:00", days: [sat, sun] }
/// ```
public struct QuietHours: Sendable, Hashable {
    public var name: String
    /// Minutes after midnight; `to` may be 1440 ("24:00").
    public var from: Int
    public var to: Int
    /// The weekdays a window starts on (1 = Sunday … 7 = Saturday, as `Calendar` counts); every day when empty.
    public var days: Set<Int>
    public var zone: TimeZone

    public init(name: String, from: Int, to: Int, days: Set<Int> = [], zone: TimeZone) {
        self.name = name
        self.from = from
        self.to = to
        self.days = days
        self.zone = zone
    }

    public static let dayNames = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"]

    private var calendar: Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        return calendar
    }

    /// Whether `time` is inside the window; when it is, also when the window ends.
    public func contains(_ time: Timestamp) -> Bool { end(containing: time) != nil }

    /// When the window that holds `time` ends; `nil` when `time` is outside every window.
    public func end(containing time: Timestamp) -> Timestamp? {
        let calendar = self.calendar
        let date = time.date
        let startOfDay = calendar.startOfDay(for: date)
        let minute = Int(date.timeIntervalSince(startOfDay) / 60)
        let today = calendar.component(.weekday, from: date)
        let overnight = to <= from
        // A window that started today.
        if takes(today), minute >= from, overnight || minute < to {
            let endDay = overnight ? calendar.date(byAdding: .day, value: 1, to: startOfDay)! : startOfDay
            return Timestamp(wallClock(endDay, minutes: to, calendar))
        }
        // An overnight window that started yesterday.
        let yesterday = today == 1 ? 7 : today - 1
        if overnight, takes(yesterday), minute < to {
            return Timestamp(wallClock(startOfDay, minutes: to, calendar))
        }
        return nil
    }

    private func takes(_ weekday: Int) -> Bool { days.isEmpty || days.contains(weekday) }

    /// `minutes` after midnight of `day` in the zone; a time a clock change skips is taken as the next that exists.
    private func wallClock(_ day: Date, minutes: Int, _ calendar: Calendar) -> Date {
        if minutes >= 1440 { return calendar.date(byAdding: .day, value: 1, to: day)! }
        var components = calendar.dateComponents([.year, .month, .day], from: day)
        components.hour = minutes / 60
        components.minute = minutes % 60
        return calendar.date(from: components) ?? day.addingTimeInterval(Double(minutes) * 60)
    }

    /// Reads `HH:MM` (00:00–24:00) as minutes after midnight.
    public static func minutes(_ text: String) -> Int? {
        let parts = text.split(separator: ":")
        guard parts.count == 2, let hours = Int(parts[0]), let minutes = Int(parts[1]), parts[1].count == 2,
            (0...24).contains(hours), (0..<60).contains(minutes), hours < 24 || minutes == 0
        else { return nil }
        return hours * 60 + minutes
    }
}
