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
        guard (1...65535).contains(port) else { throw .invalidSetting("the broker port \(port) is outside 1–65535") }
        if clientID.isEmpty { throw .invalidSetting("the client id is empty") }
        if let username, username.isEmpty { throw .invalidSetting("the user name is empty") }
        if passwordFile != nil && username == nil {
            throw .invalidSetting("a password needs a user name (--username)")
        }
        if let tls, (tls.certificateFile == nil) != (tls.keyFile == nil) {
            throw .invalidSetting("a TLS client certificate needs its key, and the key its certificate")
        }
    }
}
