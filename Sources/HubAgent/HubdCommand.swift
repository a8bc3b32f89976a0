import ArgumentParser
import Foundation
import HubCore
import HubNotify
import Logging
import Mosquitto
import ServiceLifecycle

/// `hubd`, the agent.
public struct HubdCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "hubd",
        abstract: "The SensorHub agent: follows the sensor registry over MQTT.",
        discussion: """
            hubd subscribes to every sensor in the registry (hubctl sensors add …), records each status it \
            receives, notices sensors that fall silent, and follows changes to the registry while it runs: \
            sensors added, removed or renamed, and new broker settings (hubctl broker set …). It publishes its \
            own availability, retained: 'online' while it runs, 'offline' when it stops, and the broker \
            publishes 'offline' for it (its last will) if it dies.

            Configuration: --config, else $HUB_CONFIG, else /etc/sensorhub/hubd.yaml if it exists (see \
            conf/hubd.yaml); any key can be overridden by an environment variable (sensors.silence_timeout → \
            HUB_SENSORS_SILENCE_TIMEOUT). The broker settings are in the registry, not the configuration.

            Signals: SIGTERM or SIGINT stop it cleanly (statuses written, 'offline' published); SIGHUP reloads \
            the configuration. Under systemd (Type=notify) it reports READY=1 once subscribed, and watchdog pings.

            Examples:
              hubd
              hubd --config /etc/sensorhub/hubd.yaml --log-level debug
              HUB_STATE_DIR=.state/hub hubd
            """,
        version: SensorHubVersion.current
    )

    @Option(help: ArgumentHelp("The configuration file (YAML).", valueName: "path"))
    var config: String?

    @Option(
        name: .customLong("state-dir"),
        help: ArgumentHelp(
            "The state directory holding the registry (default: $HUB_STATE_DIR, else the configuration's, else /var/lib/sensorhub).",
            valueName: "path"))
    var stateDirectory: String?

    @Option(help: "Log level, overriding the configuration's: trace, debug, info, notice, warning, error or critical.")
    var logLevel: Logger.Level?

    public init() {}

    public func run() async throws {
        let configuration: HubConfiguration
        let notifiers: NotifierConfiguration
        let path = HubConfiguration.path(option: config, environment: ProcessInfo.processInfo.environment)?.path
        do {
            configuration = try await HubConfiguration.load(option: config)
            notifiers = try NotifierConfiguration.load(path: path)
        } catch {
            FileHandle.standardError.write(
                Data("hubd: \(error is NotifierConfigurationError ? "\(path ?? ""): " : "")\(error)\n".utf8))
            throw ExitCode(78)  // EX_CONFIG
        }
        let level = logLevel ?? Logger.Level(rawValue: configuration.logLevel) ?? .info
        HubLogHandler.level.store(level.index, ordering: .relaxed)
        LoggingSystem.bootstrap { HubLogHandler(label: $0) }
        let logger = Logger(label: "hubd")
        let state = StateDirectory(option: stateDirectory, configured: configuration.stateDirectory)
        logger.info(
            "starting",
            metadata: [
                "version": "\(SensorHubVersion.current)", "libmosquitto": "\(LibMosquitto.version)",
                "state_directory": "\(state)",
            ])
        let hub: HubService
        do {
            hub = try HubService(
                configuration: configuration, configurationOption: config, notifiers: notifiers, state: state,
                logger: logger)
        } catch {
            FileHandle.standardError.write(Data("hubd: \(path ?? ""): \(error)\n".utf8))
            throw ExitCode(78)
        }
        logger.info(
            "notifiers",
            metadata: [
                "backends": "\(notifiers.backends.map { "\($0.name) (\($0.type))" }.joined(separator: ", "))",
                "rules": "\(notifiers.rules.count)",
            ])
        var groupConfiguration = ServiceGroupConfiguration(
            services: [.init(service: hub)], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        // In-flight work (the last messages, the final store write, 'offline') gets this long after SIGTERM.
        groupConfiguration.maximumGracefulShutdownDuration = .seconds(15)
        let group = ServiceGroup(configuration: groupConfiguration)
        do {
            try await group.run()
        } catch let error as StoreError {
            FileHandle.standardError.write(Data("hubd: \(error)\n".utf8))
            throw ExitCode(error.isInvalidInput ? 64 : 65)
        }
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
