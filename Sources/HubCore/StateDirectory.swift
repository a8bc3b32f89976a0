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

extension StateDirectory {
    /// Takes group and other permissions off what the state directory holds (files 0600, folders 0700, sockets
    /// left alone), two levels down; returns the paths changed, relative to the directory. hubd does it at start:
    /// an earlier hubd run by hand under umask 0022 left history.sqlite and hubd.status.json world-readable.
    public func restrictPermissions() -> [String] {
        var changed: [String] = []
        func visit(_ directory: String, relative: String, depth: Int) {
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return }
            for name in names.sorted() {
                let full = "\(directory)/\(name)"
                var status = stat()
                guard lstat(full, &status) == 0, status.st_uid == geteuid() else { continue }
                let kind = status.st_mode & S_IFMT
                guard kind == S_IFREG || kind == S_IFDIR else { continue }
                if status.st_mode & 0o077 != 0, chmod(full, status.st_mode & 0o700) == 0 {
                    changed.append(relative + name)
                }
                if kind == S_IFDIR, depth > 0 { visit(full, relative: relative + name + "/", depth: depth - 1) }
            }
        }
        var status = stat()
        if stat(path, &status) == 0, status.st_uid == geteuid(), status.st_mode & 0o077 != 0,
            chmod(path, status.st_mode & 0o700) == 0
        {
            changed.append(".")
        }
        visit(path, relative: "", depth: 1)
        return changed
    }
}
