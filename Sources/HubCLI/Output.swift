import Foundation
import HubCore
import HubSupport

/// How hubctl shows sensors and settings: tables and details for people, JSON for scripts.
///
/// What people read goes through `table(header:rows:)` or `aligned(_:)`, which escape every value (`UnsafeText`):
/// a status or a receiver's answer must not be able to rewrite the terminal. JSON escapes the same characters.
enum Output {
    // MARK: Sensors for people

    /// The sensor table, sorted by name (case-insensitively, numbers by value).
    static func table(_ sensors: [Sensor], now: Timestamp) -> String {
        guard !sensors.isEmpty else { return "No sensors yet. Add one with: hubctl sensors add NAME\n" }
        let rows = sensors.sortedByName().map { sensor in
            [sensor.name, sensor.shownStatus, lastUpdated(sensor, now: now), sensor.topic]
        }
        return table(header: ["NAME", "STATUS", "LAST UPDATED", "TOPIC"], rows: rows)
    }

    /// One sensor, a line a field.
    static func details(_ sensor: Sensor, now: Timestamp) -> String {
        let silence = sensor.silenceTimeout.map(DurationText.format) ?? "the hub's default"
        let fields = [
            ("Name", sensor.name),
            // Event ids are `<id>-<sequence>`: what a receiver gets names the sensor by this.
            ("Id", sensor.sequence > 0 ? "\(sensor.id) (last event \(sensor.id)-\(sensor.sequence))" : sensor.id),
            ("Topic", sensor.topic),
            ("Status", sensor.shownStatus),
            ("Last updated", lastUpdated(sensor, now: now)),
            ("Added", "\(absolute(sensor.added)) (\(relative(sensor.added, now: now)))"),
            ("Kind", sensor.kind.rawValue),
            ("Offline after", silence),
        ]
        var device: [(String, String)] = []
        if let path = sensor.format.path { device.append(("Value", path.description)) }
        if let map = sensor.format.map { device.append(("Map", map.description)) }
        if let unit = sensor.format.unit { device.append(("Unit", unit)) }
        if let range = sensor.format.rangeText { device.append(("Range", range)) }
        if let bands = sensor.format.bands { device.append(("Bands", bands.description)) }
        if let availability = sensor.availability { device.append(("Availability", availability)) }
        if let session = sensor.session {
            device.append(("Recording", "session \(session.id) since \(relative(session.started, now: now))"))
        }
        let attributes = sensor.attributes.map { ("  " + $0.name, $0.value.description) }
        let lines = aligned(fields + device + (attributes.isEmpty ? [] : [("Attributes", "")]) + attributes)
        return lines.map { $0.replacingOccurrences(of: ":  *$", with: ":", options: .regularExpression) + "\n" }
            .joined()
    }

    /// "Label:  value" lines, the values lined up one space after the longest label, labels and values escaped.
    static func aligned(_ fields: [(String, String)]) -> [String] {
        let fields = fields.map { (shown($0.0), shown($0.1)) }
        let width = (fields.map(\.0.count).max() ?? 0) + 2
        return fields.map { label, value in label + ":" + String(repeating: " ", count: width - label.count - 1) + value
        }
    }

    /// `text` as a terminal may show it: control and formatting characters written as `\u{1B}`.
    static func shown(_ text: String) -> String { UnsafeText.escaped(text) }

    static func lastUpdated(_ sensor: Sensor, now: Timestamp) -> String {
        guard let time = sensor.lastUpdated else { return "never" }
        return "\(relative(time, now: now)) (\(absolute(time)))"
    }

    /// "just now", "42 s ago", "3 min ago", "5 h ago", "2 days ago".
    static func relative(_ time: Timestamp, now: Timestamp) -> String { time.relative(to: now) }

    /// Local time to the second, for the absolute column.
    static func absolute(_ time: Timestamp) -> String {
        localFormatter.string(from: time.date)
    }

    private static let localFormatter: DateFormatter = {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = .current
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
        return formatter
    }()

    /// Columns padded to their widest cell (counting characters, not bytes), every cell escaped.
    static func table(header: [String], rows: [[String]]) -> String {
        let rows = rows.map { $0.map(shown) }
        var widths = header.map(\.count)
        for row in rows {
            for (column, cell) in row.enumerated() { widths[column] = max(widths[column], cell.count) }
        }
        func line(_ cells: [String]) -> String {
            var text = ""
            for (column, cell) in cells.enumerated() {
                text += cell
                if column < cells.count - 1 { text += String(repeating: " ", count: widths[column] - cell.count + 2) }
            }
            return text + "\n"
        }
        return line(header) + rows.map(line).joined()
    }

    // MARK: Sensors for scripts

    /// A JSON list of the sensors, in the order they were added.
    static func json(_ sensors: [Sensor]) -> String {
        var writer = JSONWriter(capacity: sensors.count * 180 + 4)
        writer.raw("[")
        for (index, sensor) in sensors.enumerated() {
            writer.raw(index == 0 ? "\n  " : ",\n  ")
            write(sensor, into: &writer)
        }
        writer.raw(sensors.isEmpty ? "]\n" : "\n]\n")
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    static func json(_ sensor: Sensor) -> String {
        var writer = JSONWriter()
        write(sensor, into: &writer)
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    /// Every field, `null` where there is no value, times in ISO 8601 UTC, durations in seconds.
    private static func write(_ sensor: Sensor, into writer: inout JSONWriter) {
        var first = true
        writer.raw("{")
        writer.key("id", first: &first)
        writer.string(sensor.id)
        writer.key("name", first: &first)
        writer.string(sensor.name)
        writer.key("topic", first: &first)
        writer.string(sensor.topic)
        writer.key("status", first: &first)
        writer.string(sensor.status)
        writer.key("lastUpdated", first: &first)
        if let time = sensor.lastUpdated { writer.timestamp(time) } else { writer.raw("null") }
        writer.key("added", first: &first)
        writer.timestamp(sensor.added)
        writer.key("kind", first: &first)
        writer.string(sensor.kind.rawValue)
        writer.key("silenceTimeout", first: &first)
        if let timeout = sensor.silenceTimeout { writer.number(timeout.seconds) } else { writer.raw("null") }
        writer.key("sequence", first: &first)
        writer.number(sensor.sequence)
        sensor.format.encode(into: &writer, first: &first)
        if let availability = sensor.availability {
            writer.key("availability", first: &first)
            writer.string(availability)
        }
        writer.key("attributes", first: &first)
        sensor.attributes.write(into: &writer)
        writer.raw("}")
    }

    // MARK: The broker

    static func text(_ settings: BrokerSettings, state: StateDirectory) -> String {
        var tls = "off"
        if let options = settings.tls {
            tls =
                options.caFile.map { "on, CA file \($0)" } ?? options.caDirectory.map { "on, CA directory \($0)" }
                ?? "on, the system's CAs"
            if let certificate = options.certificateFile { tls += "; client certificate \(certificate)" }
            if !options.verifyHostname { tls += "; host name NOT checked" }
        }
        let password = settings.passwordFile.map { "set (in \(state.resolve($0)))" } ?? "none"
        let fields = [
            ("Host", settings.host),
            ("Port", "\(settings.port)"),
            ("Client id", settings.clientID),
            ("User name", settings.username ?? "none"),
            ("Password", password),
            ("TLS", tls),
        ]
        return aligned(fields).joined(separator: "\n")
    }

    static func json(_ settings: BrokerSettings, state: StateDirectory) -> String {
        var writer = JSONWriter()
        var first = true
        writer.raw("{")
        writer.key("host", first: &first)
        writer.string(settings.host)
        writer.key("port", first: &first)
        writer.number(settings.port)
        writer.key("clientId", first: &first)
        writer.string(settings.clientID)
        writer.key("username", first: &first)
        if let username = settings.username { writer.string(username) } else { writer.raw("null") }
        writer.key("passwordFile", first: &first)
        if let file = settings.passwordFile { writer.string(state.resolve(file)) } else { writer.raw("null") }
        writer.key("tls", first: &first)
        if let tls = settings.tls {
            var inner = true
            writer.raw("{")
            for (key, value) in [
                ("caFile", tls.caFile), ("caDirectory", tls.caDirectory), ("certificateFile", tls.certificateFile),
                ("keyFile", tls.keyFile),
            ] {
                writer.key(key, first: &inner)
                if let value { writer.string(value) } else { writer.raw("null") }
            }
            writer.key("verifyHostname", first: &inner)
            writer.bool(tls.verifyHostname)
            writer.raw("}")
        } else {
            writer.raw("null")
        }
        writer.raw("}")
        return String(decoding: writer.bytes, as: UTF8.self)
    }
}

extension Output {
    /// What `sensors add` and `set` say of a device sensor beyond its topic: " (value contact, map …)", or nothing.
    static func deviceSummary(_ sensor: Sensor) -> String {
        var parts: [String] = []
        if sensor.kind != .status {
            parts.append(sensor.kind.rawValue + (sensor.format.unit.map { " in \($0)" } ?? ""))
        }
        if let path = sensor.format.path { parts.append("value '\(path)'") }
        if let map = sensor.format.map { parts.append("map \(map)") }
        if let availability = sensor.availability { parts.append("availability on '\(availability)'") }
        if let timeout = sensor.silenceTimeout {
            parts.append("offline after \(DurationText.format(timeout)) of silence")
        }
        return parts.isEmpty ? "" : " (" + parts.joined(separator: "; ") + ")"
    }
}
