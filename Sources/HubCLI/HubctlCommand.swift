import ArgumentParser
import Foundation
import HubCore
import Logging
import Mosquitto

/// `hubctl`, the command line for the hub.
public struct HubctlCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "hubctl",
        abstract: "Manage a SensorHub.",
        discussion: """
            So far hubctl can check that a broker is reachable and accepts the hub's credentials. \
            Managing sensors ('hubctl sensors add kitchen') comes with the sensor registry.
            """,
        version: SensorHubVersion.current,
        subcommands: [Broker.self]
    )

    public init() {}
}

extension HubctlCommand {
    /// `hubctl broker …`
    struct Broker: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Work with the MQTT broker.",
            subcommands: [Check.self]
        )
    }
}

extension HubctlCommand.Broker {
    /// `hubctl broker check`: connect, subscribe, publish and receive once, and say what failed.
    struct Check: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check that a broker accepts a connection, a subscription and a message.",
            discussion: """
                Connects with the given settings, subscribes to a private test topic, publishes to it at QoS 1 \
                and waits for the message to come back. Exits 0 when all of it works; otherwise prints the \
                broker's or libmosquitto's own words for what went wrong and exits 1.

                Examples:
                  hubctl broker check
                  hubctl broker check --host broker.lan --port 8883 --tls-ca /etc/ssl/certs/ca-certificates.crt
                  hubctl broker check --username hub --password-file /etc/sensorhub/mqtt-password
                """
        )

        @Option(help: "Host name or address of the broker.")
        var host = "localhost"

        @Option(help: "TCP port of the broker.")
        var port = 1883

        @Option(help: "User name, if the broker requires one.")
        var username: String?

        @Option(
            help: ArgumentHelp(
                "File holding the password (first line); '-' reads it from standard input.",
                discussion: "Passwords are never taken on the command line, where other users could see them."))
        var passwordFile: String?

        @Option(help: "PEM file of the CA that signed the broker's certificate; turns TLS on.")
        var tlsCA: String?

        @Flag(help: "Use TLS with the system's CA certificates.")
        var tls = false

        @Flag(help: "Skip the check that the certificate names the host (testing only).")
        var insecure = false

        @Option(help: "Seconds to wait for each step.")
        var timeout: Double = 5

        func validate() throws {
            if passwordFile != nil && username == nil {
                throw ValidationError("--password-file needs --username")
            }
            if insecure && tlsCA == nil && !tls {
                throw ValidationError("--insecure only applies with --tls or --tls-ca")
            }
            guard timeout > 0 else { throw ValidationError("--timeout must be above zero") }
        }

        func run() async throws {
            var handler = StreamLogHandler.standardError(label: "hubctl")
            handler.logLevel = .critical
            let logger = Logger(label: "hubctl") { _ in handler }
            var configuration = MosquittoConfiguration(host: host, port: port)
            configuration.operationTimeout = .milliseconds(Int(timeout * 1000))
            if let username {
                configuration.credentials = .init(username: username, password: try passwordFile.map(readPassword))
            }
            if tlsCA != nil || tls {
                configuration.tls = TLSConfiguration(
                    trustRoots: tlsCA.map { .caFile($0) } ?? .system, verifyHostname: !insecure)
            }
            let topic = "sensorhub/check/\(UUID().uuidString)"
            do {
                try await MosquittoClient.withConnection(configuration: configuration, logger: logger) { client in
                    print("connected to \(host):\(port)")
                    try await client.subscribe(topic, qos: .atLeastOnce)
                    try await client.publish(topic: topic, payload: "check", qos: .atLeastOnce)
                    let echo = try await firstMessage(client, timeout: configuration.operationTimeout)
                    guard echo?.topic == topic else {
                        throw ValidationError("the test message did not come back within \(timeout) s")
                    }
                    print("subscribe, publish and receive work")
                }
            } catch let error as MosquittoError {
                FileHandle.standardError.write(Data("hubctl: \(error)\n".utf8))
                throw ExitCode.failure
            }
        }

        private func readPassword(_ path: String) throws -> String {
            let text: String?
            if path == "-" {
                text = readLine(strippingNewline: true)
            } else {
                guard let data = FileManager.default.contents(atPath: path) else {
                    throw ValidationError("cannot read the password file '\(path)'")
                }
                text = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline).first.map(String.init)
            }
            guard let text, !text.isEmpty else { throw ValidationError("the password file '\(path)' is empty") }
            return text
        }

        private func firstMessage(_ client: MosquittoClient, timeout: Duration) async throws -> MQTTMessage? {
            try await withThrowingTaskGroup(of: MQTTMessage?.self) { group in
                group.addTask {
                    for await message in client.messages { return message }
                    return nil
                }
                group.addTask {
                    try await Task.sleep(for: timeout)
                    return nil
                }
                let first = try await group.next() ?? nil
                group.cancelAll()
                return first
            }
        }
    }
}
