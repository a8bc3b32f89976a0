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

    /// `MosquittoClient.receive` (HubMQTT): the retained messages, then `duration` of live ones.
    static func receive(
        _ client: MosquittoClient, subscribing batches: [[String]], for duration: Duration,
        _ take: @escaping @Sendable (MQTTMessage) -> Void
    ) async throws {
        try await client.receive(subscribing: batches, for: duration, take)
    }
}
