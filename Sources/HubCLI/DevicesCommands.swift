import ArgumentParser
import Foundation
import HubCore
import HubNotify

extension HubctlCommand {
    /// `hubctl devices …`: the phones and browsers that get push notifications, and what each wants.
    struct Devices: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "devices",
            abstract: "Register the phones and browsers that get push notifications, and choose what each gets.",
            discussion: """
                A device is an APNs device token (an iPhone) or a browser's Web Push subscription. Each is stored \
                encrypted (AES-GCM) in devices.json in the state directory, under a key in device-key (mode 0600); \
                the same device is stored once. Each device chooses its sensors (names or globs, as in a rule's \
                sensors:) and its events (changed, silent, offline, recovered, air_quality, threshold, \
                discovered); a device that chose nothing gets every notification. An apns or webpush backend sends \
                each notification to the devices that chose it; one the push service says is gone is removed by \
                hubd.

                Examples:
                  hubctl devices add "$TOKEN"                   # 64 hex digits, from the app
                  hubctl devices add "$TOKEN" --sensors 'door*,kitchen' --events changed
                  hubctl devices add "$(cat subscription.json)"  # PushSubscription.toJSON()
                  hubctl devices list
                  hubctl devices edit 3f9c2a1b7e4d5c60 --events offline,recovered
                  hubctl devices edit 3f9c2a1b7e4d5c60 --all-sensors --all-events
                  hubctl devices remove 3f9c2a1b7e4d5c60
                """,
            subcommands: [Add.self, List.self, Edit.self, Remove.self],
            // The singular works too (`hubctl sensor list`), as people type it.
            aliases: ["device"]
        )
    }
}

/// `--sensors`, `--events` and their `--all-…` opposites, shared by `add` and `edit`.
struct ChoiceOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Sensor names or globs, comma-separated (door*,kitchen); repeatable. Default: every sensor.",
            valueName: "globs"))
    var sensors: [String] = []

    @Option(
        help: ArgumentHelp(
            "Event kinds, comma-separated: changed, silent, offline, recovered, air_quality, threshold, discovered.",
            valueName: "kinds"))
    var events: [String] = []

    @Flag(help: "Every sensor (clears --sensors).") var allSensors = false
    @Flag(help: "Every kind of event (clears --events).") var allEvents = false

    func validate() throws {
        if allSensors && !sensors.isEmpty { throw ValidationError("--sensors and --all-sensors say opposite things") }
        if allEvents && !events.isEmpty { throw ValidationError("--events and --all-events say opposite things") }
    }

    /// What was said: a list, `[]` for all, `nil` for nothing said.
    var given: (sensors: [String]?, events: [String]?) {
        func items(_ values: [String], all: Bool) -> [String]? {
            if all { return [] }
            if values.isEmpty { return nil }
            return values.flatMap { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
        }
        return (items(sensors, all: allSensors), items(events, all: allEvents))
    }

    /// The choice for a device added: `nil` when nothing was said.
    var choice: DeviceChoice? {
        get throws(DeviceError) {
            let given = self.given
            guard given.sensors != nil || given.events != nil else { return nil }
            return try DeviceChoice.everything.replacing(sensors: given.sensors, events: given.events)
        }
    }
}

extension HubctlCommand.Devices {
    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "add",
            abstract: "Register a device token (hexadecimal) or a Web Push subscription (JSON).",
            discussion: """
                Registering a device again keeps its id; its choice changes only when --sensors, --events or an \
                --all-… flag is given.
                """)

        @OptionGroup var state: StateOptions
        @Argument(
            help: "The device token, as the app reports it (64 hexadecimal digits), or a browser's subscription JSON.")
        var device: String
        @OptionGroup var choosing: ChoiceOptions

        func run() async throws {
            let store = DeviceStore(directory: try await state.state().path)
            let (device, added) = try withDeviceErrors { () throws(DeviceError) in
                try store.add(DeviceStore.Address(text: self.device), choice: choosing.choice)
            }
            let what = added ? "added device \(device.id)" : "device \(device.id) was already registered"
            print("\(what) (\(device.address.kind) \(device.address.masked)): \(Self.describe(device.choice))")
        }

        /// `sensors door*,kitchen; events changed`, or `every notification`.
        static func describe(_ choice: DeviceChoice) -> String {
            choice.isEverything ? "every notification" : "sensors \(choice.sensorsText); events \(choice.kindsText)"
        }
    }

    struct Edit: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "edit",
            abstract: "Change which sensors and events a device gets.",
            discussion: """
                Only what is given changes. Examples:
                  hubctl devices edit 3f9c2a1b7e4d5c60 --sensors 'door*' --events changed
                  hubctl devices edit 3f9c2a1b7e4d5c60 --all-sensors
                """)

        @OptionGroup var state: StateOptions
        @Argument(help: "The device's id (from list) or its token.") var device: String
        @OptionGroup var choosing: ChoiceOptions

        func validate() throws {
            let given = choosing.given
            if given.sensors == nil && given.events == nil {
                throw ValidationError("say what to change: --sensors, --events, --all-sensors or --all-events")
            }
        }

        func run() async throws {
            let store = DeviceStore(directory: try await state.state().path)
            let given = choosing.given
            let edited = try withDeviceErrors { () throws(DeviceError) in
                try store.setChoice(device, sensors: given.sensors, events: given.events)
            }
            guard let edited else {
                Failure.printError("no device '\(device)' (see hubctl devices list)")
                throw ExitCode(Failure.invalidInput)
            }
            print("device \(edited.id) now gets \(Add.describe(edited.choice))")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list",
            abstract: "List the registered devices (tokens masked, push services by host) and their choices.")

        @OptionGroup var state: StateOptions
        @Flag(help: "JSON, with the full tokens and subscriptions, for scripts.") var json = false

        func run() async throws {
            let store = DeviceStore(directory: try await state.state().path)
            let devices = try withDeviceErrors { () throws(DeviceError) in try store.devices() }
            if json {
                let list = devices.map { device -> [String: Any] in
                    var item: [String: Any] = [
                        "id": device.id, "kind": device.address.kind, "masked": device.address.masked,
                        "sensors": device.choice.sensors, "events": device.choice.kinds.map(\.rawValue),
                        "added": device.added.iso8601,
                    ]
                    if let token = device.token { item["token"] = token }
                    if let subscription = device.subscription {
                        item["subscription"] = [
                            "endpoint": subscription.endpoint,
                            "keys": ["p256dh": subscription.p256dh, "auth": subscription.auth],
                        ]
                    }
                    return item
                }
                let data = try JSONSerialization.data(withJSONObject: list, options: [.prettyPrinted, .sortedKeys])
                print(String(decoding: data, as: UTF8.self))
            } else if devices.isEmpty {
                print("No devices yet. Register one with: hubctl devices add TOKEN")
            } else {
                let rows = devices.map {
                    [
                        $0.id, $0.address.kind, $0.address.masked, $0.choice.sensorsText, $0.choice.kindsText,
                        Output.absolute($0.added),
                    ]
                }
                let header = ["ID", "KIND", "ADDRESS", "SENSORS", "EVENTS", "ADDED"]
                print(Output.table(header: header, rows: rows), terminator: "")
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "remove", abstract: "Remove a device by its id or its token.")

        @OptionGroup var state: StateOptions
        @Argument(help: "The device's id (from list) or its token.") var device: String

        func run() async throws {
            let store = DeviceStore(directory: try await state.state().path)
            guard try withDeviceErrors({ () throws(DeviceError) in try store.remove(device) }) else {
                Failure.printError("no device '\(device)' (see hubctl devices list)")
                throw ExitCode(Failure.invalidInput)
            }
            print("removed device \(device)")
        }
    }
}

/// Runs `body`, turning device errors into a message and hubctl's exit status.
func withDeviceErrors<T>(_ body: () throws(DeviceError) -> T) throws -> T {
    do {
        return try body()
    } catch {
        Failure.printError(error.description)
        switch error {
        case .invalidToken, .invalidSubscription, .invalidChoice: throw ExitCode(Failure.invalidInput)
        case .damaged: throw ExitCode(Failure.damagedFile)
        case .system(_, let reason) where reason.contains("ermission"): throw ExitCode(Failure.permissionDenied)
        case .system, .crypto: throw ExitCode(Failure.ioError)
        }
    }
}
