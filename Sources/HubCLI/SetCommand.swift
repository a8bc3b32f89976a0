import ArgumentParser
import Foundation
import HubCore

extension HubctlCommand.Sensors {
    /// `hubctl sensors set NAME …`
    struct Set: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set",
            abstract: "Change how a sensor reads its device: kind, value path, map, unit, availability, silence.",
            discussion: """
                Only what is given changes; an empty --unit or --availability removes it, --plain makes the \
                payload the status again. A running hub follows the change at once.

                Examples:
                  hubctl sensors set "front door" --map true=closed,false=open
                  hubctl sensors set cellar --kind numeric --unit °C --decimals 1
                  hubctl sensors set kitchen --availability home/kitchen/online
                  hubctl sensors set porch --value occupancy
                  hubctl sensors set "garden uv" --bands "0=Low,2.5=Moderate,5.5=High,7.5=Very High,10.5=Extreme"
                """)

        @OptionGroup var state: StateOptions
        @Argument(help: "The sensor's name (in any case).", completion: sensorNameCompletion) var name: String
        @Option(help: "What its messages carry: status, numeric or particulate.") var kind: String?
        @OptionGroup(title: "Devices") var device: DeviceOptions
        @Flag(help: "Forget the value path, map, unit, decimals, range and bands: the payload is the status.")
        var plain = false
        @Option(
            help: ArgumentHelp(
                "Silence after which it counts as offline, like 90s, 10m or 2h; 'default' for the hub's.",
                valueName: "duration"))
        var silenceTimeout: String?
        @Flag(help: "Print the sensor as JSON.") var json = false

        func validate() throws {
            try SensorKind.validate(option: kind)
            _ = try device.parsed
            if let silenceTimeout, silenceTimeout != "default", DurationText.parse(silenceTimeout) == nil {
                throw ValidationError("--silence-timeout '\(silenceTimeout)' is not a duration like 90s, 10m or 2h")
            }
            if device.preset != nil {
                throw ValidationError(
                    "--preset is for 'sensors add', where it gives the topic too; here, change --value, --map, --unit"
                        + " or --availability")
            }
            if plain && (device.value != nil || device.map != nil) {
                throw ValidationError("--plain forgets the value path and map: it does not go with --value or --map")
            }
        }

        func run() async throws {
            let store = try await state.registry()
            let sensor = try await withStoreErrors { () async throws(StoreError) in
                try await store.update { document throws(RegistryError) in
                    guard let current = document.sensor(named: name) else {
                        return try document.configureSensor(named: name) { _ in }
                    }
                    let start = DeviceFamily.Setup(
                        topic: "", kind: current.kind, format: plain ? ValueFormat() : current.format,
                        availability: current.availability, silenceTimeout: current.silenceTimeout)
                    let setup: DeviceFamily.Setup?
                    do {
                        setup = try device.setup(for: current.name, kind: kind.map(SensorKind.init), start: start)
                    } catch {
                        throw .invalidSetting("\(error)")
                    }
                    return try document.configureSensor(named: name) { sensor in
                        if let setup {
                            sensor.kind = setup.kind
                            sensor.format = setup.format
                            sensor.availability = setup.availability
                        }
                        switch silenceTimeout {
                        case nil: break
                        case "default": sensor.silenceTimeout = nil
                        case let text?: sensor.silenceTimeout = DurationText.parse(text)
                        }
                    }
                }
            }
            if json {
                print(Output.json(sensor))
            } else {
                print("Changed '\(sensor.name)' on topic '\(sensor.topic)'\(Output.deviceSummary(sensor)).")
            }
        }
    }
}
