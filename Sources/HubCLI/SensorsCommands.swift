import ArgumentParser
import Foundation
import HubCore

extension HubctlCommand {
    /// `hubctl sensors …`
    struct Sensors: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "sensors",
            abstract: "Add, list, show, rename, remove, import and export sensors.",
            discussion: """
                A sensor is a name (1–64 letters, digits, spaces, '-', '_' or '.'; unique regardless of case) \
                and the MQTT topic its firmware publishes its status to. It shows 'Waiting' until its first \
                message.
                """,
            subcommands: [
                Add.self, List.self, Show.self, Set.self, Rename.self, Remove.self, Import.self, Export.self,
            ],
            defaultSubcommand: List.self,
            // The singular works too (`hubctl sensor list`), as people type it.
            aliases: ["sensor"]
        )
    }
}

extension HubctlCommand.Sensors {
    /// `hubctl sensors add NAME`
    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "add",
            abstract: "Add a sensor.",
            discussion: """
                Its topic is the one the topic template makes from its name — by default the name itself, as \
                the original firmware publishes — unless --topic gives another.

                Examples:
                  hubctl sensors add kitchen
                  hubctl sensors add "front door" --topic home/front-door/status
                  hubctl sensors add garage --topic-template 'home/{name}/status'
                  hubctl sensors add "living room air" --kind particulate --silence-timeout 15m
                  hubctl sensors add "front door" --preset zigbee2mqtt --value contact
                  hubctl sensors add greenhouse --preset tasmota --device tasmota_5A1B2C
                  hubctl sensors add "lounge temperature" --preset esphome --device lounge/sensor/temperature
                  hubctl sensors add "bath humidity" --preset shelly --device shellyplusht-08b61f/humidity:0
                  hubctl sensors add cellar --topic home/cellar --value temperature --kind numeric --unit °C

                A device publishing JSON needs --value (where its value is); a preset or a known field name \
                (contact, occupancy, temperature, humidity, battery…) fills in the map, unit and range. The \
                payload's other fields are kept as attributes. 'hubctl discover' lists the devices on the broker \
                with the command that adds each.
                """)

        @OptionGroup var state: StateOptions

        @Argument(help: "The sensor's name.")
        var name: String

        @Option(help: "The MQTT topic its firmware publishes to (default: from the topic template).")
        var topic: String?

        @Option(
            help: ArgumentHelp(
                "How a topic follows from a name; {name} stands for the name (default: the configuration's sensors.topic_template, else {name}).",
                valueName: "template"))
        var topicTemplate: String?

        @Option(help: "What its messages carry: status (default), numeric (a number with a unit) or particulate.")
        var kind: String?

        @OptionGroup(title: "Devices") var device: DeviceOptions

        @Option(
            help: ArgumentHelp(
                "Silence after which it counts as offline, like 90s, 10m or 2h (default: the hub's).",
                valueName: "duration"))
        var silenceTimeout: String?

        @Flag(help: "Print the new sensor as JSON.") var json = false

        func validate() throws {
            try SensorKind.validate(option: kind)
            _ = try device.setup(for: name, kind: kind.map(SensorKind.init(rawValue:)))
            if device.preset != nil && topicTemplate != nil {
                throw ValidationError("--preset gives the topic: --topic-template does not go with it")
            }
            if let silenceTimeout, DurationText.parse(silenceTimeout) == nil {
                throw ValidationError("--silence-timeout '\(silenceTimeout)' is not a duration like 90s, 10m or 2h")
            }
            if topic != nil && topicTemplate != nil {
                throw ValidationError("--topic and --topic-template do not go together")
            }
        }

        func run() async throws {
            let (configuration, directory) = try await state.resolve()
            let store = StateOptions.registry(configuration: configuration, state: directory)
            let template: TopicTemplate
            do {
                template = try TopicTemplate.from(option: topicTemplate, configured: configuration.topicTemplate)
            } catch {
                throw Failure.report(error)
            }
            let setup = try device.setup(for: name, kind: kind.map(SensorKind.init(rawValue:)))
            let sensor = try await withStoreErrors { () async throws(StoreError) in
                try await store.update { document throws(RegistryError) in
                    try document.addSensor(
                        named: name, topic: topic ?? setup.flatMap { $0.topic.isEmpty ? nil : $0.topic },
                        template: template, kind: setup?.kind ?? kind.map(SensorKind.init(rawValue:)) ?? .status,
                        silenceTimeout: silenceTimeout.flatMap(DurationText.parse) ?? setup?.silenceTimeout,
                        format: setup?.format ?? ValueFormat(), availability: setup?.availability)
                }
            }
            if json {
                print(Output.json(sensor))
            } else {
                print(
                    "Added '\(sensor.name)' on topic '\(sensor.topic)'\(Output.deviceSummary(sensor))."
                        + " It shows Waiting until its first message.")
            }
        }
    }

    /// `hubctl sensors list`
    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list",
            abstract: "List the sensors with their status.",
            discussion: """
                Examples:
                  hubctl sensors list
                  hubctl sensors list --json | jq -r '.[] | select(.status == "open") | .name'
                """)

        @OptionGroup var state: StateOptions
        @OptionGroup var clock: ClockOptions
        @Flag(help: "Print JSON, for scripts.") var json = false

        func run() async throws {
            let store = try await state.registryWithStatuses()
            let document = try await withStoreErrors { () async throws(StoreError) in try await store.read() }
            if json {
                print(Output.json(document.sensors), terminator: "")
            } else {
                print(Output.table(document.sensors, now: clock.current), terminator: "")
            }
        }
    }

    /// `hubctl sensors show NAME`
    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "show",
            abstract: "Show one sensor.",
            discussion: """
                Examples:
                  hubctl sensors show kitchen
                  hubctl sensors show kitchen --json
                """)

        @OptionGroup var state: StateOptions
        @OptionGroup var clock: ClockOptions
        @Argument(help: "The sensor's name (in any case).", completion: sensorNameCompletion) var name: String
        @Flag(help: "Print JSON, for scripts.") var json = false

        func run() async throws {
            let store = try await state.registryWithStatuses()
            let document = try await withStoreErrors { () async throws(StoreError) in try await store.read() }
            guard let sensor = document.sensor(named: name) else {
                throw Failure.report(
                    RegistryError.unknownSensor(
                        name, suggestion: SensorRules.closest(to: name, among: document.sensors.map(\.name))))
            }
            print(json ? Output.json(sensor) : Output.details(sensor, now: clock.current), terminator: json ? "\n" : "")
        }
    }

    /// `hubctl sensors rename OLD NEW`
    struct Rename: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rename",
            abstract: "Rename a sensor; its topic stays unless --retopic.",
            discussion: """
                The firmware keeps publishing to the same topic, so by default only the name changes. \
                --retopic gives it the topic the template makes from the new name instead (reprogram the \
                firmware to match).

                Examples:
                  hubctl sensors rename kitchen "kitchen window"
                  hubctl sensors rename kitchen pantry --retopic
                """)

        @OptionGroup var state: StateOptions
        @Argument(help: "The current name (in any case).", completion: sensorNameCompletion) var oldName: String
        @Argument(help: "The new name.") var newName: String
        @Flag(help: "Also change the topic to the one the template makes from the new name.") var retopic = false
        @Option(
            help: ArgumentHelp(
                "The topic template for --retopic (default: the configuration's sensors.topic_template, else {name}).",
                valueName: "template"))
        var topicTemplate: String?

        func run() async throws {
            let (configuration, directory) = try await state.resolve()
            let store = StateOptions.registry(configuration: configuration, state: directory)
            let template: TopicTemplate?
            do {
                template =
                    retopic
                    ? try TopicTemplate.from(option: topicTemplate, configured: configuration.topicTemplate) : nil
            } catch {
                throw Failure.report(error)
            }
            let (before, after) = try await withStoreErrors { () async throws(StoreError) in
                try await store.update { document throws(RegistryError) in
                    let before = document.sensor(named: oldName)
                    let after = try document.renameSensor(oldName, to: newName, retopic: template)
                    return (before, after)
                }
            }
            let topicNote =
                before?.topic == after.topic ? "its topic stays '\(after.topic)'" : "its topic is now '\(after.topic)'"
            print("Renamed '\(before?.name ?? oldName)' to '\(after.name)'; \(topicNote).")
        }
    }

    /// `hubctl sensors remove NAME`
    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "remove",
            abstract: "Remove a sensor.",
            discussion: """
                Examples:
                  hubctl sensors remove kitchen
                """)

        @OptionGroup var state: StateOptions
        @Argument(help: "The sensor's name (in any case).", completion: sensorNameCompletion) var name: String

        func run() async throws {
            let store = try await state.registry()
            let removed = try await withStoreErrors { () async throws(StoreError) in
                try await store.update { document throws(RegistryError) in try document.removeSensor(named: name) }
            }
            print("Removed '\(removed.name)' (topic '\(removed.topic)').")
        }
    }
}

extension SensorKind {
    /// Checks a `--kind` option.
    static func validate(option: String?) throws {
        guard let option, !known.map(\.rawValue).contains(option) else { return }
        throw ValidationError("--kind must be one of: \(known.map(\.rawValue).joined(separator: ", "))")
    }
}

extension TopicTemplate {
    /// The template from `--topic-template`, else the configuration's `sensors.topic_template` (which
    /// `$HUB_SENSORS_TOPIC_TEMPLATE` overrides), else `{name}`.
    static func from(option: String?, configured: TopicTemplate) throws(RegistryError) -> TopicTemplate {
        if let option { return try TopicTemplate(option) }
        return configured
    }
}
