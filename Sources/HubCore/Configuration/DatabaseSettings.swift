import Foundation

/// A PostgreSQL database and how to reach it: what `remote:` (where readings are sent) and `store:` (where the
/// registry lives, shared by several agents) both name.
///
/// ```yaml
/// url: postgres://sensorhub@db.example.net:5432/sensors
/// password_file: $CREDENTIALS_DIRECTORY/db-password   # or password:, or $HUB_<SECTION>_PASSWORD
/// tls: prefer               # require, prefer or disable
/// ca_file: /etc/ssl/certs/my-ca.pem
/// ```
public struct DatabaseSettings: Sendable, Hashable {
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
    /// From `password`, `password_file` (`$CREDENTIALS_DIRECTORY/…` too) or `$HUB_<SECTION>_PASSWORD`; never the URL.
    public var password: String?
    public var tls = TLS.prefer
    /// `ca_file`: the certificate authorities (PEM) the server's certificate is checked against, instead of the
    /// system's: a database with a certificate of your own CA.
    public var caFile: String?

    public init(host: String, port: Int = 5432, user: String, database: String) {
        self.host = host
        self.port = port
        self.user = user
        self.database = database
    }

    /// `postgres://user@host:port/database`, without the password.
    public var url: String {
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return "postgres://\(user)@\(shownHost):\(port)/\(database)"
    }

    /// Reads `url`, the password, `tls` and `ca_file` of `node` (the section `section`); an error names the key.
    static func read(_ node: ConfigNode, section: String) throws(ConfigurationError) -> DatabaseSettings {
        let url = node["url"]
        guard
            var settings = try url.value(
                "postgres://user@host:port/database", { try Self.parse($0, section: section) })
        else {
            throw url.invalid("missing: the database, like postgres://sensorhub@db.example.net:5432/sensors")
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
        if let password = try node.secret("password"), !password.isEmpty { settings.password = password }
        return settings
    }

    /// `postgres://user@host:port/database` given on a command line (the password comes separately); the error says
    /// what is wrong with it.
    public init(url text: String, option: String) throws(DatabaseURLError) {
        do {
            guard let parsed = try Self.parse(text, section: "store", passwordGoes: "--password-file") else {
                throw DatabaseURLError("\(option): '\(text)' is not postgres://user@host:port/database")
            }
            self = parsed
        } catch let error as DatabaseURLError {
            throw DatabaseURLError(error.description.hasPrefix(option) ? error.description : "\(option): \(error)")
        } catch {
            throw DatabaseURLError("\(option): \(error)")
        }
    }

    /// The parts of `postgres://user@host:port/database` (or `postgresql://`).
    /// - Parameter passwordGoes: where the password goes instead (`<section>.password_file` by default).
    static func parse(_ text: String, section: String, passwordGoes: String? = nil) throws -> DatabaseSettings? {
        guard let components = URLComponents(string: text),
            ["postgres", "postgresql"].contains(components.scheme?.lowercased() ?? ""),
            let host = components.host, !host.isEmpty
        else { return nil }
        guard components.password == nil else {
            throw DatabaseURLError(
                "the password can't be in the URL: put it in \(passwordGoes ?? section + ".password_file") (or"
                    + " $HUB_\(section.uppercased())_PASSWORD)")
        }
        guard let user = components.user, !user.isEmpty else {
            throw DatabaseURLError("the URL names no user (user@host)")
        }
        let database = String(components.path.drop { $0 == "/" })
        guard !database.isEmpty, !database.contains("/") else {
            throw DatabaseURLError("the URL names no database (…/sensors)")
        }
        guard components.query == nil, components.fragment == nil else {
            throw DatabaseURLError("the URL takes no ?options: use the \(section) section's keys (tls, …)")
        }
        var settings = DatabaseSettings(
            host: host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host, user: user,
            database: database.removingPercentEncoding ?? database)
        if let port = components.port {
            guard (1...65_535).contains(port) else { throw DatabaseURLError("the port is 1 to 65535") }
            settings.port = port
        }
        return settings
    }
}

/// Why a database URL can't be used.
public struct DatabaseURLError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
