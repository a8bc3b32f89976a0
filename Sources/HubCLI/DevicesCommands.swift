import ArgumentParser
import Foundation
import HubCore
import HubNotify

extension HubctlCommand {
    /// `hubctl devices …`: the phones that get push notifications.
    struct Devices: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Register the phones that get push notifications (APNs device tokens).",
            discussion: """
                Tokens are stored encrypted (AES-GCM) in devices.json in the state directory, under a key in \
                device-key (mode 0600); the same token is stored once. An apns backend in the configuration \
                sends every notification to every registered device; a token Apple says is no longer valid is \
                removed by hubd.

                Examples:
                  hubctl devices add 740f4707bebcf74f9b7c25d48e3358945f6aa01da5ddb387462c7eaf61bb78ad
                  hubctl devices list
                  hubctl devices remove 3f9c2a1b7e4d5c60
                """,
            subcommands: [Add.self, List.self, Remove.self]
        )
    }
}

extension HubctlCommand.Devices {
    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Register a device token (hexadecimal).")

        @OptionGroup var state: StateOptions
        @Argument(help: "The device token, as the app reports it: 64 hexadecimal digits.") var token: String

        func run() async throws {
            let store = DeviceStore(directory: try await state.state().path)
            let (device, added) = try withDeviceErrors { () throws(DeviceError) in try store.add(.apns(token: token)) }
            print(
                added
                    ? "added device \(device.id) (\(device.address.masked))"
                    : "device \(device.id) was already registered"
            )
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the registered devices (tokens masked).")

        @OptionGroup var state: StateOptions
        @Flag(help: "JSON, with the full tokens, for scripts.") var json = false

        func run() async throws {
            let store = DeviceStore(directory: try await state.state().path)
            let devices = try withDeviceErrors { () throws(DeviceError) in try store.devices() }
            if json {
                let list = devices.map { ["id": $0.id, "token": $0.token ?? "", "added": $0.added.iso8601] }
                let data = try JSONSerialization.data(withJSONObject: list, options: [.prettyPrinted, .sortedKeys])
                print(String(decoding: data, as: UTF8.self))
            } else if devices.isEmpty {
                print("No devices yet. Register one with: hubctl devices add TOKEN")
            } else {
                let rows = devices.map { [$0.id, $0.address.masked, Output.absolute($0.added)] }
                print(Output.table(header: ["ID", "TOKEN", "ADDED"], rows: rows), terminator: "")
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a device by its id or its token.")

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
