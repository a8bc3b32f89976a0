import Foundation
import HubSupport
import Yams

/// One place in `hubd.yaml`: what the file holds there (or nothing), its key path, and the environment that may
/// override it. The one reader of the file: `HubConfiguration`, the `notifiers` section and every backend's
/// settings read through it, so `HUB_*` overrides, `<key>_file` secrets, unknown-key checks and messages naming
/// the key path work alike everywhere, and SIGHUP reloads all of it.
///
/// A scalar key `a.b_c` is overridden by `$HUB_A_B_C` (dots, dashes and spaces become `_`), also when the file
/// does not have it. A mapping's keys are the file's: a backend defined only in the environment is not seen.
public struct ConfigNode: Sendable {
    /// The key path: `notifiers.backends.phone.url`; `""` at the top.
    public let path: String
    let value: Value?
    let context: Context

    /// What the file holds at a key, as written.
    indirect enum Value: Sendable, Hashable {
        case scalar(String, line: Int)
        case null(line: Int)
        case mapping([Entry], line: Int)
        case sequence([Value], line: Int)

        var line: Int {
            switch self {
            case .scalar(_, let line), .null(let line), .mapping(_, let line), .sequence(_, let line): line
            }
        }
    }

    struct Entry: Sendable, Hashable {
        var key: String
        var value: Value
    }

    struct Context: Sendable {
        /// The file, for messages; `nil` when there is none.
        var file: String?
        /// Where relative file names are taken from: the file's directory.
        var base: String
        var environment: [String: String]
    }

    // MARK: Loading

    /// The top of `text` (YAML); an empty or comment-only text is an empty configuration.
    public static func parse(
        _ text: String, file: String? = nil, environment: [String: String] = [:]
    ) throws(ConfigurationError) -> ConfigNode {
        let base = file.map { ($0 as NSString).deletingLastPathComponent } ?? FileManager.default.currentDirectoryPath
        let context = Context(file: file, base: base.isEmpty ? "." : base, environment: environment)
        let node: Node?
        do {
            node = try Yams.compose(yaml: text)
        } catch {
            throw .invalidFile(path: file ?? "the configuration", reason: plain(error, text: text))
        }
        let value = try node.map { node throws(ConfigurationError) in try convert(node, context: context, path: "") }
        let root = ConfigNode(path: "", value: value, context: context)
        switch value {
        case .scalar?, .sequence?: throw root.invalid("expected a mapping of sections (state:, sensors:, …)")
        case .mapping?, .null?, nil: return root
        }
    }

    /// A YAML mistake in plain words, where the usual ones are recognised (libyaml's own words after, for the
    /// rest): a tab indenting a line, a line indented deeper than it can be, one that does not line up, a quote left
    /// open.
    static func plain(_ error: any Error, text: String) -> String {
        let problem: String
        let mark: Mark
        switch error as? YamlError {
        case .scanner(_, let found, let at, _)?, .parser(_, let found, let at, _)?, .composer(_, let found, let at, _)?:
            (problem, mark) = (found, at)
        case .duplicatedKeysInMapping(let duplicates, _)?:
            return "the key \(duplicates.joined(separator: ", ")) is given twice in one section"
        default:
            return "\(error)"
        }
        let lines = text.components(separatedBy: "\n")
        let line = mark.line >= 1 && mark.line <= lines.count ? lines[mark.line - 1] : ""
        let indentation = line.prefix { $0 == " " || $0 == "\t" }
        let plain: String
        if indentation.contains("\t") || (problem.contains("cannot start any token") && line.contains("\t")) {
            plain = "line \(mark.line) is indented with a tab; YAML indents with spaces only (replace the tab with spaces)"
        } else if problem.contains("mapping values are not allowed") {
            plain = "line \(mark.line) has a 'key: value' where none can be: is it indented deeper than the line above "
                + "allows, or does a value hold ': ' (put it in quotes)?"
        } else if problem.contains("did not find expected key") {
            plain = "line \(mark.line) does not line up with the lines above it (check its indentation)"
        } else if problem.contains("could not find expected ':'") {
            plain = "line \(mark.line) has a key without its ':' (or a quote opened before it was never closed)"
        } else if problem.contains("found unexpected end of stream") {
            plain = "the file ends inside a quote or a bracket opened on line \(mark.line) or before"
        } else {
            return "\(error)"
        }
        return "\(plain)\n(YAML: \(problem) at line \(mark.line), column \(mark.column))"
    }

    /// The largest configuration read, 4 MiB (the commented default is 30 KB): past it, the file is not one.
    public static let maximumSize = 4 << 20
    /// The file at `path`, checked to be text before it is parsed: a binary file gets a message saying so, not
    /// a YAML position.
    public static func load(path: String, environment: [String: String]) throws(ConfigurationError) -> ConfigNode {
        let bytes: [UInt8]
        switch WholeFile.read(path, limit: maximumSize) {
        case .success(let file): bytes = file.bytes
        case .failure(let failure): throw .unreadable(path: path, reason: failure.description)
        }
        guard let text = String(validating: bytes, as: UTF8.self), !text.contains("\0") else {
            throw .invalidFile(path: path, reason: "not UTF-8 text (is it a binary file?)")
        }
        // Control characters other than tabs and line breaks are never in YAML text: said so, the cause is clear.
        let lineBreaks: Set<Unicode.Scalar> = ["\t", "\n", "\r", "\u{85}"]
        if let scalar = text.unicodeScalars.first(where: {
            $0.properties.generalCategory == .control && !lineBreaks.contains($0)
        }) {
            let line = text.unicodeScalars.prefix { $0 != scalar }.filter { $0 == "\n" }.count + 1
            throw .invalidFile(
                path: path,
                reason: "not text: line \(line) holds the control character \(UnsafeText.codePoint(scalar))"
                    + " (is it a binary file?)")
        }
        return try parse(text, file: path, environment: environment)
    }

    private static func convert(_ node: Node, context: Context, path: String) throws(ConfigurationError) -> Value {
        let line = node.mark?.line ?? 0
        switch node {
        case .scalar(let scalar):
            if scalar.style == .plain && ["", "~", "null", "Null", "NULL"].contains(scalar.string) {
                return .null(line: line)
            }
            return .scalar(scalar.string, line: line)
        case .mapping(let mapping):
            var entries: [Entry] = []
            for (keyNode, valueNode) in mapping {
                guard case .scalar(let key) = keyNode else {
                    throw ConfigNode(path: path, value: nil, context: context).invalid(
                        "a key must be plain text (line \(keyNode.mark?.line ?? 0))")
                }
                let child = path.isEmpty ? key.string : path + "." + key.string
                entries.append(Entry(key: key.string, value: try convert(valueNode, context: context, path: child)))
            }
            return .mapping(entries, line: line)
        case .sequence(let sequence):
            var values: [Value] = []
            for (index, item) in sequence.enumerated() {
                values.append(try convert(item, context: context, path: "\(path)[\(index)]"))
            }
            return .sequence(values, line: line)
        case .alias:
            throw ConfigNode(path: path, value: nil, context: context).invalid(
                "YAML aliases (*name) are not supported here (line \(line))")
        }
    }

    // MARK: Structure

    /// The environment variable that overrides this key: `notifiers.backends.phone.url` →
    /// `HUB_NOTIFIERS_BACKENDS_PHONE_URL`.
    public var environmentName: String {
        "HUB_" + String(path.uppercased().map { $0.isLetter || $0.isNumber ? $0 : "_" })
    }

    private var override: String? { path.isEmpty ? nil : context.environment[environmentName] }

    /// Set in the file (to something other than null) or in the environment.
    public var isSet: Bool {
        if override != nil { return true }
        if case .null = value { return false }
        return value != nil
    }

    /// The value at `key` of this mapping; a node that is not set when the file has no such key.
    /// This single value as a mapping's `key`: a section's short form (`store: postgres://…` for `store: {url: …}`).
    func mapping(as key: String) -> ConfigNode {
        guard let value else { return self }
        return ConfigNode(
            path: path, value: .mapping([Entry(key: key, value: value)], line: value.line), context: context)
    }

    public subscript(key: String) -> ConfigNode {
        let childPath = path.isEmpty ? key : path + "." + key
        var child: Value?
        if case .mapping(let entries, _) = value { child = entries.last(where: { $0.key == key })?.value }
        return ConfigNode(path: childPath, value: child, context: context)
    }

    /// The keys the file has here, in the file's order; refuses anything but a mapping (or nothing).
    public func keys() throws(ConfigurationError) -> [String] {
        switch value {
        case nil, .null: return []
        case .mapping(let entries, _): return entries.map(\.key)
        case .scalar, .sequence: throw invalid("expected a mapping (key: value on lines of their own, or {…})")
        }
    }

    /// The mapping's entries by key, in the file's order.
    public func entries() throws(ConfigurationError) -> [(key: String, node: ConfigNode)] {
        try keys().map { ($0, self[$0]) }
    }

    /// The items of a list (`- item` or `[a, b]`).
    public func list() throws(ConfigurationError) -> [ConfigNode] {
        switch value {
        case nil, .null: return []
        case .sequence(let values, _):
            return values.enumerated().map { ConfigNode(path: "\(path)[\($0)]", value: $1, context: context) }
        case .scalar, .mapping: throw invalid("expected a list (- item, or [a, b])")
        }
    }

    /// What the file and the environment hold here (not where in the file), for telling whether a section changed
    /// between two reads.
    public var fingerprint: String {
        func text(_ value: Value?) -> String {
            switch value {
            case nil, .null: "~"
            case .scalar(let text, _): "\"\(text)\""
            case .sequence(let values, _): "[" + values.map(text).joined(separator: ",") + "]"
            case .mapping(let entries, _):
                "{" + entries.map { "\"\($0.key)\":" + text($0.value) }.joined(separator: ",") + "}"
            }
        }
        let overrides = context.environment.filter { $0.key.hasPrefix(environmentName + "_") }.sorted {
            $0.key < $1.key
        }
        return text(value) + overrides.map { "|\($0.key)=\($0.value)" }.joined()
    }

    // MARK: Values

    /// The text at this key (the environment's when it overrides the file), `nil` when not set. Text with control
    /// or invisible formatting characters (`UnsafeText`) other than tabs and line breaks is refused: every value
    /// may end up in a log line, a terminal or a notification.
    public func string() throws(ConfigurationError) -> String? {
        let text: String
        if let override {
            text = override.trimmingCharacters(in: .whitespaces)
        } else {
            switch value {
            case nil, .null: return nil
            case .scalar(let scalar, _): text = scalar.trimmingCharacters(in: .whitespaces)
            case .mapping: throw invalid("expected a single value, got a mapping")
            case .sequence: throw invalid("expected a single value, got a list")
            }
        }
        if let problem = UnsafeText.problem(in: text, allowing: [.tab, .lineBreak]) {
            throw invalidValue(text, problem)
        }
        return text
    }

    /// The value made by `convert` from the text here; `nil` when not set. `convert` returns `nil` for text it
    /// can't take, and the message then says `expected`.
    public func value<T>(_ expected: String, _ convert: (String) throws -> T?) throws(ConfigurationError) -> T? {
        guard let text = try string() else { return nil }
        let result: T?
        do {
            result = try convert(text)
        } catch {
            throw invalidValue(text, "\(error)")
        }
        guard let result else { throw invalidValue(text, expected) }
        return result
    }

    /// A list of texts; a single text counts as a list of one, and the environment's is split at commas.
    public func strings() throws(ConfigurationError) -> [String]? {
        try stringItems()?.map(\.text)
    }

    /// `strings()` with the node each text came from: the list item (`backends[2]`) when the file has a list, so
    /// that a message about one names it; this node for a single text or the environment's.
    public func stringItems() throws(ConfigurationError) -> [(text: String, node: ConfigNode)]? {
        if let override {
            return try override.split(separator: ",").map { part throws(ConfigurationError) in
                let text = part.trimmingCharacters(in: .whitespaces)
                if let problem = UnsafeText.problem(in: text) { throw invalidValue(text, problem) }
                return (text, self)
            }
        }
        if case .scalar = value { return [(try string()!, self)] }
        guard isSet else { return nil }
        return try list().map { item throws(ConfigurationError) in
            guard let text = try item.string() else { throw item.invalid("expected text, got nothing") }
            return (text, item)
        }
    }

    public func bool() throws(ConfigurationError) -> Bool? {
        try value("true or false") { text in
            switch text.lowercased() {
            case "true", "yes", "on": true
            case "false", "no", "off": false
            default: nil
            }
        }
    }

    public func integer(in range: ClosedRange<Int>) throws(ConfigurationError) -> Int? {
        try value("a whole number from \(range.lowerBound) to \(range.upperBound)") { text in
            Int(text).flatMap { range.contains($0) ? $0 : nil }
        }
    }

    public func number(in range: ClosedRange<Double>) throws(ConfigurationError) -> Double? {
        try value("a number from \(range.lowerBound) to \(range.upperBound)") { text in
            Double(text).flatMap { range.contains($0) && $0.isFinite ? $0 : nil }
        }
    }

    /// `500ms`, `90s`, `10m`, `2h`, `1d`, or a whole number of seconds.
    public func duration(in range: ClosedRange<Duration>? = nil) throws(ConfigurationError) -> Duration? {
        let expected =
            range.map {
                "a duration from \(DurationText.format($0.lowerBound)) to \(DurationText.format($0.upperBound)), like 30s, 10m or 1h"
            } ?? "a duration like 500ms, 90s, 10m, 2h or 1d"
        return try value(expected) { text in
            let allowingZero = range?.lowerBound == .zero
            // A bare number is seconds, as positive (or zero where the range starts there) as the written form.
            let seconds = Int(text).flatMap { $0 > 0 || ($0 == 0 && allowingZero) ? Duration.seconds($0) : nil }
            guard let duration = DurationText.parse(text, allowingZero: allowingZero) ?? seconds else { return nil }
            return range.map { $0.contains(duration) } ?? true ? duration : nil
        }
    }

    /// An `http://` or `https://` URL, without a trailing `/` after the host.
    public func url() throws(ConfigurationError) -> String? {
        try value("an http:// or https:// URL") { text in
            guard let url = URL(string: text), ["http", "https"].contains(url.scheme ?? ""), url.host != nil else {
                return nil
            }
            return text.hasSuffix("/") && url.path.isEmpty ? String(text.dropLast()) : text
        }
    }

    /// A file name; a relative one is taken from the configuration file's directory, and `$CREDENTIALS_DIRECTORY/…`
    /// is where systemd's `LoadCredential=` put a secret for the (dynamic) user hubd runs as.
    public func filePath() throws(ConfigurationError) -> String? {
        guard var text = try string() else { return nil }
        guard !text.isEmpty else { throw invalidValue(text, "a file name") }
        for prefix in ["$CREDENTIALS_DIRECTORY/", "${CREDENTIALS_DIRECTORY}/"] where text.hasPrefix(prefix) {
            guard let directory = context.environment["CREDENTIALS_DIRECTORY"] else {
                throw invalidValue(text, "$CREDENTIALS_DIRECTORY is not set (see LoadCredential= in systemd)")
            }
            text = directory + "/" + text.dropFirst(prefix.count)
        }
        return text.hasPrefix("/") ? text : context.base + "/" + text
    }

    /// A secret: `<key>` given inline (or in its environment variable), or `<key>_file` naming a file that holds
    /// it (a trailing newline removed).
    public func secret(_ key: String) throws(ConfigurationError) -> String? {
        if let inline = try self[key].string() { return inline }
        let fileNode = self[key + "_file"]
        guard let file = try fileNode.filePath() else { return nil }
        guard let text = try? String(contentsOfFile: file, encoding: .utf8) else {
            throw fileNode.invalidValue(file, "cannot read the file")
        }
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Where the secret `key` was given: `<key>` (inline or its environment variable), else `<key>_file`; what an
    /// error about its value names (a bad token read from `token_file` is that key's).
    public func secretSource(_ key: String) -> ConfigNode {
        self[key].isSet || !self[key + "_file"].isSet ? self[key] : self[key + "_file"]
    }

    /// The value of `get` on this node; an error naming the key when it is not set.
    public func required<T>(_ get: (ConfigNode) throws -> T?) throws(ConfigurationError) -> T {
        let result: T?
        do {
            result = try get(self)
        } catch let error as ConfigurationError {
            throw error
        } catch {
            throw invalid("\(error)")
        }
        guard let result else { throw invalid("missing") }
        return result
    }

    // MARK: Errors

    /// An error about this key's shape or presence.
    public func invalid(_ reason: String) -> ConfigurationError {
        .invalid(file: context.file, key: path.isEmpty ? "(top)" : path, line: value?.line, reason: reason)
    }

    /// An error about the value `text` at this key.
    public func invalidValue(_ text: String, _ reason: String) -> ConfigurationError {
        .invalidValue(
            file: context.file, key: path, value: override == nil ? text : "$\(environmentName)=\(text)",
            reason: reason)
    }
}
