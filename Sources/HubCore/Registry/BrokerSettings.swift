import Foundation
import HubSupport

/// The MQTT broker the hub connects to, as kept in the defaults store (`broker`).
///
/// The password itself is not in the store: `passwordFile` refers to a file of its own (mode 0600), by default
/// `broker-password` in the state directory, written by `hubctl broker set --password-file`.
public struct BrokerSettings: Sendable, Hashable {
    public var host: String
    public var port: Int
    /// Fixed, so the broker keeps the hub's session (and its queued QoS 1 messages) while it restarts.
    public var clientID: String
    public var username: String?
    /// Path of the file holding the password: absolute, or relative to the state directory.
    public var passwordFile: String?
    public var tls: TLS?
    var unknownFields = UnknownFields()

    public init(
        host: String = "localhost",
        port: Int = 1883,
        clientID: String = "sensorhub",
        username: String? = nil,
        passwordFile: String? = nil,
        tls: TLS? = nil
    ) {
        self.host = host
        self.port = port
        self.clientID = clientID
        self.username = username
        self.passwordFile = passwordFile
        self.tls = tls
    }

    /// TLS towards the broker.
    public struct TLS: Sendable, Hashable {
        /// A PEM file of CA certificates; `nil` (with no directory) means the system's CAs.
        public var caFile: String?
        /// A directory of hashed CA certificates.
        public var caDirectory: String?
        public var certificateFile: String?
        public var keyFile: String?
        /// On unless turned off for testing.
        public var verifyHostname: Bool
        var unknownFields = UnknownFields()

        public init(
            caFile: String? = nil,
            caDirectory: String? = nil,
            certificateFile: String? = nil,
            keyFile: String? = nil,
            verifyHostname: Bool = true
        ) {
            self.caFile = caFile
            self.caDirectory = caDirectory
            self.certificateFile = certificateFile
            self.keyFile = keyFile
            self.verifyHostname = verifyHostname
        }
    }

    /// Checks what can be checked without the network; the message names the setting.
    public func validate() throws(RegistryError) {
        if host.isEmpty { throw .invalidSetting("the broker host is empty") }
        if let problem = Self.problem(withHost: host) { throw .invalidSetting(problem) }
        guard (1...65535).contains(port) else { throw .invalidSetting("the broker port \(port) is outside 1–65535") }
        if clientID.isEmpty { throw .invalidSetting("the client id is empty") }
        if let username, username.isEmpty { throw .invalidSetting("the user name is empty") }
        let texts = [
            ("the client id", clientID), ("the user name", username), ("the password file", passwordFile),
            ("the TLS CA file", tls?.caFile), ("the TLS CA directory", tls?.caDirectory),
            ("the TLS certificate file", tls?.certificateFile), ("the TLS key file", tls?.keyFile),
        ]
        for case (let field, let text?) in texts {
            if let problem = Self.problem(with: text, field: field) { throw .invalidSetting(problem) }
        }
        if passwordFile != nil && username == nil {
            throw .invalidSetting("a password needs a user name (--username)")
        }
        if let tls, (tls.certificateFile == nil) != (tls.keyFile == nil) {
            throw .invalidSetting("a TLS client certificate needs its key, and the key its certificate")
        }
    }
}

extension BrokerSettings {
    /// What is wrong with `text` as the setting `field` ("the client id"): control or formatting characters.
    static func problem(with text: String, field: String) -> String? {
        UnsafeText.problem(in: text).map { "\(field) '\(UnsafeText.escaped(text))' \($0)" }
    }

    /// What is wrong with `host` as the broker's host, or `nil`: it must be a host name (ASCII letters, digits,
    /// `-` and `_` in dot-separated labels, as DNS and /etc/hosts take them) or an IPv4 or IPv6 address.
    public static func problem(withHost host: String) -> String? {
        if let problem = problem(with: host, field: "the broker host") { return problem }
        if isIPAddress(host) || isHostName(host) { return nil }
        return "the broker host '\(UnsafeText.escaped(host))' is not a host name or an IP address: a host name is"
            + " letters, digits and '-' in labels of 1–63 separated by dots (broker.lan, mqtt.example.com), at most"
            + " 253 in all, with no spaces; an address is like 192.168.1.10 or fd00::1 (no brackets)"
    }

    private static func isIPAddress(_ text: String) -> Bool {
        var buffer = in6_addr()
        if inet_pton(AF_INET, text, &buffer) == 1 { return true }
        // An IPv6 address, perhaps with a zone (fe80::1%eth0).
        let parts = text.split(separator: "%", maxSplits: 1, omittingEmptySubsequences: false)
        if parts.count == 2, parts[1].isEmpty || !parts[1].utf8.allSatisfy(isHostNameByte) { return false }
        return text.contains(":") && inet_pton(AF_INET6, String(parts[0]), &buffer) == 1
    }

    private static func isHostName(_ text: String) -> Bool {
        let name = text.hasSuffix(".") ? text.dropLast() : Substring(text)
        guard !name.isEmpty, name.utf8.count <= 253 else { return false }
        return name.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { label in
            (1...63).contains(label.utf8.count) && label.utf8.allSatisfy(isHostNameByte)
                && label.first != "-" && label.last != "-"
        }
    }

    private static func isHostNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
            true
        default: false
        }
    }
}
