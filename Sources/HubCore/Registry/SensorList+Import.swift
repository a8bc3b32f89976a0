import Foundation
import HubSupport
import Yams

extension SensorList {
    // MARK: CSV

    /// RFC 4180: a header line naming the columns (`name` and any of the others, in any order), then a record a
    /// line; quoted fields may hold commas, quotes (doubled) and line breaks. Locations are the record's first line.
    static func parseCSV(_ text: String) -> (entries: [Entry], problems: [String]) {
        var records: [(line: Int, fields: [String])] = []
        var fields: [String] = []
        var field = ""
        var quoted = false
        var line = 1
        var recordLine = 1
        var atFieldStart = true
        var scalars = text.unicodeScalars.makeIterator()
        var pending: Unicode.Scalar? = nil
        func endRecord() {
            fields.append(field)
            if !(fields.count == 1 && fields[0].isEmpty) { records.append((recordLine, fields)) }
            fields = []
            field = ""
            atFieldStart = true
        }
        while let scalar = pending ?? scalars.next() {
            pending = nil
            if quoted {
                if scalar == "\"" {
                    let next = scalars.next()
                    if next == "\"" {
                        field.unicodeScalars.append("\"")
                    } else {
                        quoted = false
                        pending = next
                    }
                } else {
                    if scalar == "\n" { line += 1 }
                    field.unicodeScalars.append(scalar)
                }
                continue
            }
            switch scalar {
            case "\"" where atFieldStart:
                quoted = true
                atFieldStart = false
            case ",":
                fields.append(field)
                field = ""
                atFieldStart = true
            case "\r":
                continue
            case "\n":
                endRecord()
                line += 1
                recordLine = line
            case "\u{FEFF}" where line == 1 && records.isEmpty && fields.isEmpty && field.isEmpty:
                continue
            default:
                field.unicodeScalars.append(scalar)
                atFieldStart = false
            }
        }
        if quoted { return ([], ["line \(recordLine): a quoted field is not closed"]) }
        endRecord()
        guard let header = records.first else { return ([], []) }
        let columns = header.fields.map { $0.trimmingCharacters(in: .whitespaces) }
        guard columns.contains("name") else {
            return ([], ["line 1: the first line names the columns: name, and any of topic, kind, silenceTimeout"])
        }
        if let unknown = columns.first(where: { !Self.fields.contains($0) }) {
            return (
                [],
                [
                    "line 1: unknown column '\(UnsafeText.escaped(unknown))' (columns: \(Self.fields.joined(separator: ", ")))"
                ]
            )
        }
        let results = records.dropFirst().map { record -> Result<Entry, Problem> in
            guard record.fields.count == columns.count else {
                return .failure(
                    Problem("line \(record.line): \(record.fields.count) fields, but the header has \(columns.count)"))
            }
            var values: [String: String?] = [:]
            for (column, value) in zip(columns, record.fields) { values[column] = value }
            return entry(values, location: "line \(record.line)")
        }
        return collect(results)
    }

    // MARK: JSON

    /// An array of objects; locations are indices, `[3]`.
    static func parseJSON(_ text: String) -> (entries: [Entry], problems: [String]) {
        let value: Any
        do {
            value = try JSONSerialization.jsonObject(with: Data(text.utf8))
        } catch {
            return ([], ["not valid JSON: \((error as NSError).userInfo[NSDebugDescriptionErrorKey] ?? error)"])
        }
        guard let items = value as? [Any] else { return ([], ["expected a JSON array of sensors, [{\"name\": …}]"]) }
        let results = items.enumerated().map { index, item -> Result<Entry, Problem> in
            guard let object = item as? [String: Any] else {
                return .failure(Problem("[\(index)]: expected an object with a \"name\""))
            }
            var values: [String: String?] = [:]
            for (key, value) in object {
                // An unknown field is named as such, whatever its value.
                guard fields.contains(key) else {
                    values[key] = ""
                    continue
                }
                switch value {
                case let text as String: values[key] = text
                case is NSNull: values[key] = .some(nil)
                case let number as NSNumber where key == "silenceTimeout" || key == "decimals":
                    values[key] = "\(number.doubleValue)"
                default: return .failure(Problem("[\(index)].\(UnsafeText.escaped(key)): expected text"))
                }
            }
            return entry(values, location: "[\(index)]")
        }
        return collect(results)
    }

    // MARK: YAML

    /// A list of mappings; locations are the lines the items start on.
    static func parseYAML(_ text: String) -> (entries: [Entry], problems: [String]) {
        let node: Node?
        do {
            node = try Yams.compose(yaml: text)
        } catch {
            return ([], ["not valid YAML: \(error)"])
        }
        guard let node else { return ([], []) }
        guard case .sequence(let items) = node else {
            return ([], ["expected a YAML list of sensors (- name: …)"])
        }
        let results = items.map { item -> Result<Entry, Problem> in
            let location = "line \(item.mark?.line ?? 0)"
            guard case .mapping(let mapping) = item else {
                return .failure(Problem("\(location): expected a mapping with a name (- name: kitchen)"))
            }
            var values: [String: String?] = [:]
            for (key, value) in mapping {
                guard case .scalar(let keyScalar) = key else {
                    return .failure(Problem("\(location): a key must be plain text"))
                }
                guard case .scalar(let scalar) = value else {
                    return .failure(Problem("\(location): \(UnsafeText.escaped(keyScalar.string)): expected text"))
                }
                let isNull = scalar.style == .plain && ["", "~", "null", "Null", "NULL"].contains(scalar.string)
                values[keyScalar.string] = isNull ? .some(nil) : scalar.string
            }
            return entry(values, location: location)
        }
        return collect(results)
    }

    // MARK: Applying

    /// What an import did: the sensors added, and the names skipped because a sensor had them already.
    public struct Outcome: Sendable {
        public var added: [Sensor] = []
        public var skipped: [String] = []
    }

    /// Adds `entries` to `document`, going on past a bad one to name every problem ("line 4: …"). The caller
    /// writes the document only when there are none: all or nothing.
    /// - Parameters:
    ///   - skippingExisting: an entry whose name a sensor of the registry already has is skipped, not a problem.
    ///   - template: the topic of an entry without one.
    public static func apply(
        _ entries: [Entry], to document: inout DefaultsDocument, skippingExisting: Bool, template: TopicTemplate,
        at time: Timestamp = .now
    ) -> (outcome: Outcome, problems: [String]) {
        var outcome = Outcome()
        var problems: [String] = []
        // Where each name and topic came from in the file, to say "also on line 2" rather than "already exists".
        var names: [String: String] = [:]
        var topics: [String: String] = [:]
        outcome.added.reserveCapacity(entries.count)
        for entry in entries {
            if let problem = entry.problem {
                problems.append(problem)
                continue
            }
            let key = SensorRules.key(entry.name.trimmingCharacters(in: .whitespacesAndNewlines).precomposedNFC)
            if let first = names[key] {
                problems.append("\(entry.location): '\(UnsafeText.escaped(entry.name))' is also on \(first)")
                continue
            }
            if skippingExisting, let existing = document.sensor(named: entry.name) {
                outcome.skipped.append(existing.name)
                continue
            }
            do {
                let sensor = try document.addSensor(
                    named: entry.name, topic: entry.topic, template: template, kind: entry.kind ?? .status,
                    silenceTimeout: entry.silenceTimeout, format: entry.format, availability: entry.availability,
                    at: time)
                names[SensorRules.key(sensor.name)] = entry.location
                topics[sensor.topic] = entry.location
                outcome.added.append(sensor)
            } catch {
                if case .duplicateTopic(let topic, _) = error, let first = topics[topic] {
                    problems.append(
                        "\(entry.location): the topic '\(UnsafeText.escaped(topic))' is also the topic on \(first)")
                } else if case .duplicateName = error {
                    problems.append("\(entry.location): \(error) (--skip-existing skips such sensors)")
                } else {
                    problems.append("\(entry.location): \(error)")
                }
            }
        }
        return (outcome, problems)
    }
}
