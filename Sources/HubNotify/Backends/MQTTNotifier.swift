import HubCore

/// Publishes a message; `done` is told once: nil when the broker has it (PUBACK for QoS 1), else why not (not
/// connected, `timeout` passed first, or `PublishRefused` for good). It returns at once; `done` may run on any thread.
public typealias MQTTPublish =
    @Sendable (
        _ topic: String, _ payload: [UInt8], _ qos: Int, _ retain: Bool, _ timeout: Duration,
        _ done: @escaping @Sendable ((any Error)?) -> Void
    ) -> Void

/// `mqtt`: republishes the notification as JSON over the hub's own connection.
struct MQTTNotifier: StartingNotifier {
    let topic: Template
    let qos: Int
    let retain: Bool
    /// The backend's `timeout`: the client's network thread enforces it for each publish.
    let timeout: Duration
    let publish: MQTTPublish

    /// No timer task per attempt (the queue's): a publish's deadline is kept by its client's network thread.
    var enforcesTimeout: Bool { true }

    /// Up to 100 publishes in flight at once: one at a time, each waiting for its PUBACK, the backend fell seconds
    /// behind a burst of 10k changes a second.
    var batchSize: Int { 100 }

    func start(_ notification: Notification, done: @escaping @Sendable (DeliveryResult) -> Void) {
        let topic = topic.render(notification.event, id: notification.id)
        publish(topic, notification.json, qos, retain, timeout) { error in
            switch error {
            case nil: done(.delivered)
            case let refused as PublishRefused: done(.failed(reason: "publish to \(topic): \(refused)"))
            case let error?: done(.retry(reason: "publish to \(topic): \(error)"))
            }
        }
    }
}

extension MQTTNotifier {
    struct Settings: BackendSettings {
        static let type = "mqtt"
        static let summary =
            "Each notification as JSON published to hubd's MQTT broker, for Home Assistant, Node-RED and the like."
        static let keys = [
            ConfigKey(
                "topic", "template", default: "\"sensorhub/events/{sensor}\"",
                "The topic to publish to, with the rules' placeholders; each topic's notifications go in order."),
            ConfigKey(
                "qos", "integer 0–2", default: "1",
                "The MQTT quality of service of the messages."),
            ConfigKey(
                "retain", "true or false", default: "false",
                "Publish the messages retained, so that a client subscribing later gets each topic's latest."),
        ]
        var topic: Template
        var qos: Int
        var retain: Bool

        init(_ node: ConfigNode) throws(ConfigurationError) {
            topic = try node["topic"].template() ?? Template.literal("sensorhub/events/{sensor}")
            qos = try node["qos"].integer(in: 0...2) ?? 1
            retain = try node["retain"].bool() ?? false
        }

        func makeNotifier(_ context: BackendContext) throws(ConfigurationError) -> any Notifier {
            guard let publish = context.publish else {
                throw .invalid(
                    file: nil, key: "notifiers.backends.\(context.name)", line: nil,
                    reason: "the mqtt backend needs the hub's MQTT connection")
            }
            return MQTTNotifier(
                topic: topic, qos: qos, retain: retain, timeout: context.policy.timeout, publish: publish)
        }
    }
}
