import ArgumentParser
import Foundation
import HubCore
import HubNotify
import HubRemote
import Logging

extension HubctlCommand {
    /// `hubctl alerts …`: what is open, and acknowledging it.
    struct Alerts: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "alerts",
            abstract: "See the open alerts and acknowledge them.",
            discussion: """
                Alerts are made by the rules that set group_by, group_wait, repeat, escalate or quiet_hours (see \
                docs/alerts.md). hubd keeps them in alerts.json in its state directory; what you ask here \
                is handed to hubd through alert-requests.jsonl and works whether or not it runs (it is taken when \
                hubd next starts). In a cluster (cluster: and store: in hubd.yaml) the book and the requests are \
                in the cluster's database, and the agent that keeps the book takes them.
                """,
            subcommands: [List.self, Show.self, Ack.self],
            defaultSubcommand: List.self,
            // The singular works too (`hubctl sensor list`), as people type it.
            aliases: ["alert"]
        )
    }

    /// `hubctl silences …`.
    struct Silences: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "silences",
            abstract: "Hold back alerts for a while: add, list and end silences.",
            subcommands: [Add.self, List.self, Expire.self],
            defaultSubcommand: List.self,
            // The singular works too (`hubctl sensor list`), as people type it.
            aliases: ["silence"]
        )
    }
}

/// What hubctl reads of the alerts (`SavedAlerts`), and how it hands hubd a request: the state directory's files, or
/// in a cluster (`cluster:` with `store:`) the cluster's database, whichever agent keeps the book.
struct AlertView {
    var saved: SavedAlerts
    let place: any AlertPlace
    /// The rules and quiet hours of the configuration, to say why an alert waits (nil when it can't be read).
    let setup: AlertBook.Setup?
    var book: AlertBook { saved.book }

    /// An alert's state, and why it waits.
    func why(_ alert: AlertBook.Alert, now: Timestamp) -> String { book.why(alert, setup, now: now) }

    init(_ options: StateOptions) async throws {
        let (configuration, state) = try await options.resolve()
        setup = (try? NotifierConfiguration.read(HubConfiguration.file(option: options.config)))?.alertSetup
        if configuration.cluster != nil, let server = configuration.store {
            var logger = Logger(label: "hubctl")
            logger.logLevel = .warning
            place = PostgresAlertBook(
                server: server, hub: configuration.storeHub, name: "hubctl alerts", keepsConnection: false,
                logger: logger)
        } else {
            // A running hubd writes the book's files only when it must be durable: it writes them now.
            WriteRequest.ask(directory: state.path)
            place = AlertFiles(directory: state.path)
        }
        do {
            saved = try await place.saved()
        } catch let error as AlertInputError {
            Failure.printError(error.description)
            throw ExitCode(Failure.damagedFile)
        } catch {
            Failure.printError("cannot read the cluster's alert book: \(PostgresRegistry.reason(error))")
            throw ExitCode(Failure.unavailable)
        }
    }

    func send(_ request: AlertRequest) async throws {
        do {
            try await place.send([request])
        } catch let error as StoreError {
            throw Failure.report(error)
        } catch {
            Failure.printError("cannot queue the request: \(PostgresRegistry.reason(error))")
            throw ExitCode(Failure.unavailable)
        }
    }

    /// Who is asking: the person behind sudo, else the login name.
    static var person: String {
        let environment = ProcessInfo.processInfo.environment
        return environment["SUDO_USER"] ?? environment["USER"] ?? environment["LOGNAME"] ?? "hubctl"
    }
}

extension HubctlCommand.Alerts {
    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list", abstract: "List the open alerts: firing, acknowledged, held by a parent.")

        @OptionGroup var state: StateOptions
        @Flag(help: "Print JSON, for scripts.") var json = false

        func run() async throws {
            let view = try await AlertView(state)
            let now = Timestamp.now
            let alerts = view.book.alerts.values.sorted { ($0.opened, $0.id) < ($1.opened, $1.id) }
            if json {
                print(String(decoding: view.book.json(alerts, view.setup, now: now), as: UTF8.self))
                return
            }
            guard !alerts.isEmpty else {
                print("No open alerts.")
                return
            }
            let rows = alerts.map { alert in
                [
                    alert.id, Output.shown(alert.event.newStatus), Output.shown(view.why(alert, now: now)),
                    Output.relative(alert.opened, now: now), alert.told.joined(separator: ", "),
                ]
            }
            print(Output.table(header: ["ALERT", "STATUS", "STATE", "OPENED", "TOLD"], rows: rows), terminator: "")
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "show", abstract: "Show one alert in full.")

        @OptionGroup var state: StateOptions
        @Argument(help: "The alert's id (rule/sensor/kind), as `hubctl alerts list` shows it.") var alert: String
        @Flag(help: "Print JSON (as /api/v1/alerts writes an alert, with its state), for scripts.") var json = false

        func run() async throws {
            let view = try await AlertView(state)
            guard let alert = view.book.alerts[alert] else {
                Failure.printError("no open alert '\(alert)'; see hubctl alerts list")
                throw ExitCode(Failure.invalidInput)
            }
            if json {
                // One object, not a list of one.
                let list = try JSONSerialization.jsonObject(with: view.book.json([alert], view.setup, now: .now))
                let object = (list as? [Any])?.first ?? [:]
                let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .prettyPrinted])
                print(String(decoding: data, as: UTF8.self))
                return
            }
            var fields: [(String, String)] = [
                ("Alert", alert.id), ("Rule", alert.rule), ("Sensor", Output.shown(alert.sensor)),
                ("Kind", alert.kind), ("Status", Output.shown(alert.event.newStatus)),
                ("State", Output.shown(view.why(alert, now: Timestamp.now))),
                ("Opened", Output.absolute(alert.opened)),
            ]
            if let notified = alert.notified {
                fields.append(("Told", "\(alert.told.joined(separator: ", ")) at \(Output.absolute(notified))"))
            }
            if let ack = alert.acknowledged {
                fields.append(
                    ("Acknowledged", "\(Output.shown(ack.spoken)) at \(Output.absolute(ack.at))"))
            }
            if let parent = alert.heldBy { fields.append(("Held by", "\(parent) (offline)")) }
            if alert.escalated > 0 { fields.append(("Escalated", "\(alert.escalated) step(s)")) }
            print(Output.aligned(fields).joined(separator: "\n"))
        }
    }

    struct Ack: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "ack",
            abstract: "Acknowledge alerts: their reminders and escalation stop until they fire again.",
            discussion: """
                Examples:
                  hubctl alerts ack leak/kitchen-leak/status
                  hubctl alerts ack kitchen-leak        (every open alert of that sensor)
                """)

        @OptionGroup var state: StateOptions
        @Argument(help: "An alert's id, or a sensor's name (all of its firing alerts).") var target: String
        @Option(help: "Who acknowledges (default: your login name).") var by: String?

        func run() async throws {
            let view = try await AlertView(state)
            let firing = view.book.alerts.values.filter(\.firing)
            let chosen =
                firing.filter { $0.id == target }.isEmpty
                ? firing.filter { $0.sensor.caseInsensitiveCompare(target) == .orderedSame }
                : firing.filter { $0.id == target }
            guard !chosen.isEmpty else {
                Failure.printError(
                    "no firing alert is '\(target)' (an alert id or a sensor name); see hubctl alerts list")
                throw ExitCode(Failure.invalidInput)
            }
            let now = Timestamp.now
            for alert in chosen.sorted(by: { $0.id < $1.id }) {
                try await view.send(.acknowledge(alert: alert.id, by: by ?? AlertView.person, via: "hubctl", at: now))
                print("Acknowledged \(alert.id).")
            }
        }
    }
}

extension HubctlCommand.Silences {
    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "add",
            abstract: "Silence the alerts that match every matcher, for a while.",
            discussion: """
                A matcher is name=value or name!=value; the value may be a glob (door*). The names: sensor, \
                kind (offline, status, threshold, air_quality, or an event's kind), status, rule, or a label of \
                alerts.sensors (room). A bare word is a sensor: `door*` is sensor=door*. While a silence is in \
                force its alerts are not sent; when it ends, those still firing are sent at once, and an alert \
                that was sent before it still gets its resolved message.

                Examples:
                  hubctl silences add 'door*' --for 1h --comment "painting the doors"
                  hubctl silences add room=garage kind=offline --until 2026-12-01T08:00
                """)

        @OptionGroup var state: StateOptions
        @Argument(help: "Matchers: name=value, name!=value, or a sensor glob.") var matchers: [String]
        @Option(name: .customLong("for"), help: "How long, like 30m, 2h or 1d (default 1h).") var duration: String?
        @Option(help: "When it ends instead, as an ISO 8601 time (2026-12-01T08:00, local time without a zone).")
        var until: String?
        @Option(help: "When it starts, if not now (ISO 8601).") var from: String?
        @Option(help: "Why, for whoever reads it later.") var comment = ""
        @Option(help: "Who asks (default: your login name).") var by: String?

        func validate() throws {
            guard !matchers.isEmpty else { throw ValidationError("Say what to silence: a sensor glob or name=value.") }
            if duration != nil && until != nil { throw ValidationError("Give --for or --until, not both.") }
            if let duration { _ = try Self.length(duration) }
            // `--for 1 hour`: "hour" would be taken as a sensor called hour.
            let units = ["s", "sec", "second", "seconds", "m", "min", "minute", "minutes", "h", "hour", "hours", "d", "day", "days"]
            for word in matchers where units.contains(word.lowercased()) {
                throw ValidationError("'\(word)' looks like the unit of --for, not a sensor: write --for 1h (no space).")
            }
        }

        /// The length `--for` gives: a number with its unit, more than nothing.
        static func length(_ text: String) throws -> Duration {
            let trimmed = text.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("-") {
                throw ValidationError("--for '\(text)': a silence can't last a negative time; use 30m, 2h or 1d.")
            }
            if !trimmed.isEmpty, trimmed.allSatisfy({ $0.isNumber || $0 == "." }) {
                throw ValidationError(
                    "--for '\(text)' has no unit: write \(trimmed)m, \(trimmed)h or \(trimmed)d (\(trimmed)s for seconds).")
            }
            if let zero = DurationText.parse(trimmed, allowingZero: true), zero == .zero {
                throw ValidationError("--for '\(text)': a silence must last longer than nothing; use 30m, 2h or 1d.")
            }
            guard let length = DurationText.parse(trimmed) else {
                throw ValidationError("--for '\(text)' is not a duration; use 30m, 2h or 1d.")
            }
            return length
        }

        func run() async throws {
            let parsed: [Silence.Matcher]
            do {
                parsed = try matchers.map { text throws(AlertInputError) in try Silence.Matcher(parsing: text) }
            } catch {
                throw ValidationError(error.description)
            }
            let now = Timestamp.now
            let start = try from.map { try Self.time($0, option: "--from") } ?? now
            let end: Timestamp
            if let until {
                end = try Self.time(until, option: "--until")
            } else {
                let length = try Self.length(duration ?? "1h")
                end = start.adding(milliseconds: Int64(length.components.seconds) * 1000)
            }
            guard end > start, end > now else { throw ValidationError("The silence would end before it starts.") }
            let id = String(UInt32.random(in: 0...UInt32.max), radix: 16)
            let silence = Silence(
                id: id, matchers: parsed, startsAt: start, endsAt: end, createdBy: by ?? AlertView.person,
                comment: comment)
            let view = try await AlertView(state)
            do {
                try silence.check(inForce: view.saved.silences(at: now).count, now: now)
            } catch {
                throw ValidationError(error.description.prefix(1).uppercased() + error.description.dropFirst() + ".")
            }
            try await view.send(.silence(silence))
            let names = (try? await state.registry().read())?.sensors.map(\.name) ?? []
            let facts = view.setup?.facts ?? { _ in AlertBook.SensorFacts() }
            if let warning = silence.unmatchedWarning(sensors: names, facts: facts) {
                FileHandle.standardError.write(Data("hubctl: warning: \(warning)\n".utf8))
            }
            print("Silence \(id): \(parsed.map(\.description).joined(separator: " ")) until \(Output.absolute(end)).")
        }

        static func time(_ text: String, option: String) throws -> Timestamp {
            if let time = Timestamp(iso8601: text) { return time }
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            for format in ["yyyy-MM-dd'T'HH:mm", "yyyy-MM-dd'T'HH:mm:ss", "yyyy-MM-dd HH:mm"] {
                formatter.dateFormat = format
                if let date = formatter.date(from: text) { return Timestamp(date) }
            }
            throw ValidationError("\(option) '\(text)' is not a time; use 2026-12-01T08:00 (local) or with a zone.")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list", abstract: "List the silences in force and to come (--all: the expired ones too).")

        @OptionGroup var state: StateOptions
        @Flag(help: "Show expired silences too (kept five days).") var all = false
        @Flag(help: "Print JSON, for scripts.") var json = false

        func run() async throws {
            let view = try await AlertView(state)
            let now = Timestamp.now
            let silences = view.saved.silences(at: now, expired: all)
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
                print(String(decoding: try encoder.encode(silences.map(\.silence)), as: UTF8.self))
                return
            }
            guard !silences.isEmpty else {
                print(all ? "No silences." : "No silences in force.")
                return
            }
            let rows = silences.map { silence, waiting in
                [
                    silence.id, silence.matchers.map(\.description).joined(separator: " "),
                    silence.state(at: now).rawValue + (waiting ? " (hubd has not taken it yet)" : ""),
                    Output.absolute(silence.endsAt), Output.shown(silence.createdBy), Output.shown(silence.comment),
                ]
            }
            print(
                Output.table(header: ["ID", "MATCHERS", "STATE", "ENDS", "BY", "COMMENT"], rows: rows), terminator: "")
        }
    }

    struct Expire: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "expire",
            abstract: "End a silence now: alerts it held that are still firing are sent at once.")

        @OptionGroup var state: StateOptions
        @Argument(help: "The silence's id, as `hubctl silences list` shows it.") var id: String

        func run() async throws {
            let view = try await AlertView(state)
            let now = Timestamp.now
            guard view.saved.hasSilence(id, at: now) else {
                Failure.printError("no silence '\(id)' is in force or to come; see hubctl silences list")
                throw ExitCode(Failure.invalidInput)
            }
            try await view.send(.expire(silence: id, at: now, by: AlertView.person))
            print("Silence \(id) expired.")
        }
    }
}
