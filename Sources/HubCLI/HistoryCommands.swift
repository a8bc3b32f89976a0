import ArgumentParser
import Foundation
import HubCore
import HubHistory

extension HubctlCommand {
    /// `hubctl history NAME`: a particulate sensor's readings, raw or aggregated.
    struct HistoryCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "history",
            abstract: "Show a particulate sensor's readings: raw, or min/mean/max per hour, day, week or month.",
            discussion: """
                Reads history.sqlite in the state directory, which hubd writes as readings arrive (kept for \
                history.retention, 400 days by default). Periods are in UTC; weeks start on Monday. --csv prints \
                the original air monitor's rows (PM2.5,<value>,<time> and PM10,<value>,<time>), or for --every \
                one row per period with a header.

                Examples:
                  hubctl history "air quality"
                  hubctl history "air quality" --since 7d --every day
                  hubctl history "air quality" --since 30d --every hour --csv > pm.csv
                """)

        @OptionGroup var state: StateOptions
        @Argument(help: "The sensor's name.") var name: String
        @Option(help: "How far back: a duration like 24h, 7d.") var since = "24h"
        @Option(help: "Aggregate per hour, day, week or month.") var every: String?
        @Flag(help: "CSV instead of a table.") var csv = false

        func validate() throws {
            guard DurationText.parse(since) != nil else {
                throw ValidationError("--since is a duration, like 24h or 7d")
            }
            if let every, History.Period(rawValue: every) == nil {
                throw ValidationError("--every is hour, day, week or month")
            }
        }

        func run() async throws {
            let directory = try await state.state()
            let document = try withStoreErrors { () throws(StoreError) in try directory.store.read() }
            guard let sensor = document.sensor(named: name) else {
                throw Failure.report(RegistryError.unknownSensor(name, suggestion: nil))
            }
            guard sensor.kind == .particulate else {
                Failure.printError(
                    "\(sensor.name) is a status sensor: its history is its events (hubctl events \"\(sensor.name)\")")
                throw ExitCode(Failure.invalidInput)
            }
            let start = startTime(since)
            let history = try openHistory(directory)
            if let every, let period = History.Period(rawValue: every) {
                let rows = try withHistoryErrors { () throws(HistoryError) in
                    try history.aggregates(of: sensor.name, since: start, per: period)
                }
                print(csv ? Output.aggregatesCSV(rows) : Output.aggregatesTable(rows, period: period), terminator: "")
            } else {
                let readings = try withHistoryErrors { () throws(HistoryError) in
                    try history.readings(of: sensor.name, since: start)
                }
                print(csv ? Output.readingsCSV(readings) : Output.readingsTable(readings), terminator: "")
            }
        }
    }

    /// `hubctl events`: status changes over time.
    struct Events: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show status changes, silences, recoveries and air-quality alerts over time.",
            discussion: """
                Examples:
                  hubctl events
                  hubctl events "front door" --since 7d
                  hubctl events --csv > events.csv
                """)

        @OptionGroup var state: StateOptions
        @Argument(help: "One sensor's name; all sensors when left out.") var name: String?
        @Option(help: "How far back: a duration like 24h, 7d.") var since = "24h"
        @Flag(help: "CSV instead of a table.") var csv = false

        func validate() throws {
            guard DurationText.parse(since) != nil else {
                throw ValidationError("--since is a duration, like 24h or 7d")
            }
        }

        func run() async throws {
            let directory = try await state.state()
            var sensorName: String?
            if let name {
                let document = try withStoreErrors { () throws(StoreError) in try directory.store.read() }
                guard let sensor = document.sensor(named: name) else {
                    throw Failure.report(RegistryError.unknownSensor(name, suggestion: nil))
                }
                sensorName = sensor.name
            }
            let history = try openHistory(directory)
            let start = startTime(since)
            let events = try withHistoryErrors { () throws(HistoryError) in
                try history.events(of: sensorName, since: start)
            }
            print(csv ? Output.eventsCSV(events) : Output.eventsTable(events), terminator: "")
        }
    }
}

private func startTime(_ since: String) -> Timestamp {
    let duration = DurationText.parse(since) ?? .seconds(86_400)
    return Timestamp(millisecondsSince1970: Timestamp.now.millisecondsSince1970 - Int64(duration.seconds * 1000))
}

private func openHistory(_ directory: StateDirectory) throws -> History {
    try withHistoryErrors { () throws(HistoryError) in try History(directory: directory.path, create: false) }
}

func withHistoryErrors<T>(_ body: () throws(HistoryError) -> T) throws -> T {
    do {
        return try body()
    } catch {
        Failure.printError(error.description)
        if case .missing = error { throw ExitCode(Failure.unavailable) }
        throw ExitCode(Failure.ioError)
    }
}

extension Output {
    static func readingsTable(_ readings: [ParticulateReading]) -> String {
        guard !readings.isEmpty else { return "No readings in that time.\n" }
        let rows = readings.map {
            [
                absolute($0.time), $0.pm25.map(ParticulateReading.format) ?? "-",
                $0.pm10.map(ParticulateReading.format) ?? "-",
            ]
        }
        return table(header: ["TIME", "PM2.5", "PM10"], rows: rows)
    }

    /// The original monitor's rows: `PM2.5,<value>,<time>` then `PM10,<value>,<time>` per reading.
    static func readingsCSV(_ readings: [ParticulateReading]) -> String {
        readings.map { reading in
            var lines = ""
            if let pm25 = reading.pm25 { lines += "PM2.5,\(ParticulateReading.format(pm25)),\(reading.time.iso8601)\n" }
            if let pm10 = reading.pm10 { lines += "PM10,\(ParticulateReading.format(pm10)),\(reading.time.iso8601)\n" }
            return lines
        }.joined()
    }

    static func aggregatesTable(_ rows: [History.Aggregate], period: History.Period) -> String {
        guard !rows.isEmpty else { return "No readings in that time.\n" }
        func triple(_ value: (min: Double, mean: Double, max: Double)?) -> String {
            guard let value else { return "-" }
            return [value.min, value.mean, value.max].map(ParticulateReading.format).joined(separator: " / ")
        }
        let body = rows.map {
            [
                $0.start.iso8601.prefix(period == .hour ? 16 : 10).description, String($0.count), triple($0.pm25),
                triple($0.pm10),
            ]
        }
        return table(
            header: [
                period.rawValue.uppercased() + " (UTC)", "READINGS", "PM2.5 MIN / MEAN / MAX", "PM10 MIN / MEAN / MAX",
            ], rows: body)
    }

    static func aggregatesCSV(_ rows: [History.Aggregate]) -> String {
        var text = "start,readings,pm25_min,pm25_mean,pm25_max,pm10_min,pm10_mean,pm10_max\n"
        for row in rows {
            let pm25 = row.pm25.map { [$0.min, $0.mean, $0.max].map(ParticulateReading.format) } ?? ["", "", ""]
            let pm10 = row.pm10.map { [$0.min, $0.mean, $0.max].map(ParticulateReading.format) } ?? ["", "", ""]
            text += ([row.start.iso8601, String(row.count)] + pm25 + pm10).joined(separator: ",") + "\n"
        }
        return text
    }

    static func eventsTable(_ events: [SensorEvent]) -> String {
        guard !events.isEmpty else { return "No events in that time.\n" }
        let rows = events.map {
            [absolute($0.time), $0.sensor, $0.kind.rawValue, $0.oldStatus, $0.newStatus, $0.value ?? ""]
        }
        return table(header: ["TIME", "SENSOR", "EVENT", "FROM", "TO", "DETAIL"], rows: rows)
    }

    static func eventsCSV(_ events: [SensorEvent]) -> String {
        func field(_ raw: String) -> String {
            let text = shown(raw)
            return text.contains(where: { $0 == "," || $0 == "\"" || $0.isNewline })
                ? "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\"" : text
        }
        var text = "time,sensor,event,from,to,detail\n"
        for event in events {
            text +=
                [
                    event.time.iso8601, event.sensor, event.kind.rawValue, event.oldStatus, event.newStatus,
                    event.value ?? "",
                ]
                .map(field).joined(separator: ",") + "\n"
        }
        return text
    }
}
