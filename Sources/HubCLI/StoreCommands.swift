import ArgumentParser
import Crypto
import Foundation
import HubCore
import HubHistory
import HubRemote
import Logging

extension HubctlCommand {
    /// `hubctl store`: where the registry lives.
    struct Store: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "store",
            abstract: "Move the registry and the history into PostgreSQL.",
            subcommands: [Migrate.self])
    }
}

extension HubctlCommand.Store {
    /// `hubctl store migrate --to postgres://…`
    struct Migrate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "migrate",
            abstract: "Copy the state directory's registry and history into a PostgreSQL database, and check the copy.",
            discussion: """
                Copies defaults.json (every sensor, the broker settings) into the database's registry, and \
                history.sqlite's readings and events into its readings and events tables, tagged with --hub. Both \
                are read back and compared with what was copied: counts and a checksum of each are printed, and \
                the exit status is 74 when they differ. Running it again copies nothing twice. Stop hubd first, so \
                the files do not change meanwhile; then set store: to the same URL in hubd.yaml and start it.

                The database's registry must be empty, or already the same as the file's: --replace overwrites \
                one that is not. The password is --password-file (- reads it from standard input) or \
                $HUB_STORE_PASSWORD, never the URL.

                Examples:
                  hubctl store migrate --to postgres://sensorhub@db.lan/building --password-file /etc/sensorhub/db.pass
                  HUB_STORE_PASSWORD=… hubctl store migrate --to postgres://sensorhub@db.lan/building --hub block-a
                """)

        @OptionGroup var state: StateOptions

        @Option(help: ArgumentHelp("The database: postgres://user@host:port/database.", valueName: "url"))
        var to: String

        @Option(help: ArgumentHelp("A file holding the password (- for standard input).", valueName: "path"))
        var passwordFile: String?

        @Option(help: "require, prefer or disable (default: prefer).")
        var tls: String = "prefer"

        @Option(
            help: ArgumentHelp(
                "The hub name the history's rows carry (default: the one hubd reads them back under: the configuration's cluster.group, else remote.hub, else this host's name).",
                valueName: "name"))
        var hub: String?

        @Flag(help: "Overwrite a registry the database already has.")
        var replace = false

        func validate() throws {
            guard DatabaseSettings.TLS(rawValue: tls) != nil else {
                throw ValidationError("--tls is require, prefer or disable")
            }
            if let hub, !RemoteSettings.isValidHubName(hub) {
                throw ValidationError("--hub is 1 to 64 letters, digits, '.', '_' or '-'")
            }
        }

        func run() async throws {
            let (configuration, directory) = try await state.resolve()
            let hubName = hub ?? configuration.storeHub
            guard RemoteSettings.isValidHubName(hubName) else {
                throw ValidationError("this host's name '\(hubName)' can't be a hub name: give one with --hub")
            }
            var server: DatabaseSettings
            do {
                server = try DatabaseSettings(url: to, option: "--to")
            } catch {
                throw ValidationError(error.description)
            }
            server.tls = DatabaseSettings.TLS(rawValue: tls) ?? .prefer
            server.password = try password()
            let source = try withStoreErrors { () throws(StoreError) in try directory.store.read() }
            var logger = Logger(label: "hubctl")
            logger.logLevel = .warning
            let target = PostgresRegistry(
                server: server, applicationName: "hubctl migrate", limit: .seconds(120), keepsConnection: false,
                logger: logger)
            try await copyRegistry(source, to: target)
            guard FileManager.default.fileExists(atPath: directory.path + "/" + History.fileName) else {
                print("History: none in \(Output.shown(directory.path)) to copy.")
                return
            }
            let history = try withHistoryErrors { () throws(HistoryError) in
                try History(directory: directory.path, create: false)
            }
            let copy = HistoryCopy(history: history, sensorIDs: Self.ids(source), logger: logger)
            let (sent, readBack) = try await copy.run(
                to: RemoteSettings(server: server, hub: hubName))
            print("History: \(sent) → hub '\(Output.shown(hubName))'")
            print("  read back: \(readBack)")
            guard sent == readBack else {
                Failure.printError(
                    "the history read back differs from the file's: the database has other rows of hub '\(hubName)'"
                        + " in that period (sent by remote:?), or lost some; nothing was deleted")
                throw ExitCode(Failure.ioError)
            }
        }

        /// Writes `source` as the database's registry (unless it is there already) and checks it by reading it back.
        private func copyRegistry(_ source: DefaultsDocument, to target: PostgresRegistry) async throws {
            let overwriting = replace
            let outcome = try await withStoreErrors { () async throws(StoreError) in
                try await target.replace(with: source, overwriting: overwriting)
            }
            switch outcome {
            case .written:
                break
            case .alreadyThere:
                print("Registry: the database has these \(source.sensors.count) sensors already.")
            case .refused(let sensors):
                Failure.printError(
                    "the database already holds another registry (\(sensors) sensors, or broker settings of its own),"
                        + " not the same as the file's: --replace overwrites it")
                throw ExitCode(Failure.invalidInput)
            }
            let readBack = try await withStoreErrors { () async throws(StoreError) in try await target.read() }
            let (sent, received) = (Self.checksum(source), Self.checksum(readBack))
            print("Registry: \(source.sensors.count) sensors, sha256 \(sent.prefix(16)) → \(to)")
            print("  read back: \(readBack.sensors.count) sensors, sha256 \(received.prefix(16))")
            guard sent == received, readBack == source else {
                Failure.printError("the registry read back differs from the file's")
                throw ExitCode(Failure.ioError)
            }
        }

        private func password() throws -> String? {
            if let passwordFile {
                let data =
                    passwordFile == "-"
                    ? FileHandle.standardInput.readDataToEndOfFile()
                    : FileManager.default.contents(atPath: passwordFile)
                guard let data else {
                    Failure.printError("cannot read the password file \(Output.shown(passwordFile))")
                    throw ExitCode(Failure.ioError)
                }
                return String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline).first.map(String.init)
            }
            return ProcessInfo.processInfo.environment["HUB_STORE_PASSWORD"]
        }

        /// The SHA-256 of the header and every sensor's JSON, in order.
        static func checksum(_ document: DefaultsDocument) -> String {
            var hash = SHA256()
            hash.update(data: document.headerJSON())
            for row in document.sensorRows() { hash.update(data: row.json) }
            return hash.finalize().map { String(format: "%02x", $0) }.joined()
        }

        /// Each sensor's id by name: the history keeps names.
        static func ids(_ document: DefaultsDocument) -> [String: String] {
            Dictionary(document.sensors.map { ($0.name, $0.id) }, uniquingKeysWith: { first, _ in first })
        }
    }
}
