import ArgumentParser
import Foundation
import HubCore
import HubHistory
import HubRemote
import HubSupport
import Logging

/// `hubctl`, the command line for the hub.
public struct HubctlCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "hubctl",
        abstract: "Manage a SensorHub: its sensors, its broker and its notifiers.",
        discussion: """
            hubctl edits the registry in the state directory whether or not hubd runs; a running hubd picks \
            changes up. The state directory is --state-dir, else $HUB_STATE_DIR, else /var/lib/sensorhub \
            (where the systemd unit keeps it). With store: postgres://… in hubd.yaml, the registry is in that \
            database instead, shared by every agent and every hubctl that names it.

            Examples:
              hubctl sensors add kitchen
              hubctl sensors add "front door" --topic home/front-door/status
              hubctl sensors list
              hubctl broker set --host broker.lan --username hub --password-file -
              hubctl broker check
              hubctl discover
              hubctl notify test phone
              hubctl uv --lat 52.1 --lon 5.18
              hubctl route --from 52.091,5.121 --to 52.086,5.140
              hubctl devices add 740f4707bebcf74f9b7c25d48e3358945f6aa01da5ddb387462c7eaf61bb78ad

            Exit status: 0 success; 64 invalid input (a bad name, a sensor that does not exist, an option that \
            does not fit); 65 the registry file is damaged (it is left untouched); 66 discover heard no device, \
            or route found no readings to plan on; 69 \
            the broker check failed (or the broker, or the registry's database, can't be reached); \
            74 reading or writing failed (disk full, locked); 77 permission denied; 78 the configuration is \
            invalid.

            Shell completion: hubctl --generate-completion-script bash (or zsh, fish) prints a script that \
            also completes sensor names.
            """,
        version: SensorHubVersion.current,
        subcommands: [
            Sensors.self, Discover.self, Broker.self, Status.self, Notify.self, Devices.self, SDS011Sensor.self,
            HistoryCommand.self, Events.self, Sessions.self, RouteCommand.self, HomeAssistant.self, UV.self, Store.self,
            Alerts.self, Silences.self, Users.self, Tokens.self, Reload.self,
        ]
    )

    public init() {}
}

/// The options every command that touches the registry shares.
struct StateOptions: ParsableArguments {
    @Option(
        name: .customLong("state-dir"),
        help: ArgumentHelp(
            "The state directory holding the registry (default: $HUB_STATE_DIR, else the configuration's, else /var/lib/sensorhub).",
            valueName: "path"))
    var stateDirectory: String?

    @Option(
        help: ArgumentHelp(
            "hubd's configuration file (default: $HUB_CONFIG, else /etc/sensorhub/hubd.yaml if it exists).",
            valueName: "path"))
    var config: String?

    /// The configuration (for the state directory and the topic template); a broken one is an error here too.
    func configuration() async throws -> HubConfiguration {
        do {
            return try HubConfiguration.load(option: config)
        } catch {
            Failure.printError(error.description)
            throw ExitCode(Failure.badConfiguration)
        }
    }

    /// The state directory this command works on.
    func state() async throws -> StateDirectory {
        try await resolve().state
    }

    /// The registry this command works on: `defaults.json` in the state directory, or the database the
    /// configuration's `store.url` names.
    func registry() async throws -> any RegistryStore {
        let (configuration, state) = try await resolve()
        return Self.registry(configuration: configuration, state: state)
    }

    /// The registry, for a command that shows statuses: a running hubd writes the ones it holds first (it writes
    /// them every `store.flush_interval`, 5 minutes by default: `WriteRequest`).
    func registryWithStatuses() async throws -> any RegistryStore {
        let (configuration, state) = try await resolve()
        if configuration.store == nil { WriteRequest.ask(directory: state.path) }
        return Self.registry(configuration: configuration, state: state)
    }

    /// The registry `configuration` and `state` choose.
    static func registry(configuration: HubConfiguration, state: StateDirectory) -> any RegistryStore {
        guard let server = configuration.store else { return state.registry }
        var logger = Logger(label: "hubctl")
        logger.logLevel = .warning
        return PostgresRegistry(
            server: server, applicationName: "hubctl", limit: .seconds(15), keepsConnection: false, logger: logger)
    }

    /// The history this command reads: `history.sqlite` in the state directory, or with `store:` the store's
    /// database (the readings and events of `HubConfiguration.storeHub`).
    func history() async throws -> any HistoryReader {
        let (configuration, state) = try await resolve()
        return try Self.history(configuration: configuration, state: state)
    }

    /// The history `configuration` and `state` choose; hubctl's error when there is none yet.
    static func history(configuration: HubConfiguration, state: StateDirectory) throws -> any HistoryReader {
        guard let server = configuration.store else {
            // A running hubd commits every `history.commit_interval`: what it holds is written first.
            WriteRequest.ask(directory: state.path)
            return try withHistoryErrors { () throws(HistoryError) in
                try HistorySource.file(directory: state.path).open()
            }
        }
        var logger = Logger(label: "hubctl")
        logger.logLevel = .warning
        return PostgresHistory(
            server: server, hub: configuration.storeHub, applicationName: "hubctl", limit: .seconds(60),
            keepsConnection: false, logger: logger)
    }

    /// The configuration and the state directory it (with --state-dir and $HUB_STATE_DIR) chooses.
    func resolve() async throws -> (configuration: HubConfiguration, state: StateDirectory) {
        let configuration = try await configuration()
        return (configuration, StateDirectory(option: stateDirectory, configured: configuration.stateDirectory))
    }
}

/// "Now", for the relative times in `list` and `show`. Hidden: tests set it to compare output exactly.
struct ClockOptions: ParsableArguments {
    @Option(help: .private) var now: String?

    var current: Timestamp { now.flatMap { Timestamp(iso8601: $0) } ?? .now }
}

/// What hubctl says when something fails, and the exit status that goes with it (from sysexits.h).
enum Failure {
    static let invalidInput: Int32 = 64
    static let damagedFile: Int32 = 65
    /// `discover` heard no device; `route` found no readings (or no road file) to plan on.
    static let nothingHeard: Int32 = 66
    static let unavailable: Int32 = 69
    static let ioError: Int32 = 74
    static let permissionDenied: Int32 = 77
    static let badConfiguration: Int32 = 78

    /// Prints `error` and returns the exit code to throw.
    static func report(_ error: StoreError) -> ExitCode {
        printError(error.description)
        switch error {
        case .registry: return ExitCode(invalidInput)
        case .invalidDocument: return ExitCode(damagedFile)
        case .system(_, _, let code) where code == EACCES || code == EPERM: return ExitCode(permissionDenied)
        case .system, .locked: return ExitCode(ioError)
        case .unavailable: return ExitCode(unavailable)
        case .database: return ExitCode(ioError)
        }
    }

    static func report(_ error: RegistryError) -> ExitCode {
        printError(error.description)
        return ExitCode(invalidInput)
    }

    /// Prints `message` escaped (values in it may come from a file or a server), keeping its line breaks.
    static func printError(_ message: String) {
        FileHandle.standardError.write(Data("hubctl: \(UnsafeText.escaped(message, keepingLineBreaks: true))\n".utf8))
    }
}

/// Runs `body`, turning store errors into a message and hubctl's exit status.
func withStoreErrors<T>(_ body: () throws(StoreError) -> T) throws -> T {
    do {
        return try body()
    } catch {
        throw Failure.report(error)
    }
}

/// Runs `body`, turning store errors into a message and hubctl's exit status.
func withStoreErrors<T>(_ body: () async throws(StoreError) -> T) async throws -> T {
    do {
        return try await body()
    } catch {
        throw Failure.report(error)
    }
}

/// Completes sensor names from the registry the command line points at (its --config and --state-dir).
let sensorNameCompletion = CompletionKind.custom { words, _, prefix in
    func value(of option: String) -> String? {
        guard let index = words.firstIndex(of: option), index + 1 < words.count else { return nil }
        return words[index + 1]
    }
    guard let configuration = try? HubConfiguration.load(option: value(of: "--config")) else { return [] }
    let state = StateDirectory(option: value(of: "--state-dir"), configured: configuration.stateDirectory)
    let document: DefaultsDocument?
    if configuration.store == nil {
        document = try? state.store.read()
    } else {
        let store = StateOptions.registry(configuration: configuration, state: state)
        document = waiting(upTo: .seconds(3)) { try? await store.read() }
    }
    let key = prefix.lowercased()
    return (document?.sensors ?? []).map(\.name).filter { $0.lowercased().hasPrefix(key) }.sorted()
}

/// The result of `body`, from synchronous code (ArgumentParser's completion callback), or `nil` after `limit`: a
/// shell waiting on a database that does not answer gets no names rather than a hang.
private func waiting<T: Sendable>(upTo limit: Duration, _ body: @escaping @Sendable () async -> T?) -> T? {
    let result = Locked<T?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task {
        let value = await body()
        result.withLock { $0 = value }
        done.signal()
    }
    let milliseconds = Int(limit.components.seconds * 1000)
    _ = done.wait(timeout: .now() + .milliseconds(milliseconds))
    return result.withLock { $0 }
}
