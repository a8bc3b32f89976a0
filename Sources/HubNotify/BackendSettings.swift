import HubCore
import Logging

/// A kind of notifier backend: the name `type:` takes, its settings read and checked from `hubd.yaml` (errors name
/// the key path), and the notifier made from them.
///
/// Adding a backend is one file, holding its notifier and a `Settings` type conforming to this, and one line in
/// `BackendSpec.kinds`.
public protocol BackendSettings: Sendable {
    /// What `type:` says for this backend.
    static var type: String { get }
    /// Its keys, besides `type` and the queue's (`DeliveryPolicy.keys`).
    static var keys: [String] { get }
    /// Keys that hold a secret: each may also be given as `<key>_file`, naming a file that holds it.
    static var secrets: [String] { get }
    /// Reads and checks the settings at `node` (`notifiers.backends.<name>`).
    init(_ node: ConfigNode) throws(ConfigurationError)
    /// The backend for one queue.
    func makeNotifier(_ context: BackendContext) throws(ConfigurationError) -> any Notifier
    /// Whether an alert's Acknowledge and Snooze go into its text as signed links (`<public_url>/a/<token>`): for
    /// receivers a person reads that have no buttons the hub can hear (email, Gotify, Slack, Discord…).
    static var linksInText: Bool { get }
    /// Whether it can take back what it sent about an alert group once everything in it is acknowledged (clear a
    /// notification, stop its retries, replace it quietly): it then gets the book's `acknowledged` messages.
    static var takesBack: Bool { get }
}

extension BackendSettings {
    public static var secrets: [String] { [] }
    public static var linksInText: Bool { false }
    public static var takesBack: Bool { false }
}

/// What a backend is made with: its name, its queue's policy, where the hub keeps its state, and the hub's MQTT
/// connection.
public struct BackendContext: Sendable {
    public var name: String
    public var policy: DeliveryPolicy
    public var stateDirectory: String
    public var logger: Logger
    /// How the `mqtt` backend publishes (the agent's own connection); `nil` where there is none.
    public var publish: MQTTPublish?

    /// An HTTP client that ends each attempt at the backend's `timeout` itself.
    func http(caFile: String?, http2: Bool = false) throws(ConfigurationError) -> HTTPDelivery {
        do {
            return try HTTPDelivery(
                caFile: caFile, http2: http2, timeout: policy.timeout, concurrency: policy.concurrency)
        } catch {
            throw .invalid(
                file: nil, key: "notifiers.backends.\(name).ca_file", line: nil,
                reason: "cannot read the certificates in \(caFile ?? ""): \(error)")
        }
    }
}

/// One configured backend: its name, its kind's settings, and its queue's policy.
public struct BackendSpec: Sendable {
    /// Every kind of backend hubd knows, by `type:`.
    static let kinds: [any BackendSettings.Type] = [
        LogNotifier.Settings.self,
        FileNotifier.Settings.self,
        ExecNotifier.Settings.self,
        WebhookNotifier.Settings.self,
        NtfyNotifier.Settings.self,
        MQTTNotifier.Settings.self,
        APNsNotifier.Settings.self,
        WebPushNotifier.Settings.self,
        TelegramNotifier.Settings.self,
        GotifyNotifier.Settings.self,
        ChatWebhookNotifier.ServiceSettings<ChatWebhookNotifier.Discord>.self,
        ChatWebhookNotifier.ServiceSettings<ChatWebhookNotifier.Slack>.self,
        PushoverNotifier.Settings.self,
        MatrixNotifier.Settings.self,
        EmailNotifier.Settings.self,
    ]

    public var name: String
    public var settings: any BackendSettings
    public var policy: DeliveryPolicy
    /// What the configuration said for it: a reload keeps a backend whose fingerprint is the same.
    public var fingerprint: String
    /// Its quiet hours (names from `alerts.quiet_hours`): alert messages below urgent wait for one digest at the
    /// window's end.
    public var quietHours: [String] = []

    public var type: String { Swift.type(of: settings).type }

    /// Reads `notifiers.backends.<name>`: its `type:` and keys, or an `apprise:` URL saying them.
    init(name: String, node: ConfigNode) throws(ConfigurationError) {
        let (node, derived) = try node.expandingApprise()
        let known = Self.kinds.map { $0.type }.joined(separator: ", ")
        let type = try node["type"].required { node throws(ConfigurationError) in
            try node.value("one of \(known)") { $0 }
        }
        guard let kind = Self.kinds.first(where: { $0.type == type }) else {
            throw node["type"].invalid("'\(type)' is not a backend; use \(known)")
        }
        try node.allow(["type", "quiet_hours"] + DeliveryPolicy.keys + kind.keys, secrets: kind.secrets)
        self.name = name
        self.policy = try DeliveryPolicy(node)
        self.quietHours = try node["quiet_hours"].strings() ?? []
        do {
            self.settings = try kind.init(node)
        } catch {
            throw error.said(byAppriseURL: derived)
        }
        self.fingerprint = node.fingerprint
    }

    /// The backend these settings describe.
    func makeNotifier(stateDirectory: String, logger: Logger, publish: MQTTPublish?) throws(ConfigurationError)
        -> any Notifier
    {
        try settings.makeNotifier(
            BackendContext(name: name, policy: policy, stateDirectory: stateDirectory, logger: logger, publish: publish)
        )
    }
}

extension DeliveryPolicy {
    /// The queue's keys, which every backend takes.
    static let keys = ["queue_size", "overflow", "concurrency", "timeout", "retry_delay", "retry_max_delay", "max_age"]

    /// Reads the queue's keys of a backend at `node`.
    init(_ node: ConfigNode) throws(ConfigurationError) {
        self.init()
        if let size = try node["queue_size"].integer(in: 1...1_000_000) { capacity = size }
        if let value = try node["overflow"].value("drop_oldest or drop_newest", { Overflow(rawValue: $0) }) {
            overflow = value
        }
        if let value = try node["concurrency"].integer(in: 1...64) { concurrency = value }
        if let value = try node["timeout"].duration() { timeout = value }
        if let value = try node["retry_delay"].duration() { initialDelay = value }
        if let value = try node["retry_max_delay"].duration() { maximumDelay = value }
        if let value = try node["max_age"].duration() { maximumAge = value }
    }
}
