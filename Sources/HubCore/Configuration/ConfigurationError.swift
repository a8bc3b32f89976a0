import HubSupport

/// Why the configuration can't be used; the message names the file and the key.
public enum ConfigurationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file named by `--config` or `$HUB_CONFIG` can't be read.
    case unreadable(path: String, reason: String)
    /// The file is not YAML (or not text).
    case invalidFile(path: String, reason: String)
    /// A key has a value that can't work.
    case invalidValue(file: String?, key: String, value: String, reason: String)
    /// A key is missing, unknown, or of the wrong shape (a list where a mapping goes).
    case invalid(file: String?, key: String, line: Int?, reason: String)

    /// The message, every value in it escaped (`UnsafeText`): the file may hold what the terminal must not get.
    public var description: String {
        UnsafeText.escaped(text, keepingLineBreaks: true)
    }

    private var text: String {
        switch self {
        case .unreadable(let path, let reason):
            return "cannot read the configuration \(path): \(reason)"
        case .invalidFile(let path, let reason):
            return "the configuration \(path) is not valid YAML: \(reason)"
        case .invalidValue(let file, let key, let value, let reason):
            let environment = "HUB_" + String(key.uppercased().map { $0.isLetter || $0.isNumber ? $0 : "_" })
            let source = file.map { "\($0): " } ?? ""
            return "\(source)\(key) (or $\(environment)) is '\(UnsafeText.escaped(value))': \(reason)"
        case .invalid(let file, let key, let line, let reason):
            let source = file.map { file in line.map { "\(file):\($0): " } ?? "\(file): " } ?? ""
            return "\(source)\(key): \(reason)"
        }
    }
}
