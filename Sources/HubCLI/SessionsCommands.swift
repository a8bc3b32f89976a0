import ArgumentParser
import Foundation
import HubCore
import HubHistory
import HubSupport
import Mosquitto

extension HubctlCommand {
    /// `hubctl sessions`: mobile sensors' recording sessions.
    struct Sessions: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "sessions",
            abstract: "List, show, export, start and stop mobile sensors' recording sessions.",
            discussion: """
                A sensor is mobile when hubd.yaml's sessions: names it. Its readings carry where they were taken \
                (lat and lon in its payload) and belong to recording sessions: started by its first reading and \
                ended after a gap (gap: 10m, the default), or started and stopped when told (gap: manual, or any \
                time with hubctl sessions start/stop). A fixed sensor's readings are one open-ended session, \
                fixed:<name>.

                Examples:
                  hubctl sessions list walker --since 7d
                  hubctl sessions show 3f2a9c0d11aa-17
                  hubctl sessions export 3f2a9c0d11aa-17 --gpx > walk.gpx
                  hubctl sessions start walker
                """,
            subcommands: [List.self, Show.self, Export.self, Start.self, Stop.self],
            defaultSubcommand: List.self,
            // The singular works too (`hubctl session list`), as people type it.
            aliases: ["session"])
    }
}

extension HubctlCommand.Sessions {
    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list",
            abstract: "List recording sessions, newest first.",
            discussion: """
                A fixed sensor named here shows its one open-ended session (fixed:<name>). Times are local.
                """)

        @OptionGroup var state: StateOptions
        @OptionGroup var clock: ClockOptions
        @Argument(help: "One sensor's name; every mobile sensor's when left out.") var name: String?
        @Option(help: "How far back: a duration like 24h, 7d.") var since = "30d"

        func validate() throws {
            guard DurationText.parse(since) != nil else { throw ValidationError("--since is a duration, like 7d") }
        }

        func run() async throws {
            let directory = try await state.state()
            var sensor: Sensor?
            if let name {
                let store = try await state.registry()
                let document = try await withStoreErrors { () async throws(StoreError) in try await store.read() }
                guard let found = document.sensor(named: name) else {
                    throw Failure.report(RegistryError.unknownSensor(name, suggestion: nil))
                }
                sensor = found
            }
            let history = try await state.history()
            let start = Timestamp(
                millisecondsSince1970: clock.current.millisecondsSince1970
                    - Int64((DurationText.parse(since) ?? .zero).seconds * 1000))
            var sessions = try await withHistoryErrors { () async throws(HistoryError) in
                try await history.sessions(of: sensor?.name, since: start, limit: 1000)
            }
            if let sensor, sessions.isEmpty,
                let fixed = try await withHistoryErrors({ () async throws(HistoryError) in
                    try await history.session(SessionSummary.fixedID(of: sensor.name))
                })
            {
                sessions = [fixed]
            }
            guard !sessions.isEmpty else {
                print(
                    "no sessions since \(Output.absolute(start))"
                        + (sensor.map { " of '\(Output.shown($0.name))'" } ?? ""))
                return
            }
            let now = clock.current
            let rows = sessions.map { session in
                [
                    session.id, session.sensor, Output.absolute(session.started),
                    session.ended.map { DurationText.format(session.started.distance(to: $0)) }
                        ?? "recording (\(session.started.relative(to: now)))",
                    String(session.readings),
                ]
            }
            print(Output.table(header: ["ID", "SENSOR", "STARTED", "LENGTH", "READINGS"], rows: rows), terminator: "")
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "show",
            abstract: "Show a session: when, how long, how far, what it measured, time above the WHO guideline.")

        @OptionGroup var state: StateOptions
        @Argument(help: "The session's id (hubctl sessions list), or fixed:<sensor>.") var id: String

        func run() async throws {
            let (summary, points) = try await read(id, state)
            let statistics = SessionStatistics(points)
            var fields: [(String, String)] = [
                ("Session", summary.id), ("Sensor", summary.sensor), ("Started", Output.absolute(summary.started)),
                (
                    "Ended",
                    summary.ended.map {
                        "\(Output.absolute($0)) (\(DurationText.format(summary.started.distance(to: $0))))"
                    }
                        ?? "still recording"
                ),
                ("Readings", "\(statistics.count) (\(statistics.positioned) with a position)"),
                (
                    "Distance",
                    statistics.distance < 1000
                        ? "\(Int(statistics.distance.rounded())) m"
                        : String(format: "%.2f km", statistics.distance / 1000)
                ),
            ]
            func spread(_ label: String, _ spread: Spread?, _ unit: String) {
                guard let spread else { return }
                fields.append(
                    (label, String(format: "min %.1f, mean %.1f, max %.1f", spread.min, spread.mean, spread.max) + unit)
                )
            }
            spread("PM2.5", statistics.pm25, " µg/m³")
            spread("PM10", statistics.pm10, " µg/m³")
            spread("Value", statistics.value, "")
            if statistics.pm25 != nil {
                fields.append(
                    (
                        "Above \(ParticulateReading.trim(statistics.guideline)) µg/m³",
                        DurationText.format(statistics.aboveGuideline) + " (PM2.5 over the WHO 24-hour guideline)"
                    ))
            }
            print(Output.aligned(fields).joined(separator: "\n"))
        }
    }

    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "export",
            abstract: "Write a session's readings as GPX, GeoJSON or CSV to standard output.",
            discussion: """
                GPX 1.1 (a track of the positioned readings, values in its extensions) for maps and GPS tools; \
                GeoJSON (RFC 7946: [longitude, latitude]) for GIS and web maps; CSV for spreadsheets (every \
                reading, positioned or not).
                """)

        @OptionGroup var state: StateOptions
        @Argument(help: "The session's id (hubctl sessions list), or fixed:<sensor>.") var id: String
        @Flag(help: "The format.") var format: Format = .geojson

        enum Format: String, EnumerableFlag {
            case gpx, geojson, csv
        }

        func run() async throws {
            let (summary, points) = try await read(id, state)
            let export = SessionExport(summary: summary, points: points)
            switch format {
            case .gpx: print(export.gpx(), terminator: "")
            case .geojson: print(export.geoJSON())
            case .csv: print(export.csv(), terminator: "")
            }
        }
    }

    struct Start: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "start",
            abstract: "Start a mobile sensor's recording session (a stop and a start when one is open).",
            discussion: Control.discussion)
        @OptionGroup var control: Control
        func run() async throws { try await control.send("start") }
    }

    struct Stop: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "stop",
            abstract: "Stop a mobile sensor's recording session.", discussion: Control.discussion)
        @OptionGroup var control: Control
        func run() async throws { try await control.send("stop") }
    }

    /// What `start` and `stop` share: the control message a device would send, published to the sensor's topic.
    struct Control: ParsableArguments {
        static let discussion = """
            Publishes {"session":"start"} or {"session":"stop"} to the sensor's topic at QoS 1, as the device \
            itself may: hubd takes it in order with the readings. hubd keeps a persistent session with the \
            broker, so while it is stopped the broker holds the message for it.
            """

        @OptionGroup var state: StateOptions
        @OptionGroup var broker: BrokerOptions
        @Argument(help: "The mobile sensor's name.") var name: String
        @Option(parsing: .unconditional, help: "Seconds each step (connecting, publishing) may take.") var timeout:
            Double = 10

        func send(_ action: String) async throws {
            let (configuration, directory) = try await state.resolve()
            let store = StateOptions.registry(configuration: configuration, state: directory)
            let document = try await withStoreErrors { () async throws(StoreError) in try await store.read() }
            guard let sensor = document.sensor(named: name) else {
                throw Failure.report(RegistryError.unknownSensor(name, suggestion: nil))
            }
            guard configuration.sessions.contains(where: { glob(anyOf: $0.sensors, sensor.name) }) else {
                Failure.printError(
                    "'\(Output.shown(sensor.name))' is not a mobile sensor: name it in sessions: in hubd.yaml"
                        + " (- sensors: [\(Output.shown(sensor.name))]) and reload hubd")
                throw ExitCode(Failure.invalidInput)
            }
            let session = try await BrokerSession(
                directory: directory, store: store, options: broker, purpose: "session",
                timeout: .milliseconds(Int(max(timeout, 0.1) * 1000)))
            try await session.run { client in
                try await client.publish(topic: sensor.topic, payload: #"{"session":"\#(action)"}"#, qos: .atLeastOnce)
            }
            print("asked hubd to \(action) the session of '\(Output.shown(sensor.name))' (on \(session.endpoint))")
        }
    }
}

/// The session called `id` and its readings, or hubctl's error for an unknown one.
private func read(_ id: String, _ state: StateOptions) async throws -> (SessionSummary, [TrackPoint]) {
    let history = try await state.history()
    let found = try await withHistoryErrors { () async throws(HistoryError) -> (SessionSummary, [TrackPoint])? in
        guard let summary = try await history.session(id) else { return nil }
        return (summary, try await history.track(of: id, limit: 1_000_000))
    }
    guard let found else {
        Failure.printError("no session '\(Output.shown(id))' in the history (see hubctl sessions list)")
        throw ExitCode(Failure.invalidInput)
    }
    return found
}
