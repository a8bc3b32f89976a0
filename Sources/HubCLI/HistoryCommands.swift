import ArgumentParser
import Foundation
import HubCore
import HubHistory

extension HubctlCommand {
    /// `hubctl history NAME`: a particulate or numeric sensor's readings, raw or aggregated.
    struct HistoryCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "history",
            abstract:
                "Show a particulate or numeric sensor's readings: raw, or min/mean/max per hour, day, week or month.",
            discussion: """
                Reads history.sqlite in the state directory, which hubd writes as readings arrive (kept for \
                history.retention, 400 days by default); with store: in the configuration, the store's database, \
                where every agent of a cluster writes. A numeric sensor's values are shown with the unit the \
                registry gives it. Periods are in UTC; weeks start on Monday. --csv prints the original air \
                monitor's rows for a particulate sensor (PM2.5,<value>,<time> and PM10,<value>,<time>), \
                time,value,unit rows for a numeric one, or for --every one row per period with a header. A status \
                sensor has no readings: its history is its events (hubctl events).

                Examples:
                  hubctl history "air quality"
                  hubctl history "air quality" --since 7d --every day
                  hubctl history "air quality" --since 30d --every hour --csv > pm.csv
                  hubctl history "living room" --since 7d --every day --json
                """)

        @OptionGroup var state: StateOptions
        @Argument(help: "The sensor's name.") var name: String
        @Option(help: "How far back: a duration like 24h, 7d.") var since = "24h"
        @Option(help: "Aggregate per hour, day, week or month.") var every: String?
        @Flag(help: "CSV instead of a table.") var csv = false
        @Flag(help: "JSON instead of a table, for scripts.") var json = false

        func validate() throws {
            guard DurationText.parse(since) != nil else {
                throw ValidationError("--since is a duration, like 24h or 7d")
            }
            if let every, History.Period(rawValue: every) == nil {
                throw ValidationError("--every is hour, day, week or month")
            }
            if csv && json { throw ValidationError("--csv and --json do not go together") }
        }

        func run() async throws {
            let (configuration, directory) = try await state.resolve()
            let store = StateOptions.registry(configuration: configuration, state: directory)
            let document = try await withStoreErrors { () async throws(StoreError) in try await store.read() }
            guard let sensor = document.sensor(named: name) else {
                throw Failure.report(RegistryError.unknownSensor(name, suggestion: nil))
            }
            guard let columns = HistoryColumns(sensor) else {
                Failure.printError(
                    "'\(sensor.name)' is a \(sensor.kind) sensor and has no readings: its history is its events"
                        + " (hubctl events \"\(sensor.name)\")")
                throw ExitCode(Failure.invalidInput)
            }
            let start = startTime(since)
            let history = try StateOptions.history(configuration: configuration, state: directory)
            if let every, let period = History.Period(rawValue: every) {
                let rows = try await withHistoryErrors { () async throws(HistoryError) in
                    try await history.aggregates(of: sensor.name, since: start, per: period)
                }
                let text =
                    csv
                    ? columns.aggregatesCSV(rows)
                    : json
                        ? columns.aggregatesJSON(rows, period: period) : columns.aggregatesTable(rows, period: period)
                print(text, terminator: "")
            } else {
                let readings = try await withHistoryErrors { () async throws(HistoryError) in
                    try await history.readings(of: sensor.name, since: start)
                }
                let text =
                    csv
                    ? columns.readingsCSV(readings) : json ? columns.readingsJSON(readings) : columns.table(readings)
                print(text, terminator: "")
            }
        }
    }

    /// `hubctl events`: status changes over time.
    struct Events: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "events",
            abstract: "Show status changes, silences, recoveries and air-quality alerts over time.",
            discussion: """
                Reads the history as hubctl history does: history.sqlite, or with store: the store's database.

                Examples:
                  hubctl events
                  hubctl events "front door" --since 7d
                  hubctl events --csv --limit 0 > events.csv
                  hubctl events --json --since 1h
                At most --limit events are shown: the newest, oldest first; hubctl says on standard error when \
                there were more.
                """)

        @OptionGroup var state: StateOptions
        @Argument(help: "One sensor's name; all sensors when left out.") var name: String?
        @Option(help: "How far back: a duration like 24h, 7d.") var since = "24h"
        @Flag(help: "CSV instead of a table.") var csv = false
        @Flag(help: "JSON instead of a table, for scripts: a list of the events as /api/v1/events gives them.")
        var json = false
        @Option(parsing: .unconditional, help: "Show the newest this many events (oldest first); 0 shows all.")
        var limit = 10_000

        func validate() throws {
            if csv && json { throw ValidationError("--csv and --json do not go together") }
            guard DurationText.parse(since) != nil else {
                throw ValidationError("--since is a duration, like 24h or 7d")
            }
            guard limit >= 0 else { throw ValidationError("--limit is a count of events, 0 for all") }
        }

        func run() async throws {
            let (configuration, directory) = try await state.resolve()
            let store = StateOptions.registry(configuration: configuration, state: directory)
            var sensorName: String?
            if let name {
                let document = try await withStoreErrors { () async throws(StoreError) in try await store.read() }
                guard let sensor = document.sensor(named: name) else {
                    throw Failure.report(RegistryError.unknownSensor(name, suggestion: nil))
                }
                sensorName = sensor.name
            }
            let history = try StateOptions.history(configuration: configuration, state: directory)
            let start = startTime(since)
            // One more than shown, to say when there were more.
            let wanted = limit == 0 ? 1 << 62 : limit + 1
            var events = try await withHistoryErrors { () async throws(HistoryError) in
                try await history.events(of: sensorName, since: start, limit: wanted)
            }
            let more = events.count == wanted
            // The newest `limit`: the one more read to know there were more is the oldest.
            if more { events.removeFirst() }
            print(
                csv ? Output.eventsCSV(events) : json ? try Output.eventsJSON(events) : Output.eventsTable(events),
                terminator: "")
            if more {
                Failure.printError(
                    "showing the newest \(limit) events since \(since) ago; there are more: --limit 0 shows all, or narrow --since"
                )
            }
        }
    }
}

private func startTime(_ since: String) -> Timestamp {
    let duration = DurationText.parse(since) ?? .seconds(86_400)
    return Timestamp(millisecondsSince1970: Timestamp.now.millisecondsSince1970 - Int64(duration.seconds * 1000))
}

func withHistoryErrors<T>(_ body: () throws(HistoryError) -> T) throws -> T {
    do {
        return try body()
    } catch {
        throw historyFailure(error)
    }
}

func withHistoryErrors<T>(_ body: () async throws(HistoryError) -> T) async throws -> T {
    do {
        return try await body()
    } catch {
        throw historyFailure(error)
    }
}

/// Says what went wrong; the exit status: 69 no history yet or its database unreachable, 74 it can't be read.
private func historyFailure(_ error: HistoryError) -> ExitCode {
    Failure.printError(error.description)
    switch error {
    case .missing, .unavailable: return ExitCode(Failure.unavailable)
    case .database: return ExitCode(Failure.ioError)
    }
}

extension Output {
    static func eventsTable(_ events: [SensorEvent]) -> String {
        guard !events.isEmpty else { return "No events in that time.\n" }
        let rows = events.map {
            [absolute($0.time), $0.sensor, $0.kind.rawValue, $0.oldStatus, $0.newStatus, $0.value ?? ""]
        }
        return table(header: ["TIME", "SENSOR", "EVENT", "FROM", "TO", "DETAIL"], rows: rows)
    }

    /// A CSV field: escaped as a terminal shows it, quoted when it holds a comma, a quote or a line break.
    static func csvField(_ raw: String) -> String { SensorEvent.csvField(raw) }

    static func eventsCSV(_ events: [SensorEvent]) -> String { SensorEvent.csv(events) }

    /// The events as `/api/v1/events` answers: a list of `{"detail", "event", "from", "sensor", "time", "to"}`.
    static func eventsJSON(_ events: [SensorEvent]) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(events.map(SensorEvent.HistoryRow.init)), as: UTF8.self) + "\n"
    }
}
