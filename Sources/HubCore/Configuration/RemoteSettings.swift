import Foundation

/// hubd.yaml's `remote` section: a PostgreSQL database that receives this hub's readings, sessions and events
/// through a durable queue (HubRemote). Absent: no remote store.
///
/// ```yaml
/// remote:
///   url: postgres://sensorhub@db.example.net:5432/sensors
///   password_file: $CREDENTIALS_DIRECTORY/remote-password   # or password:, or $HUB_REMOTE_PASSWORD
///   mode: stream            # or record: a mobile session is sent when it ends
///   hub: home               # tags this hub's rows; the machine's host name by default
/// ```
///
/// It lives in HubCore, beside the other sections, so that the one reader checks every key of the file; the
/// database code that uses it is HubRemote's.
public struct RemoteSettings: Sendable, Hashable {
    /// When readings of a mobile sensor's session go out.
    public enum Mode: String, Sendable, Hashable, CaseIterable {
        /// Everything is sent as it arrives.
        case stream
        /// A session's readings wait in the queue until the session ends, then go with it; readings without a
        /// session (fixed sensors) and events other than sessions' are sent as they arrive.
        case record
    }

    /// The database, and how to reach it.
    public var server: DatabaseSettings
    public var mode = Mode.stream
    /// This hub's name in the shared database: every row it writes carries it.
    public var hub: String
    /// Rows sent in one transaction, at most.
    public var batch = 500
    /// How often what arrived is made durable in the queue and sent.
    public var interval: Duration = .seconds(1)
    /// Use PostGIS (a `geography` column and a GiST index) when the server has the extension.
    public var postgis = true
    /// The longest wait between two attempts while the remote is down.
    public var maximumBackOff: Duration = .seconds(300)

    public init(server: DatabaseSettings, hub: String) {
        self.server = server
        self.hub = hub
    }

    /// A hub name: 1–64 letters, digits, `.`, `_` or `-` (a host name fits).
    public static func isValidHubName(_ name: String) -> Bool {
        (1...64).contains(name.count)
            && name.unicodeScalars.allSatisfy {
                ($0.isASCII && CharacterSet.alphanumerics.contains($0)) || $0 == "." || $0 == "_" || $0 == "-"
            }
    }

    /// This machine's host name, the default `hub`.
    public static var hostName: String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count) == 0 else { return "" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Reads the section; `nil` when it is absent or empty. An error names the key.
    static func read(_ node: ConfigNode, hostName: String = RemoteSettings.hostName) throws(ConfigurationError)
        -> RemoteSettings?
    {
        let hasURL = try node["url"].string() != nil
        guard node.isSet || hasURL else { return nil }
        try node.allow(keys)
        var settings = RemoteSettings(server: try DatabaseSettings.read(node, section: "remote"), hub: "")
        if let mode = try node["mode"].value("stream or record", { Mode(rawValue: $0.lowercased()) }) {
            settings.mode = mode
        }
        let hubNode = node["hub"]
        if let hub = try hubNode.value("1 to 64 letters, digits, '.', '_' or '-'", { isValidHubName($0) ? $0 : nil }) {
            settings.hub = hub
        } else {
            guard isValidHubName(hostName) else {
                throw hubNode.invalid(
                    "missing, and the host name '\(hostName)' can't be a hub name: set remote.hub (letters, digits, '.', '_', '-')"
                )
            }
            settings.hub = hostName
        }
        if let batch = try node["batch"].integer(in: 1...5_000) { settings.batch = batch }
        if let interval = try node["interval"].duration(in: .milliseconds(10)...(.seconds(3600))) {
            settings.interval = interval
        }
        if let postgis = try node["postgis"].bool() { settings.postgis = postgis }
        if let backOff = try node["max_back_off"].duration(in: .seconds(1)...(.seconds(3600))) {
            settings.maximumBackOff = backOff
        }
        return settings
    }
}
