import ArgumentParser
import Foundation
import HubCore
import Mosquitto

extension HubctlCommand {
    /// `hubctl broker …`
    struct Broker: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "broker",
            abstract: "Show, change and check the MQTT broker settings.",
            subcommands: [Show.self, Set.self, Check.self]
        )
    }
}

/// Options that describe a broker, for `broker set` (to save) and `broker check` (to try before saving).
struct BrokerOptions: ParsableArguments {
    @Option(help: "Host name or address of the broker.")
    var host: String?

    /// Text, checked in `validate()`: "-1" would be taken for an option, and "abc" refused, without the range.
    @Option(parsing: .unconditional, help: "TCP port of the broker, 1–65535 (1883; 8883 for TLS by convention).")
    var port: String?

    /// `--port` as a number (once `validate()` has passed).
    var portNumber: Int? { port.flatMap { Int($0) } }

    @Option(name: .customLong("client-id"), help: "MQTT client id of the hub (default: sensorhub).")
    var clientID: String?

    @Option(help: "User name, if the broker requires one.")
    var username: String?

    @Option(
        help: ArgumentHelp(
            "File holding the password (its first line); '-' reads it from standard input.",
            discussion: "Passwords are never taken on the command line, where other users could see them.",
            valueName: "path"))
    var passwordFile: String?

    @Flag(help: "Use no user name or password.")
    var noAuthentication = false

    @Option(
        name: .customLong("tls-ca"),
        help: ArgumentHelp("PEM file of the CA that signed the broker's certificate; turns TLS on.", valueName: "file"))
    var tlsCA: String?

    @Option(
        name: .customLong("tls-ca-dir"),
        help: ArgumentHelp("Directory of hashed CA certificates; turns TLS on.", valueName: "dir"))
    var tlsCADirectory: String?

    @Flag(name: .customLong("tls"), help: "Use TLS with the system's CA certificates.")
    var tlsSystemCAs = false

    @Option(
        name: .customLong("tls-cert"),
        help: ArgumentHelp("Client certificate (PEM), for brokers that ask for one.", valueName: "file"))
    var tlsCertificate: String?

    @Option(
        name: .customLong("tls-key"),
        help: ArgumentHelp("Private key of the client certificate (PEM).", valueName: "file"))
    var tlsKey: String?

    @Flag(
        name: .customLong("insecure"),
        help: "Skip the check that the broker's certificate names its host (testing only).")
    var skipHostnameCheck = false

    @Flag(name: .customLong("no-tls"), help: "Turn TLS off.")
    var noTLS = false

    func validate() throws {
        let tlsOptions = tlsCA != nil || tlsCADirectory != nil || tlsSystemCAs || tlsCertificate != nil || tlsKey != nil
        if noTLS && (tlsOptions || skipHostnameCheck) {
            throw ValidationError("--no-tls does not go with other TLS options")
        }
        if [tlsCA != nil, tlsCADirectory != nil, tlsSystemCAs].filter({ $0 }).count > 1 {
            throw ValidationError("choose one of --tls-ca, --tls-ca-dir and --tls")
        }
        if noAuthentication && (username != nil || passwordFile != nil) {
            throw ValidationError("--no-authentication does not go with --username or --password-file")
        }
        if let port, !(Int(port).map { (1...65535).contains($0) } ?? false) {
            throw ValidationError(
                "--port '\(Output.shown(port))' is not a port: it is a whole number from 1 to 65535 (1883, or 8883 for TLS)"
            )
        }
        for (option, path) in [("--tls-ca", tlsCA), ("--tls-cert", tlsCertificate), ("--tls-key", tlsKey)] {
            if let path, !FileManager.default.isReadableFile(atPath: path) {
                throw ValidationError("\(option): cannot read '\(path)'")
            }
        }
    }

    var changesPassword: Bool { passwordFile != nil || noAuthentication }

    /// `settings` with these options applied (the password is handled by the caller).
    func applied(to settings: BrokerSettings) -> BrokerSettings {
        var settings = settings
        if let host { settings.host = host }
        if let port = portNumber { settings.port = port }
        if let clientID { settings.clientID = clientID }
        if let username { settings.username = username }
        if noAuthentication {
            settings.username = nil
            settings.passwordFile = nil
        }
        if noTLS { settings.tls = nil }
        if tlsCA != nil || tlsCADirectory != nil || tlsSystemCAs {
            var tls = settings.tls ?? BrokerSettings.TLS()
            tls.caFile = tlsCA.map(absolute)
            tls.caDirectory = tlsCADirectory.map(absolute)
            settings.tls = tls
        }
        if tlsCertificate != nil || tlsKey != nil || skipHostnameCheck {
            var tls = settings.tls ?? BrokerSettings.TLS()
            if let tlsCertificate { tls.certificateFile = absolute(tlsCertificate) }
            if let tlsKey { tls.keyFile = absolute(tlsKey) }
            if skipHostnameCheck { tls.verifyHostname = false }
            settings.tls = tls
        }
        return settings
    }

    /// The password named by `--password-file`, read from the file or standard input (without echo on a terminal).
    /// `saved` are the settings it joins: a password needs a user name, given now or saved before.
    func readPassword(joining saved: BrokerSettings) throws -> String? {
        guard let passwordFile else { return nil }
        guard username != nil || saved.username != nil else {
            throw Failure.report(RegistryError.invalidSetting("a password needs a user name (--username)"))
        }
        return try readPasswordFile(passwordFile, prompt: "Password for the broker: ")
    }

    private func absolute(_ path: String) -> String { URL(fileURLWithPath: path).standardizedFileURL.path }
}

/// The password `--password-file` names: the file's first line, or with `-` a line of standard input (on a terminal
/// asked without echo, twice when `confirm`).
func readPasswordFile(_ passwordFile: String, prompt: String, confirm: Bool = false) throws -> String {
    let text: String?
    if passwordFile == "-" {
        text = readSecretLine(prompt: prompt)
        if confirm, isatty(STDIN_FILENO) == 1, readSecretLine(prompt: "Again: ") != text {
            throw ValidationError("The two passwords differ; nothing was changed.")
        }
    } else {
        guard let contents = try? String(contentsOfFile: passwordFile, encoding: .utf8) else {
            throw ValidationError("--password-file: cannot read '\(passwordFile)'")
        }
        text = contents.split(whereSeparator: \.isNewline).first.map(String.init)
    }
    guard let text, !text.isEmpty else {
        throw ValidationError(
            "--password-file: no password in '\(passwordFile == "-" ? "standard input" : passwordFile)'")
    }
    return text
}

/// Reads a line from standard input; on a terminal, prompts and keeps it from being echoed.
///
/// Echo goes off before the prompt shows, as getpass(3) does: a person (or a paste) answering the moment the prompt
/// appears must never see the password on the screen. Whatever was typed before the prompt is dropped
/// (`TCSAFLUSH`); echo comes back with `TCSANOW`, so a line typed after the answer is kept rather than discarded.
func readSecretLine(prompt: String) -> String? {
    guard isatty(STDIN_FILENO) == 1 else { return readLine(strippingNewline: true) }
    var original = termios()
    tcgetattr(STDIN_FILENO, &original)
    var silent = original
    silent.c_lflag &= ~tcflag_t(ECHO)
    tcsetattr(STDIN_FILENO, TCSAFLUSH, &silent)
    FileHandle.standardError.write(Data(prompt.utf8))
    defer {
        tcsetattr(STDIN_FILENO, TCSANOW, &original)
        FileHandle.standardError.write(Data("\n".utf8))
    }
    return readLine(strippingNewline: true)
}

extension HubctlCommand.Broker {
    /// `hubctl broker show`
    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "show",
            abstract: "Show the broker settings (never the password).",
            discussion: """
                Examples:
                  hubctl broker show
                  hubctl broker show --json
                """)

        @OptionGroup var state: StateOptions
        @Flag(help: "Print JSON, for scripts.") var json = false

        func run() async throws {
            let (configuration, directory) = try await state.resolve()
            let store = StateOptions.registry(configuration: configuration, state: directory)
            let settings = try await withStoreErrors { () async throws(StoreError) in try await store.read().broker }
            print(json ? Output.json(settings, state: directory) : Output.text(settings, state: directory))
        }
    }

    /// `hubctl broker set`
    struct Set: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set",
            abstract: "Change the broker settings; what you don't mention stays as it was.",
            discussion: """
                The password is stored in its own file in the state directory (mode 0600), never in the \
                registry and never on the command line. A running hubd reconnects with the new settings.

                Examples:
                  hubctl broker set --host broker.lan --port 1883
                  hubctl broker set --username hub --password-file -        # asks for it, without echo
                  hubctl broker set --port 8883 --tls-ca /etc/ssl/certs/home-ca.pem
                  hubctl broker set --no-authentication --no-tls
                """)

        @OptionGroup var state: StateOptions
        @OptionGroup var broker: BrokerOptions

        func run() async throws {
            let (configuration, directory) = try await state.resolve()
            let store = StateOptions.registry(configuration: configuration, state: directory)
            let saved = try await withStoreErrors { () async throws(StoreError) in try await store.read().broker }
            let password = try broker.readPassword(joining: saved)
            let passwordFileName = (directory.brokerPasswordFile as NSString).lastPathComponent
            let broker = broker
            let settings = try await withStoreErrors { () async throws(StoreError) in
                if let password {
                    try directory.store.replaceFile(named: passwordFileName, with: Array((password + "\n").utf8))
                }
                return try await store.update { document throws(RegistryError) in
                    var settings = broker.applied(to: document.broker)
                    if password != nil { settings.passwordFile = passwordFileName }
                    try settings.validate()
                    document.broker = settings
                    return settings
                }
            }
            if broker.noAuthentication { unlink(directory.brokerPasswordFile) }
            print("Saved. The broker is now:")
            print(Output.text(settings, state: directory))
        }
    }

    /// `hubctl broker check`: connect, subscribe, publish and receive once, and say what failed.
    struct Check: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "check",
            abstract: "Check that the broker accepts the hub: a connection, a subscription and a message.",
            discussion: """
                Uses the saved settings, changed by any option given (nothing is saved): connects, subscribes \
                to a private test topic, publishes to it at QoS 1 and waits for the message to come back. Exits \
                0 when all of it works; otherwise prints the broker's or libmosquitto's own words for what went \
                wrong and exits 69.

                Examples:
                  hubctl broker check
                  hubctl broker check --host broker.lan --port 8883 --tls-ca /etc/ssl/certs/home-ca.pem
                  hubctl broker check --username hub --password-file /etc/sensorhub/mqtt-password
                """
        )

        @OptionGroup var state: StateOptions
        @OptionGroup var broker: BrokerOptions

        @Option(parsing: .unconditional, help: "Seconds to wait for each step.")
        var timeout: Double = 5

        func validate() throws {
            guard timeout > 0 else { throw ValidationError("--timeout must be above zero") }
        }

        func run() async throws {
            let (configuration, directory) = try await state.resolve()
            let session = try await BrokerSession(
                directory: directory, store: StateOptions.registry(configuration: configuration, state: directory),
                options: broker, purpose: "check",
                timeout: .milliseconds(Int(timeout * 1000)))
            let timeout = session.configuration.operationTimeout
            let topic = "sensorhub/check/\(UUID().uuidString)"
            try await session.run { client in
                print("connected to \(session.endpoint)")
                try await client.subscribe(topic, qos: .atLeastOnce)
                try await client.publish(topic: topic, payload: "check", qos: .atLeastOnce)
                guard try await firstMessage(client, timeout: timeout)?.topic == topic else {
                    throw MosquittoError.timeout(operation: "the test message's return", after: timeout)
                }
                print("subscribe, publish and receive work")
            }
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
