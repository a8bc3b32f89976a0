/// One key of `hubd.yaml` as the configuration reference tells it (`hubd --config-reference`,
/// docs/configuration.md): its name, what it takes, what hubd does without it, and what it is for.
///
/// Every reader checks its part of the file against such a list (`ConfigNode.allow`), so the reference cannot name a
/// key hubd refuses nor miss one it takes; `ConfigReferenceTests` checks each default against what an empty file
/// gives.
public struct ConfigKey: Sendable, Hashable {
    public var name: String
    /// What it takes, in words: `duration`, `integer 1–64`, `true or false`, `list of backend names`.
    public var type: String
    /// What hubd does without it, written as it would be in the file; `nil` when it has no value then (required
    /// keys say so in `meaning`).
    public var defaultValue: String?
    public var meaning: String
    /// A secret: also taken as `<name>_file`, naming a file that holds it (`$CREDENTIALS_DIRECTORY/…` too).
    public var secret: Bool
    /// Read at start only: SIGHUP leaves it as it was, and the reload's log line names it when it changed.
    public var restart: Bool

    public init(
        _ name: String, _ type: String, default defaultValue: String? = nil, secret: Bool = false,
        restart: Bool = false, _ meaning: String
    ) {
        self.name = name
        self.type = type
        self.defaultValue = defaultValue
        self.meaning = meaning
        self.secret = secret
        self.restart = restart
    }
}

extension ConfigKey {
    /// `ca_file`, which every client of a TLS server takes: the CAs its certificate is checked against.
    public static func caFile(for server: String) -> ConfigKey {
        ConfigKey(
            "ca_file", "file path", "PEM certificates of the CAs to trust for \(server), in place of the system's.")
    }
}

/// One part of `hubd.yaml` in the reference: where it is, what it is for, and its keys.
public struct ConfigSection: Sendable {
    /// Where: `sensors`, `air.alert`, `thresholds[]` (each item of a list), `notifiers.backends.<name>`
    /// (`type: ntfy`) for one kind.
    public var path: String
    public var summary: String
    public var keys: [ConfigKey]
    /// The docs page that tells more, relative to docs/ (`alerts.md#silences`).
    public var more: String?
    /// Read at start only, the whole section (`ConfigKey.restart`).
    public var restart: Bool

    public init(_ path: String, _ summary: String, more: String? = nil, restart: Bool = false, keys: [ConfigKey]) {
        self.path = path
        self.summary = summary
        self.keys = keys
        self.more = more
        self.restart = restart
    }
}

extension ConfigNode {
    /// The node at a dotted path below this one (`sensors.qos`).
    public subscript(path path: String) -> ConfigNode {
        path.split(separator: ".").reduce(self) { $0[String($1)] }
    }

    /// Refuses keys other than `known` (a mistyped key must not silently leave a setting at its default); a secret
    /// is also taken as `<key>_file`. The lists are the configuration reference's (`ConfigKey`), so what it tells
    /// and what hubd takes are one list.
    public func allow(_ known: [ConfigKey]) throws(ConfigurationError) {
        let allowed = known.flatMap { $0.secret ? [$0.name, $0.name + "_file"] : [$0.name] }
        for key in try keys() where !allowed.contains(key) {
            throw self[key].invalid("unknown key (known here: \(allowed.sorted().joined(separator: ", ")))")
        }
    }
}
