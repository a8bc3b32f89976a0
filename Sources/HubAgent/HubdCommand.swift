import ArgumentParser
import Foundation
import HubCore
import HubNotify
import HubRemote
import HubSupport
import Hummingbird
import Logging
import Metrics
import Mosquitto
import Prometheus
import ServiceLifecycle
import UnixSignals

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
            conf/hubd.yaml; hubd --config-reference lists every key); any key can be overridden by an environment \
            variable (sensors.silence_timeout → HUB_SENSORS_SILENCE_TIMEOUT). The broker settings are in the \
            registry, not the configuration.

            Signals: SIGTERM or SIGINT stop it cleanly (statuses written, 'offline' published); SIGHUP reloads \
            the configuration; SIGUSR1 writes what it holds for the history, the registry and the alert book \
            now (hubctl asks this way before it reads them). Under systemd (Type=notify) it reports READY=1 \
            once subscribed, and watchdog pings.

            Examples:
              hubd
              hubd --config /etc/sensorhub/hubd.yaml --check-config
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

    @Flag(
        help: """
            Read and check the configuration as hubd does when it starts (secrets read from their files, each \
            notifier backend made), then exit: 0 when it is valid, 78 and what is wrong when not. Nothing is \
            connected to or sent.
            """)
    var checkConfig = false

    @Flag(
        help: """
            Print the configuration reference (every key of hubd.yaml with what it takes, its default and what it \
            does, in Markdown: docs/configuration.md) and exit.
            """)
    var configReference = false

    @Option(help: "With --config-reference: markdown, or man for the manual page hubd.yaml(5).")
    var format: ReferenceFormat = .markdown

    enum ReferenceFormat: String, ExpressibleByArgument, CaseIterable {
        case markdown, man
    }

    public init() {}

    /// The configuration reference's sections: HubCore's, then the notifiers' and the alerts'.
    static var referenceSections: [ConfigSection] {
        HubConfiguration.referenceSections + NotifierConfiguration.referenceSections
    }

    public func run() async throws {
        if configReference {
            let page =
                switch format {
                case .markdown: ConfigReference.markdown(Self.referenceSections)
                case .man: ConfigReference.manual(Self.referenceSections, version: SensorHubVersion.current)
                }
            print(page, terminator: "")
            return
        }
        FreedMemory.returnLargeBlocks()
        let configuration: HubConfiguration
        let notifiers: NotifierConfiguration
        let file: ConfigNode
        do {
            (configuration, notifiers, file) = try Self.readConfiguration(option: config)
        } catch {
            FileHandle.standardError.write(Data("hubd: \(error)\n".utf8))
            throw ExitCode(78)  // EX_CONFIG
        }
        if checkConfig {
            // The backends too, as hubd makes them at start (in a directory of their own: nothing is left behind).
            let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("hubd-check-\(getpid())")
            defer { try? FileManager.default.removeItem(at: scratch) }
            do {
                try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
                try notifiers.makeEveryBackend(stateDirectory: scratch.path, logger: Logger(label: "hubd"))
                if let tls = configuration.httpTLS {
                    do {
                        _ = try TLSFiles.read(certificate: tls.certificate, key: tls.key)
                    } catch {
                        throw TLSFilesError(description: "the HTTPS certificate or key can't be used: \(error)")
                    }
                }
            } catch {
                FileHandle.standardError.write(Data("hubd: \(error)\n".utf8))
                throw ExitCode(78)
            }
            // Against the registry of the state directory (the file store's: a database's is not reached here).
            if configuration.store == nil {
                let state = StateDirectory(option: stateDirectory, configured: configuration.stateDirectory)
                let sensors = (try? state.store.read())?.sensors ?? []
                for warning in notifiers.warnings(sensors: sensors) {
                    FileHandle.standardError.write(Data("hubd: warning: \(warning)\n".utf8))
                }
            }
            let file = HubConfiguration.path(option: config, environment: ProcessInfo.processInfo.environment)
            print(
                "hubd: \(file.map { "the configuration \($0.path)" } ?? "no configuration file (every default)") is"
                    + " valid: \(notifiers.backends.count) notifier backend(s), \(notifiers.rules.count) rule(s)")
            return
        }
        let level = logLevel ?? Logger.Level(rawValue: configuration.logLevel) ?? .info
        HubLogHandler.level.store(level.index, ordering: .relaxed)
        LoggingSystem.bootstrap { HubLogHandler(label: $0) }
        let logger = Logger(label: "hubd")
        let state = StateDirectory(option: stateDirectory, configured: configuration.stateDirectory)
        // What hubd creates is its own: files 0600, folders 0700, whatever umask it was started with (the unit
        // sets UMask=0077; by hand it is often 0022). Files an older hubd left readable are made so too.
        umask(0o077)
        // One hubd a state directory, held until the process ends (the kernel lets go however it ends).
        let instance: InstanceLock
        do {
            instance = try InstanceLock.acquire(directory: state.path)
        } catch {
            FileHandle.standardError.write(Data("hubd: \(error)\n".utf8))
            throw ExitCode(error.isHeld ? 75 : 73)  // EX_TEMPFAIL: try once the other stops; EX_CANTCREAT
        }
        defer { instance.release() }
        let tightened = state.restrictPermissions()
        if !tightened.isEmpty {
            logger.notice(
                "made the state directory's files readable by hubd's user only",
                metadata: ["files": "\(tightened.joined(separator: ", "))"])
        }
        // The registry: the state directory's file, or the database several agents share.
        let store: any RegistryStore =
            configuration.store.map { PostgresRegistry(server: $0, applicationName: "hubd", logger: logger) }
            ?? state.registry
        logger.info(
            "starting",
            metadata: [
                "version": "\(SensorHubVersion.current)", "libmosquitto": "\(LibMosquitto.version)",
                "state_directory": "\(state)", "store": "\(store.location)",
            ])
        if let cluster = configuration.cluster {
            logger.info(
                "joining a cluster", metadata: ["group": "\(cluster.group)", "agent": "\(cluster.agent)"])
        }
        let hub: Hub
        do {
            hub = try await Hub.make(
                configuration: configuration, configurationOption: config, file: file, notifiers: notifiers,
                state: state,
                store: store, logger: logger)
        } catch let error as ConfigurationError {
            FileHandle.standardError.write(Data("hubd: \(error)\n".utf8))
            await store.close()
            throw ExitCode(78)
        } catch let error as StoreError {
            FileHandle.standardError.write(Data("hubd: \(error)\n".utf8))
            await store.close()
            if case .unavailable = error { throw ExitCode(69) }  // EX_UNAVAILABLE: the database, not the data
            if case .database = error { throw ExitCode(74) }  // EX_IOERR: it answered, but refused
            throw ExitCode(error.isInvalidInput ? 64 : 65)
        } catch {
            await store.close()
            throw error
        }
        if let sensors = try? await store.read().sensors {
            for warning in notifiers.warnings(sensors: sensors) { logger.warning("\(warning)") }
        }
        logger.info(
            "notifiers",
            metadata: [
                "backends": "\(notifiers.backends.map { "\($0.name) (\($0.type))" }.joined(separator: ", "))",
                "rules": "\(notifiers.rules.count)",
            ])
        var services = hub.services.map { ServiceGroupConfiguration.ServiceConfiguration(service: $0) }
        let metrics = MetricsExporter()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: metrics.registry))
        do {
            if let http = try Self.httpService(
                configuration, notifiers: notifiers, hub: hub, metrics: metrics, logger: logger)
            {
                services.append(.init(service: http))
            }
        } catch {
            FileHandle.standardError.write(Data("hubd: the HTTPS certificate or key can't be used: \(error)\n".utf8))
            await store.close()
            throw ExitCode(78)
        }
        var groupConfiguration = ServiceGroupConfiguration(
            services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        // In-flight work (the last messages, the final store write, 'offline') gets this long after SIGTERM.
        groupConfiguration.maximumGracefulShutdownDuration = .seconds(15)
        do {
            try await ServiceGroup(configuration: groupConfiguration).run()
        } catch {
            await store.close()
            throw error
        }
        await store.close()
    }
}

/// Runs the HTTP server; if it can't (the port is taken), says so and lets the hub go on without it. With its own
/// HTTPS, reads the certificate again on each SIGHUP.
struct HTTPService: Service {
    let server: any Service
    let listen: HubConfiguration.HTTPListen
    var tls: TLSFiles? = nil
    let logger: Logger

    func run() async throws {
        if let tls {
            try await withThrowingDiscardingTaskGroup { group in
                group.addTask {
                    let signals = await UnixSignalsSequence(trapping: .sighup)
                    for await _ in signals.cancelOnGracefulShutdown() { tls.reload(logger: logger) }
                }
                group.addTask { try await serve() }
            }
        } else {
            try await serve()
        }
    }

    private func serve() async throws {
        do {
            try await server.run()
        } catch {
            logger.error(
                "the HTTP API and dashboard can't run; the hub goes on without them (set http.listen)",
                metadata: ["address": "\(listen)", "error": "\(error)"])
            // Returning would end the whole service group, hub included: stay until it stops.
            try? await gracefulShutdown()
        }
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
