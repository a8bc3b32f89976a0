import Foundation

/// Durations as people write them in options and configuration: `90s`, `10m`, `2h`, `1d`, `1h30m`, `500ms`.
public enum DurationText {
    /// The duration `text` names, or `nil` when it is not one (or is not above zero).
    public static func parse(_ text: String) -> Duration? {
        parse(text, allowingZero: false)
    }

    /// The duration `text` names, or `nil` when it is not one (or is below zero, or zero unless `allowingZero`).
    public static func parse(_ text: String, allowingZero: Bool) -> Duration? {
        var total: Duration = .zero
        var rest = Substring(text.trimmingCharacters(in: .whitespaces))
        guard !rest.isEmpty else { return nil }
        while !rest.isEmpty {
            let digits = rest.prefix { $0.isASCII && ($0.isNumber || $0 == ".") }
            guard !digits.isEmpty, let value = Double(digits) else { return nil }
            rest = rest.dropFirst(digits.count)
            let unit = rest.prefix { $0.isLetter }
            rest = rest.dropFirst(unit.count)
            let seconds: Double
            switch unit {
            case "ms": seconds = value / 1000
            case "s", "": seconds = value
            case "m", "min": seconds = value * 60
            case "h": seconds = value * 3600
            case "d": seconds = value * 86400
            default: return nil
            }
            // Past a thousand years it is a typo, and past Int64 milliseconds a crash (found by the fuzzer).
            guard seconds.isFinite, seconds < 1e10, total < .seconds(10_000_000_000) else { return nil }
            total += .milliseconds(Int64((seconds * 1000).rounded()))
        }
        return total > .zero || allowingZero ? total : nil
    }

    /// A short rendering: `90s` as `1m30s`, `3600s` as `1h`.
    public static func format(_ duration: Duration) -> String {
        var seconds = Int64(duration.seconds.rounded())
        if seconds == 0 { return "\(Int64((duration.seconds * 1000).rounded()))ms" }
        var text = ""
        for (unit, size) in [("d", Int64(86400)), ("h", 3600), ("m", 60), ("s", 1)] where seconds >= size {
            text += "\(seconds / size)\(unit)"
            seconds %= size
        }
        return text
    }
}
