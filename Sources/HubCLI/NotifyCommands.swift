import ArgumentParser
import Foundation
import HubCore
import HubMQTT
import HubNotify
import Logging
import Mosquitto

extension HubctlCommand {
    /// `hubctl notify …`: the notifiers.
    struct Notify: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "notify",
            abstract: "Check the notifiers configured for hubd.",
            subcommands: [Test.self]
        )
    }
}

extension HubctlCommand.Notify {
    struct Test: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "test",
            abstract: "Send a test notification through each configured backend, or one, and say what happened.",
            discussion: """
                Reads the notifiers section of hubd's configuration and makes one real attempt per backend \
                (every registered device for apns) with a test event, printing the answer: delivered, or the \
                receiver's own words for why not. Nothing is queued or retried, and hubd need not run; the mqtt \
                backend connects with the saved broker settings. Exits 0 when every attempt was delivered, 69 \
                otherwise, 78 when the configuration is invalid.

                Examples:
                  hubctl notify test
                  hubctl notify test phone --config /etc/sensorhub/hubd.yaml
                  hubctl notify test hook --sensor "front door" --status open
                """
        )

        @OptionGroup var state: StateOptions
        @Argument(help: "The backend to try (its name in notifiers.backends); all of them when left out.")
        var backend: String?
        @Option(help: "The sensor name in the test event.") var sensor = "hubctl test"
        @Option(help: "The new status in the test event.") var status = "test"

        func run() async throws {
            let (hub, directory) = try await state.resolve()
            let path = HubConfiguration.path(option: state.config, environment: ProcessInfo.processInfo.environment)?
                .path
            let configuration: NotifierConfiguration
            do {
                configuration = try NotifierConfiguration.read(HubConfiguration.file(option: state.config))
            } catch {
                Failure.printError("\(error)")
                throw ExitCode(Failure.badConfiguration)
            }
            guard !configuration.backends.isEmpty else {
                Failure.printError(
                    "no notifiers are configured in \(path ?? "the configuration (there is no /etc/sensorhub/hubd.yaml)");"
                        + " see examples/notifiers.yaml")
                throw ExitCode(Failure.badConfiguration)
            }
            let names = configuration.backends.map(\.name)
            if let backend, !names.contains(backend) {
                Failure.printError(
                    "no backend is named '\(backend)'; configured: \(names.sorted().joined(separator: ", "))")
                throw ExitCode(Failure.invalidInput)
            }
            let selected = configuration.backends.filter { backend == nil || $0.name == backend }
            var handler = StreamLogHandler.standardError(label: "hubctl")
            handler.logLevel = .warning
            let logger = Logger(label: "hubctl") { _ in handler }
            let event = SensorEvent(
                id: SensorEvent.randomID(), kind: .test, sensor: sensor, topic: "sensorhub/test", oldStatus: "before",
                newStatus: status, time: .now
            )

            let client =
                selected.contains { $0.type == "mqtt" }
                ? try await connect(directory, StateOptions.registry(configuration: hub, state: directory), logger)
                : nil
            let publish: MQTTPublish = { topic, payload, qos, retain, timeout, done in
                guard let client else { return done(MosquittoError.notConnected(operation: "publish")) }
                client.publish(
                    topic: topic, payload: payload, qos: MQTTQoS(rawValue: Int32(qos)) ?? .atLeastOnce, retain: retain,
                    timeout: timeout, answered: done)
            }
            let outcomes: [NotificationTest.Outcome]
            do {
                outcomes = try await NotificationTest.run(
                    configuration: configuration, backends: selected.map(\.name), event: event,
                    stateDirectory: directory.path, logger: logger, publish: publish)
            } catch {
                Failure.printError("\(path ?? ""): \(error)")
                throw ExitCode(Failure.badConfiguration)
            }
            await client?.disconnect()
            var allDelivered = true
            for outcome in outcomes {
                let milliseconds = Int(outcome.elapsed.seconds * 1000)
                if outcome.results.isEmpty {
                    allDelivered = false
                    print("\(outcome.backend) (\(outcome.type)): no devices registered (hubctl devices add TOKEN)")
                }
                for (target, result) in outcome.results {
                    if result != .delivered { allDelivered = false }
                    let device = target.map { " device \($0)" } ?? ""
                    // The receiver's own words: escaped, a server must not be able to rewrite the terminal.
                    print(
                        "\(outcome.backend) (\(outcome.type))\(device): \(Output.shown("\(result)")) in \(milliseconds) ms"
                    )
                }
            }
            if !allDelivered { throw ExitCode(Failure.unavailable) }
        }

        /// A client on the saved broker settings, for the mqtt backend.
        private func connect(
            _ directory: StateDirectory, _ store: any RegistryStore, _ logger: Logger
        ) async throws -> MosquittoClient {
            var settings = try await withStoreErrors { () async throws(StoreError) in try await store.read().broker }
            settings.clientID = "\(settings.clientID)-notify-test-\(getpid())"
            let password: String?
            do {
                password = try directory.brokerPassword(for: settings)
            } catch {
                Failure.printError("cannot read the saved broker password in \(error.path) (run as its owner)")
                throw ExitCode(Failure.permissionDenied)
            }
            let client = MosquittoClient(
                configuration: settings.mosquittoConfiguration(password: password), logger: logger)
            do {
                try await client.connect()
            } catch {
                Failure.printError("the mqtt backend needs the broker: \(error)")
                throw ExitCode(Failure.unavailable)
            }
            return client
        }
    }
}
