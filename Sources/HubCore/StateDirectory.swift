import Foundation

/// Where the hub keeps its state (the defaults store, the broker password): the first of `--state-dir`, the
/// `HUB_STATE_DIR` environment variable, the configuration's `state.directory`, or `/var/lib/sensorhub` (what the
/// systemd unit's `StateDirectory=sensorhub` gives hubd).
public struct StateDirectory: Sendable, Hashable, CustomStringConvertible {
    /// The default: what systemd's `StateDirectory=sensorhub` creates for hubd.
    public static let systemDefault = "/var/lib/sensorhub"
    /// The environment variable that chooses the state directory.
    public static let environmentVariable = "HUB_STATE_DIR"

    /// Where the choice came from, for messages.
    public enum Source: String, Sendable {
        case option = "--state-dir"
        case environment = "HUB_STATE_DIR"
        case configuration = "the configuration's state.directory"
        case systemDefault = "the default"
    }

    /// An absolute path.
    public let path: String
    public let source: Source

    /// Resolves the state directory; relative paths are taken from the current directory.
    public init(
        option: String?,
        environment: [String: String] = ProcessInfo.processInfo.environment,
        configured: String? = nil
    ) {
        if let option, !option.isEmpty {
            (path, source) = (Self.absolute(option), .option)
        } else if let value = environment[Self.environmentVariable], !value.isEmpty {
            (path, source) = (Self.absolute(value), .environment)
        } else if let configured, !configured.isEmpty {
            (path, source) = (Self.absolute(configured), .configuration)
        } else {
            (path, source) = (Self.systemDefault, .systemDefault)
        }
    }

    public var store: DefaultsStore { DefaultsStore(directory: path) }

    /// Where `hubctl broker set` keeps the broker password (mode 0600).
    public var brokerPasswordFile: String { path + "/broker-password" }

    /// The saved password for `broker` (the first line of its password file); `nil` when it has none.
    /// - Throws: the file's path, when it can't be read.
    public func brokerPassword(for broker: BrokerSettings) throws(UnreadablePasswordFile) -> String? {
        guard let file = broker.passwordFile else { return nil }
        let path = resolve(file)
        guard let data = FileManager.default.contents(atPath: path) else { throw UnreadablePasswordFile(path: path) }
        return String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline).first.map(String.init)
    }

    /// A path from the store, absolute or relative to this directory.
    public func resolve(_ file: String) -> String {
        file.hasPrefix("/") ? file : path + "/" + file
    }

    public var description: String { "\(path) (from \(source.rawValue))" }

    private static func absolute(_ path: String) -> String {
        URL(fileURLWithPath: path).standardizedFileURL.path
    }
}

/// The broker password file the registry names can't be read (another user's, or gone).
public struct UnreadablePasswordFile: Error, Sendable, Hashable {
    public var path: String
}
