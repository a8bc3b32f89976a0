import ArgumentParser
import Foundation
import HubCore
import HubSupport
import Mosquitto

extension HubctlCommand {
    /// `hubctl discover`
    struct Discover: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "discover",
            abstract: "List the devices on the broker and the sensor each would make; --add adds them.",
            discussion: """
                Subscribes to what Zigbee2MQTT, Tasmota, ESPHome and Shelly devices publish (their own topics, \
                never '#'), takes the messages the broker keeps — Zigbee2MQTT's retained device list, retained \
                states — which arrive at once, then listens --seconds for devices that publish now. Zigbee2MQTT \
                devices come from its bridge/devices list when the broker has it, else from their state topics.

                For each device it shows the sensor it would make — the one 'hubctl sensors add --preset' makes — \
                and that command; a device whose topic a sensor has already is marked. --add adds every new one, \
                all or none.

                One sensor per device topic: its binary sensor (contact, occupancy, water_leak, smoke…) comes \
                before its measurements (temperature, humidity, pressure…), and its other fields are kept as the \
                sensor's attributes, where threshold rules can watch them. A sensor is named after its device; \
                what a name can't hold ('/' in a Zigbee2MQTT friendly name) becomes a space.

                Examples:
                  hubctl discover
                  hubctl discover --base home/zigbee --seconds 30
                  hubctl discover --family tasmota --family esphome --add
                  hubctl discover --seconds 0 --json | jq -r '.devices[] | select(.registry == "new") | .sensor'

                Exit status: 0 devices were heard; 66 none was; 69 the broker can't be reached; 64 --add was \
                refused (nothing was added).
                """)

        @OptionGroup var state: StateOptions

        @Option(
            name: .customLong("base"),
            help: ArgumentHelp(
                "Zigbee2MQTT's base topic, its mqtt.base_topic (default: hubd.yaml's discovery.zigbee2mqtt_base, else zigbee2mqtt); repeat for several bridges.",
                valueName: "topic"))
        var bases: [String] = []

        @Option(
            name: .customLong("family"),
            help: ArgumentHelp(
                "Listen for this family only — \(DeviceFamily.all.map(\.rawValue).joined(separator: ", ")); repeat for several (default: all).",
                valueName: "family"))
        var families: [String] = []

        @Option(
            parsing: .unconditional,
            help:
                "Seconds to listen for devices publishing now, once the broker's retained messages are in (0: those only)."
        )
        var seconds: Double = 10

        @Flag(help: "Add the new devices' sensors to the registry: all of them, or none when one is refused.")
        var add = false

        @Flag(help: "Print JSON, for scripts.") var json = false

        func validate() throws {
            guard seconds >= 0 && seconds <= 3600 else { throw ValidationError("--seconds is from 0 to 3600") }
            for family in families where !DeviceFamily.all.contains(DeviceFamily(rawValue: family.lowercased())) {
                throw ValidationError(
                    "--family '\(Output.shown(family))' is not a family the hub knows: \(DeviceFamily.all.map(\.rawValue).joined(separator: ", "))"
                )
            }
            for base in bases {
                let trimmed = base.trimmingCharacters(in: CharacterSet(charactersIn: "/"))
                if trimmed.isEmpty || (try? SensorRules.topic(trimmed)) == nil {
                    throw ValidationError(
                        "--base '\(Output.shown(base))' is not a topic (Zigbee2MQTT's mqtt.base_topic, like zigbee2mqtt)"
                    )
                }
            }
        }

        func run() async throws {
            let (configuration, directory) = try await state.resolve()
            let chosen = families.isEmpty ? DeviceFamily.all : families.map { DeviceFamily(rawValue: $0.lowercased()) }
            let discovery = DeviceDiscovery(
                families: chosen, zigbee2mqttBases: bases.isEmpty ? configuration.discovery.zigbee2mqttBases : bases)
            let store = StateOptions.registry(configuration: configuration, state: directory)
            let session = try await BrokerSession(
                directory: directory, store: store, options: nil, purpose: "discover", timeout: .seconds(10))
            let heard = try await session.run { client in
                // Said on standard error before the wait (a silent 10 s looks like a hang), not into --json.
                if seconds > 0 {
                    FileHandle.standardError.write(
                        Data(
                            "hubctl: listening for devices on the broker for \(ValueFormat().format(seconds)) s (--seconds)…\n"
                                .utf8))
                }
                return try await listen(client, discovery, for: .milliseconds(Int(seconds * 1000)))
            }
            let document = try await withStoreErrors { () async throws(StoreError) in try await store.read() }
            var report = DiscoveryReport(heard, document: document)
            if add && !report.new.isEmpty {
                let new = report.new
                let added = try await withStoreErrors { () async throws(StoreError) in
                    try await store.update { document throws(RegistryError) in
                        var added: [Sensor] = []
                        for device in new where document.sensor(onTopic: device.setup.topic) == nil {
                            added.append(try document.addDiscovered(device))
                        }
                        return added
                    }
                }
                report.added = added
            }
            let again =
                (["hubctl", "discover"] + bases.flatMap { ["--base", $0] } + families.flatMap { ["--family", $0] }
                + ["--add"]).map(shellQuoted).joined(separator: " ")
            print(json ? report.json : report.text(adding: add, again: again), terminator: "")
            guard !heard.devices.isEmpty else {
                let time = seconds == 0 ? "in the broker's retained messages" : "in \(ValueFormat().format(seconds)) s"
                Failure.printError(
                    "no devices heard \(time) on \(discovery.filters.joined(separator: ", ")); is the base topic right?"
                        + " (--base: Zigbee2MQTT's mqtt.base_topic)")
                throw ExitCode(Failure.nothingHeard)
            }
        }

        /// Feeds `discovery` what the broker sends until it has sent everything it held — the message hubctl
        /// publishes to itself once subscribed comes back after the retained ones — and `duration` has passed.
        private func listen(
            _ client: MosquittoClient, _ discovery: DeviceDiscovery, for duration: Duration
        ) async throws -> DeviceDiscovery {
            let heard = Locked(discovery)
            try await BrokerSession.receive(
                client, subscribing: [discovery.listFilters, discovery.stateFilters], for: duration
            ) { message in
                heard.withLock { _ = $0.take(topic: message.topic, payload: message.payload, retained: message.retain) }
            }
            return heard.withLock { $0 }
        }
    }
}
