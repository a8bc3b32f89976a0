import Foundation

/// An instant to the millisecond, written as ISO 8601 in UTC: `2026-11-22T10:03:00.000Z`.
///
/// Parsing and formatting are done by hand for the one format the store writes (Foundation's ISO 8601 formatter
/// costs microseconds per call, which 200,000 times per 100,000-sensor store is most of the time budget).
public struct Timestamp: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var millisecondsSince1970: Int64

    public init(millisecondsSince1970: Int64) {
        self.millisecondsSince1970 = millisecondsSince1970
    }

    public init(_ date: Date) {
        millisecondsSince1970 = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
    }

    public static var now: Timestamp { Timestamp(Date()) }

    /// This instant moved by `milliseconds` (back when negative).
    public func adding(milliseconds: Int64) -> Timestamp {
        Timestamp(millisecondsSince1970: millisecondsSince1970 + milliseconds)
    }

    public var date: Date { Date(timeIntervalSince1970: Double(millisecondsSince1970) / 1000) }

    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool {
        lhs.millisecondsSince1970 < rhs.millisecondsSince1970
    }

    public var description: String { iso8601 }

    /// "just now", "42 s ago", "3 min ago", "5 h ago", "2 days ago", as seen at `now`.
    public func relative(to now: Timestamp) -> String {
        let seconds = (now.millisecondsSince1970 - millisecondsSince1970) / 1000
        switch seconds {
        case ..<5: return "just now"
        case ..<60: return "\(seconds) s ago"
        case ..<3600: return "\(seconds / 60) min ago"
        case ..<86400: return "\(seconds / 3600) h ago"
        case ..<172_800: return "1 day ago"
        default: return "\(seconds / 86400) days ago"
        }
    }

    /// `YYYY-MM-DDTHH:MM:SS.mmmZ`.
    public var iso8601: String {
        var bytes: [UInt8] = []
        write(into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends the ISO 8601 text to `bytes`, digit by digit (no intermediate strings).
    func write(into bytes: inout [UInt8]) {
        let (days, milliseconds) = millisecondsSince1970.floorDivided(by: 86_400_000)
        let (year, month, day) = Self.civil(fromDays: days)
        let seconds = milliseconds / 1000
        func digits(_ value: Int64, _ width: Int) {
            var divisor: Int64 = 1
            for _ in 1..<width { divisor *= 10 }
            var value = value
            if value >= divisor * 10 { bytes.append(contentsOf: String(value / (divisor * 10)).utf8) }
            value %= divisor * 10
            while divisor > 0 {
                bytes.append(UInt8(ascii: "0") + UInt8(value / divisor))
                value %= divisor
                divisor /= 10
            }
        }
        digits(year, 4)
        bytes.append(UInt8(ascii: "-"))
        digits(month, 2)
        bytes.append(UInt8(ascii: "-"))
        digits(day, 2)
        bytes.append(UInt8(ascii: "T"))
        digits(seconds / 3600, 2)
        bytes.append(UInt8(ascii: ":"))
        digits(seconds / 60 % 60, 2)
        bytes.append(UInt8(ascii: ":"))
        digits(seconds % 60, 2)
        bytes.append(UInt8(ascii: "."))
        digits(milliseconds % 1000, 3)
        bytes.append(UInt8(ascii: "Z"))
    }

    /// Parses `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`; `nil` for anything else.
    public init?(iso8601 text: String) {
        var text = text
        guard let parsed = text.withUTF8({ Timestamp(utf8: $0) }) else { return nil }
        self = parsed
    }

    /// Parses ISO 8601 text given as UTF-8 bytes, by position (no intermediate strings or closures).
    init?(utf8 bytes: UnsafeBufferPointer<UInt8>) {
        let count = bytes.count
        // The shortest accepted form: YYYY-MM-DDTHH:MM:SSZ.
        guard count >= 20 else { return nil }
        func digit(_ index: Int) -> Int64? {
            let value = Int64(bytes[index]) - 48
            return value >= 0 && value <= 9 ? value : nil
        }
        func number(_ index: Int, _ width: Int) -> Int64? {
            var value: Int64 = 0
            for offset in 0..<width {
                guard let digit = digit(index + offset) else { return nil }
                value = value * 10 + digit
            }
            return value
        }
        let separatorT = bytes[10]
        guard let year = number(0, 4), bytes[4] == UInt8(ascii: "-"), let month = number(5, 2),
            bytes[7] == UInt8(ascii: "-"), let day = number(8, 2),
            separatorT == UInt8(ascii: "T") || separatorT == UInt8(ascii: "t") || separatorT == UInt8(ascii: " "),
            let hour = number(11, 2), bytes[13] == UInt8(ascii: ":"), let minute = number(14, 2),
            bytes[16] == UInt8(ascii: ":"), let second = number(17, 2),
            (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        var index = 19
        var milliseconds: Int64 = 0
        if bytes[index] == UInt8(ascii: ".") {
            index += 1
            let fractionStart = index
            while index < count, let digit = digit(index) {
                if index - fractionStart < 3 { milliseconds = milliseconds * 10 + digit }
                index += 1
            }
            let digits = index - fractionStart
            guard digits > 0 else { return nil }
            for _ in min(digits, 3)..<3 { milliseconds *= 10 }
        }
        guard index < count else { return nil }
        var offsetMinutes: Int64 = 0
        switch bytes[index] {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            index += 1
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            guard index + 6 <= count, let hours = number(index + 1, 2), bytes[index + 3] == UInt8(ascii: ":"),
                let minutes = number(index + 4, 2)
            else { return nil }
            offsetMinutes = (hours * 60 + minutes) * (bytes[index] == UInt8(ascii: "-") ? -1 : 1)
            index += 6
        default:
            return nil
        }
        guard index == count else { return nil }
        let days = Self.days(fromCivil: year, month, day)
        // 2026-02-30 does not exist: the day must survive the round trip.
        guard Self.civil(fromDays: days) == (year, month, day) else { return nil }
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offsetMinutes * 60
        millisecondsSince1970 = seconds * 1000 + milliseconds
    }

    /// Days since 1970-01-01 for a proleptic Gregorian date (Howard Hinnant's algorithm).
    static func days(fromCivil year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The date for a number of days since 1970-01-01 (Howard Hinnant's algorithm).
    static func civil(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}

extension Int64 {
    /// Quotient and remainder rounding towards minus infinity, so times before 1970 format right too.
    fileprivate func floorDivided(by divisor: Int64) -> (Int64, Int64) {
        let quotient = self / divisor
        let remainder = self % divisor
        return remainder < 0 ? (quotient - 1, remainder + divisor) : (quotient, remainder)
    }
}

/// The outbox, the status file and the API write a time as ISO 8601 text.
extension Timestamp: Codable {
    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let time = Timestamp(iso8601: text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not ISO 8601"))
        }
        self = time
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(iso8601)
    }
}
