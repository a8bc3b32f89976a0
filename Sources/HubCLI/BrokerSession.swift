import ArgumentParser
import Foundation
import HubCore
import HubMQTT
import HubSupport
import Logging
import Mosquitto

/// A short connection of hubctl's own to the registry's broker, for `broker check` and `discover`: the saved
/// settings changed by any option given (nothing is saved), a client id of its own (so it can't kick hubd off, which
/// is often run as another user) and a clean session.
struct BrokerSession {
    let settings: BrokerSettings
    let configuration: MosquittoConfiguration

    /// The saved settings with `options` applied; errors are reported with hubctl's exit status.
    /// - Parameters:
    ///   - purpose: what the client id says it is for (`check`, `discover`).
    ///   - timeout: how long each step (connecting, subscribing, publishing) may take.
    init(
        directory: StateDirectory, store: any RegistryStore, options: BrokerOptions?, purpose: String,
        timeout: Duration
    ) async throws {
        let saved = try await withStoreErrors { () async throws(StoreError) in try await store.read().broker }
        var settings = options?.applied(to: saved) ?? saved
        if options?.clientID == nil { settings.clientID = "\(settings.clientID)-\(purpose)-\(getpid())" }
        do {
            try settings.validate()
        } catch {
            throw Failure.report(error)
        }
        var password = try options?.readPassword(joining: saved)
        if password == nil, options?.noAuthentication != true {
            do {
                password = try directory.brokerPassword(for: settings)
            } catch {
                Failure.printError(
                    "cannot read the saved password in \(error.path) (run as its owner, or give --password-file)")
                throw ExitCode(Failure.permissionDenied)
            }
        }
        var configuration = settings.mosquittoConfiguration(password: password)
        configuration.cleanSession = true
        configuration.operationTimeout = timeout
        self.settings = settings
        self.configuration = configuration
    }

    /// `host:port`, and whether over TLS.
    var endpoint: String { "\(settings.host):\(settings.port)\(settings.tls == nil ? "" : " over TLS")" }

    /// Connects, runs `body` and disconnects. A failure of the broker's prints the broker's or libmosquitto's own
    /// words and exits 69 (64 for settings libmosquitto refuses).
    func run<Result: Sendable>(_ body: (MosquittoClient) async throws -> Result) async throws -> Result {
        var handler = StreamLogHandler.standardError(label: "hubctl")
        handler.logLevel = .critical
        let logger = Logger(label: "hubctl") { _ in handler }
        do {
            return try await MosquittoClient.withConnection(configuration: configuration, logger: logger, body)
        } catch let error as MosquittoError {
            Failure.printError("\(error)")
            if case .invalidConfiguration = error { throw ExitCode(Failure.invalidInput) }
            throw ExitCode(Failure.unavailable)
        }
    }

    /// Subscribes `client` to each batch of filters in turn (one SUBSCRIBE each: Mosquitto sends a batch's retained
    /// messages before the next's) and hands `take` what arrives until the broker has sent everything it held — a
    /// message hubctl publishes to itself once subscribed comes back after the retained ones — and `duration` has
    /// passed.
    static func receive(
        _ client: MosquittoClient, subscribing batches: [[String]], for duration: Duration,
        _ take: @escaping @Sendable (MQTTMessage) -> Void
    ) async throws {
        let marker = "sensorhub/hubctl/\(UUID().uuidString)"
        let markerBack = Locked(false)
        let doorbell = Doorbell()
        let batches = batches.filter { !$0.isEmpty }
        for (index, filters) in batches.enumerated() {
            try await client.subscribe(filters + (index == batches.count - 1 ? [marker] : []), qos: .atLeastOnce)
        }
        if batches.isEmpty { try await client.subscribe([marker], qos: .atLeastOnce) }
        let deadline = ContinuousClock.now + duration
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for await message in client.messages {
                    if message.topic == marker {
                        markerBack.withLock { $0 = true }
                        doorbell.ring()
                    } else {
                        take(message)
                    }
                }
            }
            try await client.publish(topic: marker, payload: "retained messages sent", qos: .atLeastOnce)
            let timeout = client.configuration.operationTimeout
            await doorbell.wait(until: .now + timeout)
            guard markerBack.withLock({ $0 }) else {
                group.cancelAll()
                throw MosquittoError.timeout(operation: "the broker's retained messages", after: timeout)
            }
            try? await Task.sleep(until: deadline)
            group.cancelAll()
        }
    }
}
