import ArgumentParser
import HubCore
import Logging
import Mosquitto
import ServiceLifecycle

/// `hubd`, the agent. So far it keeps a connection to the broker and publishes the hub's availability.
public struct HubdCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "hubd",
        abstract: "The SensorHub agent.",
        discussion: """
            This early version connects to the MQTT broker, publishes the hub's availability (retained \
            'online', with a last will of 'offline' for when it dies) and keeps the connection up, reconnecting \
            with back-off. It stops cleanly on SIGTERM or SIGINT, publishing 'offline' first.

            Not yet: following the sensor registry (hubctl manages it already), status tracking and notifications.

            Examples:
              hubd                                  # broker on localhost:1883
              hubd --host broker.lan --log-level debug
            """,
        version: SensorHubVersion.current
    )

    @Option(help: "Host name or address of the MQTT broker.")
    var host = "localhost"

    @Option(help: "TCP port of the MQTT broker.")
    var port = 1883

    @Option(help: "MQTT client id; fixed so the broker keeps the hub's session while it restarts.")
    var clientID = "sensorhub"

    @Option(help: "Topic of the hub's retained availability ('online' / 'offline').")
    var availabilityTopic = "sensorhub/availability"

    @Option(help: "Log level: trace, debug, info, notice, warning, error or critical.")
    var logLevel: Logger.Level = .info

    public init() {}

    public func run() async throws {
        let level = logLevel
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "hubd")
        let mqtt = MosquittoConfiguration(host: host, port: port, clientID: clientID)
        do {
            try mqtt.validate()
        } catch {
            throw ValidationError(error.description)
        }
        logger.info(
            "starting", metadata: ["version": "\(SensorHubVersion.current)", "libmosquitto": "\(LibMosquitto.version)"])
        let availability = AvailabilityService(
            configuration: mqtt, availabilityTopic: availabilityTopic, logger: logger)
        let group = ServiceGroup(
            services: [availability],
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger
        )
        try await group.run()
        logger.info("stopped")
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
