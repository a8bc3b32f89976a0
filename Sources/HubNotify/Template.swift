import HubCore

/// A title or message template: text with `{placeholders}` filled from the event, and nothing else.
///
/// Substitution is the only thing a template does: a value is inserted as text, never read as a template, a
/// command or markup, so a sensor that publishes `{sensor}`, quotes, newlines or 256 KiB can't change what the
/// notification says beyond its own value. Values are cut at `maximumValueLength`, the result at `maximumLength`.
public struct Template: Sendable, Hashable, CustomStringConvertible {
    /// The placeholders a template may use.
    public static let placeholders = ["sensor", "topic", "old", "new", "status", "event", "time", "value", "id"]
    public static let maximumValueLength = 1024
    public static let maximumLength = 4096

    enum Part: Sendable, Hashable {
        case text(String)
        case placeholder(String)
    }

    let parts: [Part]
    public let description: String

    /// Parses `text`; an unknown placeholder or an unclosed `{` is an error naming it. `{{` and `}}` are literal
    /// braces.
    public init(_ text: String) throws(TemplateError) {
        var parts: [Part] = []
        var literal = ""
        var index = text.startIndex
        while index < text.endIndex {
            let character = text[index]
            let next = text.index(after: index)
            if character == "{" {
                if next < text.endIndex && text[next] == "{" {
                    literal.append("{")
                    index = text.index(after: next)
                    continue
                }
                guard let close = text[next...].firstIndex(of: "}") else {
                    throw .unclosed(template: text)
                }
                let name = String(text[next..<close]).trimmingCharacters(in: .whitespaces)
                guard Self.placeholders.contains(name) else { throw .unknownPlaceholder(name, template: text) }
                if !literal.isEmpty { parts.append(.text(literal)) }
                literal = ""
                parts.append(.placeholder(name))
                index = text.index(after: close)
            } else {
                if character == "}" && next < text.endIndex && text[next] == "}" {
                    index = text.index(after: next)
                } else {
                    index = next
                }
                literal.append(character)
            }
        }
        if !literal.isEmpty { parts.append(.text(literal)) }
        self.parts = parts
        self.description = text
    }

    /// A template written in the code, known to be valid.
    static func literal(_ text: String) -> Template {
        do {
            return try Template(text)
        } catch {
            preconditionFailure("\(error)")
        }
    }

    /// The text for `event`.
    public func render(_ event: SensorEvent, id: String) -> String {
        var result = ""
        for part in parts {
            switch part {
            case .text(let text): result += text
            case .placeholder(let name): result += Self.clip(Self.value(name, event, id: id), Self.maximumValueLength)
            }
            if result.utf8.count > Self.maximumLength { return Self.clip(result, Self.maximumLength) }
        }
        return result
    }

    static func value(_ name: String, _ event: SensorEvent, id: String) -> String {
        switch name {
        case "sensor": return event.sensor
        case "topic": return event.topic
        case "old": return event.oldStatus
        case "new", "status": return event.newStatus
        case "event": return event.kind.rawValue
        case "time": return event.time.iso8601
        case "value": return event.value ?? event.newStatus
        case "id": return id
        default: return ""
        }
    }

    /// `text` cut to at most `limit` UTF-8 bytes at a character boundary, with an ellipsis when cut.
    static func clip(_ text: String, _ limit: Int) -> String {
        guard text.utf8.count > limit else { return text }
        var result = ""
        var count = 0
        for character in text {
            count += character.utf8.count
            if count > limit - 3 { break }
            result.append(character)
        }
        return result + "…"
    }

    /// The default title and message for each kind of event (parsed once: rendering is on the fan-out's hot path).
    static func defaults(for kind: SensorEvent.Kind) -> (title: Template, body: Template) {
        defaultTemplates[kind.rawValue] ?? defaultTemplates["other"]!
    }

    private static let defaultTemplates: [String: (title: Template, body: Template)] = {
        var table: [String: (title: Template, body: Template)] = [:]
        for kind in SensorEvent.Kind.all + [SensorEvent.Kind(rawValue: "other")] {
            table[kind.rawValue] = parseDefaults(for: kind)
        }
        return table
    }()

    private static func parseDefaults(for kind: SensorEvent.Kind) -> (title: Template, body: Template) {
        let title: String
        let body: String
        switch kind {
        case .changed:
            title = "{sensor}: {new}"
            body = "{sensor} changed from {old} to {new}"
        case .silent:
            title = "{sensor} is silent"
            body = "{sensor} has sent nothing for longer than its silence timeout (last status: {old})"
        case .offline:
            title = "{sensor} is offline"
            body = "{sensor} went offline (last status: {old})"
        case .recovered:
            title = "{sensor} is back"
            body = "{sensor} is back: {new}"
        case .airQuality:
            title = "Air quality: {new}"
            body = "{value}"
        case .threshold:
            title = "{sensor}: threshold {new}"
            body = "{sensor}: {value}"
        case .discovered:
            title = "New sensor: {sensor}"
            body = "Discovered {value}"
        case .session:
            title = "{sensor}: {new}"
            body = "{sensor} is {new} (session {value})"
        default:
            title = "{sensor}: {new}"
            body = "{sensor}: {new}"
        }
        return (literal(title), literal(body))
    }
}

/// Why a template can't be used.
public enum TemplateError: Error, Sendable, Hashable, CustomStringConvertible {
    /// `{name}` is not one of `Template.placeholders`.
    case unknownPlaceholder(String, template: String)
    /// A `{` without its `}`.
    case unclosed(template: String)

    public var description: String {
        switch self {
        case .unknownPlaceholder(let name, let template):
            return "unknown placeholder {\(name)} in \"\(template)\"; use "
                + Template.placeholders.map { "{\($0)}" }.joined(separator: ", ") + " (write {{ for a literal {)"
        case .unclosed(let template):
            return "a { without its } in \"\(template)\" (write {{ for a literal {)"
        }
    }
}

/// Text safe for an HTTP header value: control characters (CR, LF: header injection) become spaces, and the result
/// is at most `limit` bytes.
func headerValue(_ text: String, limit: Int = 512) -> String {
    let cleaned = String(
        String.UnicodeScalarView(text.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? " " : $0 }))
    return Template.clip(cleaned, limit)
}
