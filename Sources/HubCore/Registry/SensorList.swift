import Foundation
import HubSupport
import Yams

/// The registry's sensors as a file to import or export: CSV, JSON or YAML, with the fields a user sets —
/// `name` (required), `topic`, `kind` and `silenceTimeout` (optional), and for a device that publishes JSON its
/// `value`, `map`, `unit`, `decimals`, `range`, `bands` and `availability` (written only when a sensor has them).
/// Statuses and times are the hub's, not part of it. Value types and no I/O: the command reads and writes the files.
///
/// ```
/// name,topic,kind,silenceTimeout                       [{"name": "kitchen", "topic": "kitchen",      - name: "kitchen"
/// kitchen,kitchen,status,                                "kind": "status", "silenceTimeout": null}]     topic: "kitchen"
/// front door,home/front-door/status,status,15m                                                          kind: "status"
/// ```
public enum SensorList {
    /// The fields, in the order CSV writes them.
    public static let fields = ["name", "topic", "kind", "silenceTimeout"] + deviceFields
    /// A device's fields, as text (`range` as `-40..85`).
    public static let deviceFields = ["value", "map", "unit", "decimals", "range", "bands", "availability"]

    /// A sensor's device fields that are set, as text, by name.
    static func deviceValues(_ sensor: Sensor) -> [(String, String)] {
        let format = sensor.format
        let values: [String?] = [
            format.path?.description, format.map?.description, format.unit, format.decimals.map { "\($0)" },
            format.rangeText, format.bands?.description, sensor.availability,
        ]
        return zip(deviceFields, values).compactMap { name, value in value.map { (name, $0) } }
    }

    /// A way of writing the list.
    public enum Format: String, Sendable, CaseIterable {
        case csv, json, yaml

        /// The format a file name's extension says (`.csv`, `.json`, `.yaml` or `.yml`), if any.
        public init?(fileName: String) {
            switch (fileName as NSString).pathExtension.lowercased() {
            case "csv": self = .csv
            case "json": self = .json
            case "yaml", "yml": self = .yaml
            default: return nil
            }
        }

        /// The format `text` looks like: JSON starts with `[`, CSV with its header line; anything else is YAML.
        public init(sniffing text: String) {
            let start = text.drop { $0.isWhitespace || $0 == "\u{FEFF}" }
            if start.hasPrefix("[") {
                self = .json
            } else if start.prefix(while: { $0 != "\n" && $0 != "\r" }).hasPrefix("name") && !start.hasPrefix("name:") {
                self = .csv
            } else {
                self = .yaml
            }
        }
    }

    /// One sensor as the file gives it, and where: `line 4` or `[3]`; or, in `problem`, why it could not be read
    /// (kept in its place, so that every problem is reported in the file's order).
    public struct Entry: Sendable, Hashable {
        public var name: String
        public var topic: String?
        public var kind: SensorKind?
        public var silenceTimeout: Duration?
        public var format = ValueFormat()
        public var availability: String?
        public var location: String
        public var problem: String?

        public init(
            name: String, topic: String? = nil, kind: SensorKind? = nil, silenceTimeout: Duration? = nil,
            location: String, problem: String? = nil
        ) {
            self.problem = problem
            self.name = name
            self.topic = topic
            self.kind = kind
            self.silenceTimeout = silenceTimeout
            self.location = location
        }
    }

    // MARK: Writing

    /// `sensors`, in the order given, as `format`: every field written, so that importing it makes the same
    /// sensors again.
    public static func render(_ sensors: [Sensor], as format: Format) -> String {
        var writer = JSONWriter(capacity: sensors.count * 120)
        switch format {
        case .csv:
            // The device columns any sensor uses, after the four every sensor has.
            let used = Set(sensors.flatMap { deviceValues($0).map(\.0) })
            let columns = deviceFields.filter(used.contains)
            var text = (fields.prefix(4) + columns).joined(separator: ",") + "\n"
            for sensor in sensors {
                let timeout = sensor.silenceTimeout.map(DurationText.format) ?? ""
                let device = Dictionary(uniqueKeysWithValues: deviceValues(sensor))
                let cells =
                    [sensor.name, sensor.topic, sensor.kind.rawValue, timeout] + columns.map { device[$0] ?? "" }
                text += cells.map(csvField).joined(separator: ",")
                text += "\n"
            }
            return text
        case .json:
            writer.raw("[")
            for (index, sensor) in sensors.enumerated() {
                var first = true
                writer.raw(index == 0 ? "\n  {" : ",\n  {")
                writer.key("name", first: &first)
                writer.string(sensor.name)
                writer.key("topic", first: &first)
                writer.string(sensor.topic)
                writer.key("kind", first: &first)
                writer.string(sensor.kind.rawValue)
                writer.key("silenceTimeout", first: &first)
                if let timeout = sensor.silenceTimeout {
                    writer.string(DurationText.format(timeout))
                } else {
                    writer.raw("null")
                }
                for (name, value) in deviceValues(sensor) {
                    writer.key(name, first: &first)
                    writer.string(value)
                }
                writer.raw("}")
            }
            writer.raw(sensors.isEmpty ? "]\n" : "\n]\n")
        case .yaml:
            // Values as JSON strings, which YAML reads as double-quoted scalars: nothing in a name or topic can
            // be taken for YAML syntax.
            if sensors.isEmpty { writer.raw("[]\n") }
            for sensor in sensors {
                writer.raw("- name: ")
                writer.string(sensor.name)
                writer.raw("\n  topic: ")
                writer.string(sensor.topic)
                writer.raw("\n  kind: ")
                writer.string(sensor.kind.rawValue)
                if let timeout = sensor.silenceTimeout {
                    writer.raw("\n  silenceTimeout: ")
                    writer.string(DurationText.format(timeout))
                }
                for (name, value) in deviceValues(sensor) {
                    writer.raw("\n  \(name): ")
                    writer.string(value)
                }
                writer.raw("\n")
            }
        }
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    /// A CSV field, quoted when it holds a comma, a quote or a line break (RFC 4180).
    static func csvField(_ text: String) -> String {
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0.isNewline }) || text.hasPrefix(" ") else {
            return text
        }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    // MARK: Reading

    /// The entries of `text`, those that could not be read with their `problem` ("line 4: …"); and what is wrong
    /// with the file as a whole, if anything (then there are no entries).
    public static func parse(_ text: String, as format: Format) -> (entries: [Entry], problems: [String]) {
        switch format {
        case .csv: return parseCSV(text)
        case .json: return parseJSON(text)
        case .yaml: return parseYAML(text)
        }
    }

    /// One entry from a record's fields by name, or what is wrong with it.
    static func entry(_ values: [String: String?], location: String) -> Result<Entry, Problem> {
        if let unknown = values.keys.filter({ !fields.contains($0) }).sorted().first {
            return .failure(
                Problem(
                    "\(location): unknown field '\(UnsafeText.escaped(unknown))' (fields: \(fields.joined(separator: ", ")))"
                ))
        }
        guard let name = values["name"] ?? nil, !name.isEmpty else {
            return .failure(Problem("\(location): no name (every sensor needs one)"))
        }
        var entry = Entry(name: name, location: location)
        if let topic = values["topic"] ?? nil, !topic.isEmpty { entry.topic = topic }
        if let kind = values["kind"] ?? nil, !kind.isEmpty {
            guard SensorKind.known.map(\.rawValue).contains(kind) else {
                let names = SensorKind.known.map(\.rawValue)
                let known = names.dropLast().joined(separator: ", ") + " or " + names.last!
                return .failure(Problem("\(location): kind '\(UnsafeText.escaped(kind))' is not \(known)"))
            }
            entry.kind = SensorKind(rawValue: kind)
        }
        if let text = values["silenceTimeout"] ?? nil, !text.isEmpty {
            guard let timeout = DurationText.parse(text) ?? Double(text).flatMap(seconds) else {
                return .failure(
                    Problem(
                        "\(location): silenceTimeout '\(UnsafeText.escaped(text))' is not a duration like 90s, 10m or 2h"
                    ))
            }
            entry.silenceTimeout = timeout
        }
        return device(values, into: entry)
    }

    /// The device fields of a record: each one checked as `hubctl sensors add` checks its option.
    private static func device(_ values: [String: String?], into entry: Entry) -> Result<Entry, Problem> {
        var entry = entry
        func text(_ field: String) -> String? { (values[field] ?? nil).flatMap { $0.isEmpty ? nil : $0 } }
        do {
            // Exactly as exported: no known field's defaults added to what the file says.
            entry.format = try ValueFormat.fields(
                value: text("value"), map: text("map"), unit: text("unit"), decimals: text("decimals"),
                range: text("range"), bands: text("bands"), knownDefaults: false)
        } catch {
            return .failure(Problem("\(entry.location): \(error)"))
        }
        entry.availability = text("availability")
        return .success(entry)
    }

    private static func seconds(_ value: Double) -> Duration? {
        value > 0 && value < 1e12 ? .milliseconds(Int64((value * 1000).rounded())) : nil
    }

    struct Problem: Error {
        var message: String
        init(_ message: String) { self.message = message }
    }

    static func collect(_ results: [Result<Entry, Problem>]) -> (entries: [Entry], problems: [String]) {
        let entries = results.map { result in
            switch result {
            case .success(let entry): entry
            case .failure(let problem): Entry(name: "", location: "", problem: problem.message)
            }
        }
        return (entries, [])
    }
}
