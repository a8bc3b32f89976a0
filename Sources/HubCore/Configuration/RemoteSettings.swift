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

    /// How the connection is encrypted.
    public enum TLS: String, Sendable, Hashable, CaseIterable {
        /// TLS or no connection (the server's certificate is verified against the system's roots).
        case require
        /// TLS when the server offers it (libpq's default).
        case prefer
        /// Never TLS.
        case disable
    }

    public var host: String
    public var port = 5432
    public var user: String
    public var database: String
    /// From `password`, `password_file` (`$CREDENTIALS_DIRECTORY/…` too) or `$HUB_REMOTE_PASSWORD`; never the URL.
    public var password: String?
    public var mode = Mode.stream
    /// This hub's name in the shared database: every row it writes carries it.
    public var hub: String
    /// Rows sent in one transaction, at most.
    public var batch = 500
    /// How often what arrived is made durable in the queue and sent.
    public var interval: Duration = .seconds(1)
    public var tls = TLS.prefer
    /// `ca_file`: the certificate authorities (PEM) the server's certificate is checked against, instead of the
    /// system's: a database with a certificate of your own CA.
    public var caFile: String?
    /// Use PostGIS (a `geography` column and a GiST index) when the server has the extension.
    public var postgis = true
    /// The longest wait between two attempts while the remote is down.
    public var maximumBackOff: Duration = .seconds(300)

    public init(host: String, port: Int = 5432, user: String, database: String, hub: String) {
        self.host = host
        self.port = port
        self.user = user
        self.database = database
        self.hub = hub
    }

    /// `postgres://user@host:port/database`, without the password.
    public var url: String {
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return "postgres://\(user)@\(shownHost):\(port)/\(database)"
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
        try node.allow(
            ["url", "mode", "hub", "batch", "interval", "tls", "ca_file", "postgis", "max_back_off"],
            secrets: ["password"])
        let url = node["url"]
        guard var settings = try url.value("postgres://user@host:port/database", { try Self.parse($0) }) else {
            throw url.invalid("missing: the database, like postgres://sensorhub@db.example.net:5432/sensors")
        }
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
        if let tls = try node["tls"].value("require, prefer or disable", { TLS(rawValue: $0.lowercased()) }) {
            settings.tls = tls
        }
        if let caFile = try node["ca_file"].filePath() {
            guard FileManager.default.isReadableFile(atPath: caFile) else {
                throw node["ca_file"].invalidValue(caFile, "cannot read the file")
            }
            settings.caFile = caFile
        }
        if let postgis = try node["postgis"].bool() { settings.postgis = postgis }
        if let backOff = try node["max_back_off"].duration(in: .seconds(1)...(.seconds(3600))) {
            settings.maximumBackOff = backOff
        }
        if let password = try node.secret("password"), !password.isEmpty { settings.password = password }
        return settings
    }

    /// The parts of `postgres://user@host:port/database` (or `postgresql://`); the hub's name is left empty.
    static func parse(_ text: String) throws -> RemoteSettings? {
        guard let components = URLComponents(string: text),
            ["postgres", "postgresql"].contains(components.scheme?.lowercased() ?? ""),
            let host = components.host, !host.isEmpty
        else { return nil }
        guard components.password == nil else {
            throw RemoteURLError(
                "the password can't be in the URL: put it in remote.password_file (or $HUB_REMOTE_PASSWORD)")
        }
        guard let user = components.user, !user.isEmpty else {
            throw RemoteURLError("the URL names no user (user@host)")
        }
        let database = String(components.path.drop { $0 == "/" })
        guard !database.isEmpty, !database.contains("/") else {
            throw RemoteURLError("the URL names no database (…/sensors)")
        }
        guard components.query == nil, components.fragment == nil else {
            throw RemoteURLError("the URL takes no ?options: use the remote section's keys (tls, …)")
        }
        var settings = RemoteSettings(
            host: host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host, user: user,
            database: database.removingPercentEncoding ?? database, hub: "")
        if let port = components.port {
            guard (1...65_535).contains(port) else { throw RemoteURLError("the port is 1 to 65535") }
            settings.port = port
        }
        return settings
    }
}

/// Why `remote.url` can't be used.
struct RemoteURLError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
