import ArgumentParser
import Foundation
import HubCore
import HubSupport
import Mosquitto

extension HubctlCommand {
    /// `hubctl ha …`
    struct HomeAssistant: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "ha",
            abstract: "What hubd publishes for Home Assistant, and removing it.",
            discussion: """
                With homeassistant.enabled in hubd.yaml, hubd publishes each sensor's state to \
                sensorhub/sensor/<id>/state, its availability to sensorhub/sensor/<id>/availability, and \
                retained MQTT discovery configs under the prefix (homeassistant) that make it an entity.
                """,
            subcommands: [Show.self, Clear.self])
    }
}

extension HubctlCommand.HomeAssistant {
    /// The discovery messages for the registry and configuration at hand.
    static func discovery(_ state: StateOptions) async throws -> (
        HomeAssistantDiscovery, DefaultsDocument, StateDirectory
    ) {
        let (configuration, directory) = try await state.resolve()
        let store = StateOptions.registry(configuration: configuration, state: directory)
        let document = try await withStoreErrors { () async throws(StoreError) in try await store.read() }
        let discovery = HomeAssistantDiscovery(
            prefix: configuration.homeAssistant.prefix, hubAvailability: configuration.availabilityTopic,
            hubID: document.broker.clientID, version: SensorHubVersion.current,
            defaultSilence: configuration.silenceTimeout)
        return (discovery, document, directory)
    }

    /// `hubctl ha show [NAME]`
    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "show",
            abstract: "Print the discovery configs, state and availability hubd publishes for a sensor (or all).",
            discussion: """
                Examples:
                  hubctl ha show "front door"
                  hubctl ha show | less
                """)

        @OptionGroup var state: StateOptions
        @Argument(
            help: "One sensor's name (in any case); every sensor and the hub itself when left out.",
            completion: sensorNameCompletion)
        var name: String?

        func run() async throws {
            let (discovery, document, _) = try await HubctlCommand.HomeAssistant.discovery(state)
            let sensors: [Sensor]
            if let name {
                guard let sensor = document.sensor(named: name) else {
                    throw Failure.report(
                        RegistryError.unknownSensor(
                            name, suggestion: SensorRules.closest(to: name, among: document.sensors.map(\.name))))
                }
                sensors = [sensor]
            } else {
                sensors = document.sensors.sortedByName()
                print(Self.shown(discovery.hubConfig))
            }
            for sensor in sensors {
                for config in discovery.configs(for: sensor) { print(Self.shown(config)) }
                print(
                    Self.shown(
                        .init(topic: discovery.stateTopic(sensor), payload: HomeAssistantDiscovery.state(of: sensor))))
                print(
                    Self.shown(
                        .init(
                            topic: discovery.availabilityTopic(sensor),
                            payload: HomeAssistantDiscovery.availability(of: sensor))))
            }
        }

        /// A topic, then its payload (JSON indented), escaped for the terminal.
        static func shown(_ message: HomeAssistantDiscovery.Message) -> String {
            var payload = String(decoding: message.payload, as: UTF8.self)
            if let object = try? JSONSerialization.jsonObject(with: Data(message.payload)),
                let pretty = try? JSONSerialization.data(
                    withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
            {
                payload = String(decoding: pretty, as: UTF8.self)
            }
            return UnsafeText.escaped(message.topic) + "\n" + UnsafeText.escaped(payload, keepingLineBreaks: true)
                + "\n"
        }
    }

    /// `hubctl ha clear`
    struct Clear: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "clear",
            abstract: "Remove every discovery config, state and availability the hub published (a clean uninstall).",
            discussion: """
                Empties, retained, every config under the prefix that the hub published (sensorhub's node), \
                those of sensors removed since included, the sensors' state and availability topics and the alert \
                entities' states: Home \
                Assistant then removes the entities. A running hubd with homeassistant.enabled publishes them \
                again; turn it off (and reload) first.
                """)

        @OptionGroup var state: StateOptions
        @Option(
            parsing: .unconditional,
            help: "How long each step (connecting, subscribing, publishing) may take, in seconds.")
        var timeout: Double = 10

        func run() async throws {
            let (discovery, document, directory) = try await HubctlCommand.HomeAssistant.discovery(state)
            let session = try await BrokerSession(
                directory: directory, store: try await state.registry(), options: nil, purpose: "ha",
                timeout: .milliseconds(Int64(timeout * 1000)))
            let found = Locked(Set<String>())
            let cleared = try await session.run { client in
                // What the broker holds (sensors removed while hubd was not running included), and what the
                // registry says there should be.
                try await BrokerSession.receive(
                    client,
                    subscribing: [
                        [
                            "\(discovery.prefix)/+/sensorhub/+/config", "\(discovery.base)/sensor/+/state",
                            "\(discovery.base)/sensor/+/availability", "\(discovery.alertBase)/+/state",
                        ]
                    ], for: .zero
                ) { message in
                    if message.retain && !message.payload.isEmpty { found.withLock { _ = $0.insert(message.topic) } }
                }
                var topics = found.withLock { $0 }
                for sensor in document.sensors { topics.formUnion(discovery.allConfigTopics(for: sensor)) }
                topics.insert(discovery.hubConfig.topic)
                for topic in topics.sorted() {
                    try await client.publish(topic: topic, payload: [], qos: .atLeastOnce, retain: true)
                }
                return topics.count
            }
            print(
                "Cleared \(cleared) retained topics on \(session.endpoint) (\(found.withLock { $0.count }) held something)."
            )
        }
    }
}
