import HubSupport

/// What is wrong with a change to the registry, said so that the user knows what to do. Values are shown escaped
/// (`UnsafeText`): a refused name may be the very text that must not reach the terminal.
public enum RegistryError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The name breaks the naming rules; the second value says which.
    case invalidName(String, String)
    /// The topic is not one a sensor can publish to; the second value says why.
    case invalidTopic(String, String)
    /// The topic template can't make topics; the second value says why.
    case invalidTopicTemplate(String, String)
    /// Another sensor has this name, up to case.
    case duplicateName(new: String, existing: String)
    /// Another sensor already uses this topic.
    case duplicateTopic(topic: String, sensor: String)
    /// No sensor has this name; `suggestion` is a close one, if any.
    case unknownSensor(String, suggestion: String?)
    /// A broker setting is not usable; the text names it.
    case invalidSetting(String)

    public var description: String {
        func shown(_ text: String) -> String { UnsafeText.escaped(text) }
        switch self {
        case .invalidName(let name, let reason):
            return "'\(shown(name))' is not a valid sensor name: \(reason)"
        case .invalidTopic(let topic, let reason):
            return "'\(shown(topic))' is not a valid sensor topic: \(reason)"
        case .invalidTopicTemplate(let template, let reason):
            return "the topic template '\(shown(template))' is not valid: \(reason)"
        case .duplicateName(let new, let existing):
            if new == existing { return "a sensor named '\(shown(existing))' already exists" }
            return "a sensor named '\(shown(existing))' already exists — names are case-insensitive"
        case .duplicateTopic(let topic, let sensor):
            return "sensor '\(shown(sensor))' already uses the topic '\(shown(topic))'; two sensors can't share a topic"
                + " (give this one another with --topic)"
        case .unknownSensor(let name, let suggestion):
            let hint = suggestion.map { " — did you mean '\(shown($0))'?" } ?? ""
            return "there is no sensor named '\(shown(name))'\(hint) ('hubctl sensors list' shows them all)"
        case .invalidSetting(let message):
            return message
        }
    }
}
