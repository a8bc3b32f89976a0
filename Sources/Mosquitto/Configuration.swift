import Foundation
import HubSupport

/// MQTT quality of service.
public enum MQTTQoS: Int32, Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Fire and forget.
    case atMostOnce = 0
    /// Acknowledged by the receiver (PUBACK); may arrive more than once.
    case atLeastOnce = 1
    /// Four-way handshake; arrives exactly once.
    case exactlyOnce = 2

    public static func < (lhs: MQTTQoS, rhs: MQTTQoS) -> Bool { lhs.rawValue < rhs.rawValue }
    public var description: String { "QoS \(rawValue)" }
}

/// The MQTT protocol version spoken to the broker.
public enum MQTTProtocolVersion: Sendable, Hashable {
    /// MQTT 3.1.1, what most home firmware speaks.
    case v311
    /// MQTT 5.
    case v5
}

/// How to reach and talk to one broker.
public struct MosquittoConfiguration: Sendable {
    /// Host name or address of the broker.
    public var host: String
    /// TCP port of the broker (1883 plain, 8883 TLS by convention).
    public var port: Int
    /// The client identifier; required when `cleanSession` is false, random when `nil`.
    public var clientID: String?
    /// When false the broker keeps the session (subscriptions, queued QoS 1/2 messages) while the client is away.
    public var cleanSession: Bool
    /// Keep-alive interval, 5 s to 65535 s. It also bounds a connection attempt that never gets a CONNACK.
    public var keepAlive: Duration
    /// User name and password, if the broker requires them.
    public var credentials: Credentials?
    /// TLS settings; `nil` for a plain TCP connection.
    public var tls: TLSConfiguration?
    /// The message the broker publishes for this client if it disappears without disconnecting.
    public var will: Will?
    /// MQTT 3.1.1 or 5. With 5 and `cleanSession` off the session is kept without end (Session Expiry Interval
    /// 0xFFFFFFFF), as 3.1.1 keeps it: until the broker's own `persistent_client_expiration`.
    public var protocolVersion: MQTTProtocolVersion
    /// With MQTT 5: how many QoS 1/2 messages the broker may have sent this client and not had acknowledged (the
    /// Receive Maximum, 1–65535); `nil` leaves libmosquitto's 20. Mosquitto takes it in place of its own
    /// `max_inflight_messages` (20 by default), which is all an MQTT 3.1.1 client gets.
    public var receiveMaximum: Int?
    /// With MQTT 5: a broker that answers "unsupported protocol version" is spoken to in MQTT 3.1.1 from then on,
    /// with a warning, rather than refused.
    public var fallsBackToV311 = false
    /// Bounds of the automatic reconnect back-off: the first retry waits `reconnectDelay.lowerBound`,
    /// each further one twice as long, never more than `reconnectDelay.upperBound` (with ±20 % jitter).
    public var reconnectDelay: ClosedRange<Duration>
    /// How long `connect`, `subscribe`, `unsubscribe` and `publish` wait for the broker's acknowledgement.
    public var operationTimeout: Duration
    /// How long `disconnect` waits for the network thread to finish before giving up on it.
    public var shutdownTimeout: Duration
    /// How many received messages may wait for the consumer; past it the oldest are dropped, logged and counted.
    public var messageBufferLimit: Int
    /// Hold each received QoS 1/2 message's acknowledgement until the consumer confirms it
    /// (`MosquittoClient.confirm(through:)`): the broker then counts as delivered only what the application has
    /// kept. Off by default: libmosquitto acknowledges before the consumer has even seen the message.
    public var holdsAcknowledgements = false
    /// How long the network thread waits for a confirmation before acknowledging anyway (logged).
    public var confirmationTimeout: Duration = .seconds(2)
    /// With `holdsAcknowledgements`: on `disconnect()`, the messages not confirmed yet stay unacknowledged — the
    /// connection is closed without a DISCONNECT, so the broker sends them again to the session's next connection
    /// (which may be another process's, taking the session over) — rather than acknowledged on the way out.
    public var leavesUnconfirmedOnStop = false

    /// A configuration with sensible defaults for a broker on this machine.
    public init(
        host: String = "localhost",
        port: Int = 1883,
        clientID: String? = nil,
        cleanSession: Bool = true,
        keepAlive: Duration = .seconds(60),
        credentials: Credentials? = nil,
        tls: TLSConfiguration? = nil,
        will: Will? = nil,
        protocolVersion: MQTTProtocolVersion = .v311,
        reconnectDelay: ClosedRange<Duration> = .seconds(1)...(.seconds(30)),
        operationTimeout: Duration = .seconds(10),
        shutdownTimeout: Duration = .seconds(5),
        messageBufferLimit: Int = 100_000
    ) {
        self.host = host
        self.port = port
        self.clientID = clientID
        self.cleanSession = cleanSession
        self.keepAlive = keepAlive
        self.credentials = credentials
        self.tls = tls
        self.will = will
        self.protocolVersion = protocolVersion
        self.reconnectDelay = reconnectDelay
        self.operationTimeout = operationTimeout
        self.shutdownTimeout = shutdownTimeout
        self.messageBufferLimit = messageBufferLimit
    }

    /// User name and password for the broker.
    public struct Credentials: Sendable, Hashable {
        public var username: String
        public var password: String?

        public init(username: String, password: String?) {
            self.username = username
            self.password = password
        }
    }

    /// The last will: published by the broker when the client vanishes without a DISCONNECT.
    public struct Will: Sendable, Hashable {
        public var topic: String
        public var payload: [UInt8]
        public var qos: MQTTQoS
        public var retain: Bool

        public init(topic: String, payload: [UInt8], qos: MQTTQoS = .atLeastOnce, retain: Bool = true) {
            self.topic = topic
            self.payload = payload
            self.qos = qos
            self.retain = retain
        }

        public init(topic: String, payload: String, qos: MQTTQoS = .atLeastOnce, retain: Bool = true) {
            self.init(topic: topic, payload: Array(payload.utf8), qos: qos, retain: retain)
        }
    }

    /// Checks what libmosquitto would reject later with a bare `MOSQ_ERR_INVAL`, and says what is wrong.
    public func validate() throws(MosquittoError) {
        func invalid(_ message: String) -> MosquittoError { .invalidConfiguration(message) }
        if host.isEmpty { throw invalid("host is empty") }
        guard (1...65535).contains(port) else { throw invalid("port \(port) is outside 1–65535") }
        let keepAliveSeconds = keepAlive.components.seconds
        // libmosquitto accepts 0 (no keep-alive), but then nothing ends a half-open connection or a connection
        // attempt that never gets a CONNACK: a hub would wait on it forever.
        guard (5...65535).contains(keepAliveSeconds) else {
            throw invalid("keep-alive of \(keepAliveSeconds) s is outside 5–65535 s")
        }
        if let clientID {
            if clientID.isEmpty { throw invalid("client id is empty; leave it unset for a random one") }
            if clientID.utf8.count > 65535 { throw invalid("client id is longer than 65535 bytes") }
        } else if !cleanSession {
            throw invalid("a persistent session (clean session off) needs a fixed client id")
        }
        if reconnectDelay.lowerBound <= .zero {
            throw invalid("the reconnect delay's lower bound must be above zero")
        }
        if operationTimeout <= .zero { throw invalid("the operation timeout must be above zero") }
        if messageBufferLimit < 1 { throw invalid("the message buffer limit must be at least 1") }
        if confirmationTimeout <= .zero { throw invalid("the confirmation timeout must be above zero") }
        if let receiveMaximum, !(1...65535).contains(receiveMaximum) {
            throw invalid("receive maximum \(receiveMaximum) is outside 1–65535")
        }
        if let will {
            if let problem = TopicRules.problemWithPublishTopic(will.topic) {
                throw invalid("will topic: \(problem)")
            }
        }
        if let credentials, credentials.username.isEmpty {
            throw invalid("user name is empty")
        }
        try tls?.validate()
    }
}

/// TLS settings for the broker connection.
public struct TLSConfiguration: Sendable, Hashable {
    /// Where the certificates that may sign the broker's certificate come from.
    public enum TrustRoots: Sendable, Hashable {
        /// The operating system's CA bundle.
        case system
        /// A PEM file of CA certificates.
        case caFile(String)
        /// A directory of hashed PEM CA certificates (`openssl rehash`).
        case caDirectory(String)
    }

    /// A TLS protocol version the client insists on.
    public enum Version: String, Sendable, Hashable {
        case tls1_2 = "tlsv1.2"
        case tls1_3 = "tlsv1.3"
    }

    /// A client certificate and its private key (PEM files), for brokers that require one.
    public struct ClientCertificate: Sendable, Hashable {
        public var certificateFile: String
        public var privateKeyFile: String

        public init(certificateFile: String, privateKeyFile: String) {
            self.certificateFile = certificateFile
            self.privateKeyFile = privateKeyFile
        }
    }

    public var trustRoots: TrustRoots
    public var clientCertificate: ClientCertificate?
    /// `nil` lets OpenSSL negotiate the best version both sides support.
    public var version: Version?
    /// Checks that the broker's certificate names the host connected to. Turn off only for testing.
    public var verifyHostname: Bool

    public init(
        trustRoots: TrustRoots = .system,
        clientCertificate: ClientCertificate? = nil,
        version: Version? = nil,
        verifyHostname: Bool = true
    ) {
        self.trustRoots = trustRoots
        self.clientCertificate = clientCertificate
        self.version = version
        self.verifyHostname = verifyHostname
    }

    func validate() throws(MosquittoError) {
        func readable(_ path: String, _ what: String) throws(MosquittoError) {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                throw .invalidConfiguration("TLS \(what) '\(path)' does not exist")
            }
            guard FileManager.default.isReadableFile(atPath: path) else {
                throw .invalidConfiguration("TLS \(what) '\(path)' is not readable by this user")
            }
        }
        switch trustRoots {
        case .system: break
        case .caFile(let path): try readable(path, "CA file")
        case .caDirectory(let path): try readable(path, "CA directory")
        }
        if let clientCertificate {
            try readable(clientCertificate.certificateFile, "client certificate")
            try readable(clientCertificate.privateKeyFile, "client key")
        }
    }
}
