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
    /// What this kind is for, in one sentence: the configuration reference's summary of its section.
    static var summary: String { get }
    /// Its keys, besides the ones every backend takes (`BackendSpec.commonKeys`, `DeliveryPolicy.keys`); those with
    /// `secret` may also be given as `<key>_file`, naming a file that holds it.
    static var keys: [ConfigKey] { get }
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

    /// The keys every backend takes besides the queue's: `apprise` (and `apprise_file`) is replaced by the keys its
    /// URL says before the others are checked (`expandingApprise`).
    static let commonKeys: [ConfigKey] = [
        ConfigKey(
            "type", "one of: " + kinds.map { $0.type }.joined(separator: ", "),
            "Required unless `apprise` is given: the kind of backend, whose own keys are listed in its section below."),
        ConfigKey(
            "apprise", "URL", secret: true,
            "The backend as one Apprise URL (`tgram://<bot token>/<chat id>`, `ntfys://<token>@<host>/<topic>`, …) in"
                + " place of `type` and the kind's keys; keys written beside it override the URL's. The URL holds a"
                + " secret: better `apprise_file`."),
        ConfigKey(
            "quiet_hours", "list of quiet-hours names",
            "Windows from `alerts.quiet_hours` in which alert messages below urgent skip this backend; when a window"
                + " ends, it gets one digest of what it missed. Plain rules' notifications are not held."),
    ]

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
        try node.allow(Self.commonKeys + DeliveryPolicy.keys + kind.keys)
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
    static let keys: [ConfigKey] = [
        ConfigKey(
            "queue_size", "integer 1–1000000", default: "1000",
            "Notifications held in memory for this backend, waiting or being retried; the outbox on disk holds them"
                + " too. When it is full, `overflow` says which one is dropped."),
        ConfigKey(
            "overflow", "one of: drop_oldest, drop_newest", default: "drop_oldest",
            "What a full queue drops to take a new notification: the oldest waiting one, or the new one. Drops are"
                + " counted and logged at most every 10 s."),
        ConfigKey(
            "concurrency", "integer 1–64", default: "1",
            "Attempts in flight at once for this backend."),
        ConfigKey(
            "timeout", "duration", default: "10s",
            "How long one attempt may take before it counts as failed and is retried; an `exec` command is killed"
                + " then, and email gives up waiting for the server."),
        ConfigKey(
            "retry_delay", "duration", default: "2s",
            "The delay before the first retry; each retry doubles it, with 50–100 % random jitter, up to"
                + " `retry_max_delay`. A receiver's `Retry-After` is honoured when it asks for longer."),
        ConfigKey(
            "retry_max_delay", "duration", default: "5m",
            "The longest delay between two retries."),
        ConfigKey(
            "max_age", "duration", default: "24h",
            "Retrying stops when the next attempt would come later than this after the notification was made: it is"
                + " given up on, logged as an error and counted."),
    ]

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
