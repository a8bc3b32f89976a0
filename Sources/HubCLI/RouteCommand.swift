import ArgumentParser
import Foundation
import HubCore
import HubHistory

extension HubctlCommand {
    /// `hubctl route --from LAT,LON --to LAT,LON`: the least-polluted route over the readings mobile sensors took.
    struct RouteCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "route",
            abstract: "Plan the least-polluted route between two places from the PM2.5 readings mobile sensors took.",
            discussion: """
                Takes the PM2.5 readings with a position in the history (history.sqlite, or with store: the \
                store's database; mobile sensors' payloads with lat and \
                lon) inside the circle around the midpoint of start and end whose radius is half their distance \
                plus --margin, spreads them over a grid of --cell m squares by inverse-distance weighting (each \
                cell from the readings within --radius m), and finds with A* the path that minimises length × \
                (1 + k × PM2.5), k being --weight. With --roads the path follows the roads of a GeoJSON file of \
                LineStrings (an OpenStreetMap extract turned into GeoJSON) instead of crossing the grid.

                It prints the route's length and exposure (µg/m³ × metres) beside the shortest path's, and what \
                the detour buys. Cells with no reading within the radius count at --default µg/m³ (the WHO 24-hour \
                guideline, 15, unless told), and the output says how many there were. At most the newest \
                \(RouteText.grouped(History.maximumAreaReadings)) readings in the area are used. --format geojson \
                prints the route as a GeoJSON Feature (a LineString of [longitude, latitude]), --format gpx as a \
                GPX 1.1 track.

                Examples:
                  hubctl route --from 52.091,5.121 --to 52.086,5.140
                  hubctl route --from 52.091,5.121 --to 52.086,5.140 --since 7d --weight 0.05
                  hubctl route --from 52.091,5.121 --to 52.086,5.140 --roads city.geojson
                  hubctl route --from 52.091,5.121 --to 52.086,5.140 --format gpx > walk.gpx

                Exit status: 0 a route; 64 a bad coordinate or setting, start and end in one cell, a point off the \
                roads, an unknown sensor; 65 the road file is not GeoJSON LineStrings, or its roads do not join \
                start and end; 66 no PM2.5 readings with a position in the area, or a road file that can't be read; \
                69 no history yet; 74 the history can't be read.
                """)

        enum Format: String, ExpressibleByArgument, CaseIterable {
            case text, geojson, gpx
        }

        @OptionGroup var state: StateOptions
        @Option(
            name: .customLong("from"), parsing: .unconditional,
            help: ArgumentHelp(
                "Where the route starts, in decimal degrees (north and east positive).", valueName: "lat,lon"))
        var from: String
        @Option(
            name: .customLong("to"), parsing: .unconditional,
            help: ArgumentHelp("Where the route ends.", valueName: "lat,lon"))
        var to: String
        @Option(help: "How far back the readings go: a duration like 7d or 30d.") var since = "30d"
        @Option(
            help: ArgumentHelp(
                "A GeoJSON file of roads (LineStrings) to route along, instead of across the grid.",
                valueName: "file.geojson"))
        var roads: String?
        @Option(
            parsing: .unconditional,
            help: ArgumentHelp("Metres added to the circle the readings are taken from.", valueName: "m"))
        var margin = RouteRequest.defaultMargin
        @Option(parsing: .unconditional, help: ArgumentHelp("Metres along a grid cell's side.", valueName: "m"))
        var cell = 25.0
        @Option(
            parsing: .unconditional,
            help: ArgumentHelp("Metres within which a reading counts for a cell.", valueName: "m"))
        var radius = 250.0
        @Option(
            parsing: .unconditional,
            help: ArgumentHelp(
                "k: how much each µg/m³ adds to the price of a metre (0 is the shortest path; at 0.02 a metre at "
                    + "50 µg/m³ costs two clean ones).", valueName: "k"))
        var weight = 0.02
        @Option(
            name: .customLong("default"), parsing: .unconditional,
            help: ArgumentHelp("µg/m³ for cells with no reading within the radius.", valueName: "µg/m³"))
        var defaultValue = 15.0
        @Option(help: "text, geojson or gpx.") var format = Format.text
        @Option(help: ArgumentHelp("Only these sensors' readings.", valueName: "name,name")) var sensors: String?

        func validate() throws {
            for (option, text) in [("--from", from), ("--to", to)] {
                if case .failure(let problem) = RouteRequest.point(text) {
                    throw ValidationError("\(option): \(problem)")
                }
            }
            guard DurationText.parse(since) != nil else {
                throw ValidationError("--since is a duration, like 7d or 30d")
            }
            if let sensors, names(sensors).isEmpty { throw ValidationError("--sensors names at least one sensor") }
        }

        func run() async throws {
            var request = try RouteRequest(start: RouteRequest.point(from).get(), end: RouteRequest.point(to).get())
            request.margin = margin
            request.cellSize = cell
            request.searchRadius = radius
            request.pollutionWeight = weight
            request.defaultValue = defaultValue
            try withRouteErrors { () throws(RouteError) in try request.validate() }
            let network = try roads.map(readRoads)
            let (configuration, directory) = try await state.resolve()
            let store = StateOptions.registry(configuration: configuration, state: directory)
            var sensorNames: [String]?
            if let sensors {
                let document = try await withStoreErrors { () async throws(StoreError) in try await store.read() }
                sensorNames = try names(sensors).map { name in
                    guard let sensor = document.sensor(named: name) else {
                        throw Failure.report(RegistryError.unknownSensor(name, suggestion: nil))
                    }
                    return sensor.name
                }
            }
            let history = try StateOptions.history(configuration: configuration, state: directory)
            let duration = DurationText.parse(since) ?? .seconds(30 * 86_400)
            let start = Timestamp(
                millisecondsSince1970: Timestamp.now.millisecondsSince1970 - Int64(duration.seconds * 1000))
            let found = try await withHistoryErrors { () async throws(HistoryError) in
                try await history.pollutionReadings(
                    in: request.area.boundingBox, since: start, sensors: sensorNames, limit: History.maximumAreaReadings
                )
            }
            let plan = try withRouteErrors { () throws(RouteError) in
                try request.plan(readings: found.readings, roads: network)
            }
            if found.isCapped && format != .text {
                Failure.printError(RouteText.capped(found))
            }
            switch format {
            case .text: print(RouteText.report(plan, found: found, since: since, searchRadius: radius), terminator: "")
            case .geojson: print(plan.geoJSON())
            case .gpx: print(plan.route.gpx(), terminator: "")
            }
        }

        private func names(_ list: String) -> [String] {
            list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }

        private func readRoads(_ path: String) throws -> RoadNetwork {
            let data: Data
            do {
                data = try Data(contentsOf: URL(fileURLWithPath: path))
            } catch {
                Failure.printError("can't read the road file \(path): \(error.localizedDescription)")
                throw ExitCode(Failure.nothingHeard)
            }
            return try withRouteErrors { () throws(RouteError) in try RoadNetwork(geoJSON: data) }
        }
    }
}

/// Runs `body`, turning a route's refusal into its message and hubctl's exit status.
func withRouteErrors<T>(_ body: () throws(RouteError) -> T) throws -> T {
    do {
        return try body()
    } catch {
        Failure.printError(error.description)
        switch error.code {
        case .noReadings: throw ExitCode(Failure.nothingHeard)
        case .unreachable, .invalidRoads: throw ExitCode(Failure.damagedFile)
        default: throw ExitCode(Failure.invalidInput)
        }
    }
}

/// What `hubctl route` prints for a person.
enum RouteText {
    static func report(_ plan: RoutePlan, found: History.AreaReadings, since: String, searchRadius: Double) -> String {
        let route = plan.route
        func line(_ length: Double, _ exposure: Double) -> String {
            let mean = length > 0 ? exposure / length : 0
            return "\(grouped(length)) m, exposure \(grouped(exposure)) µg/m³·m (mean PM2.5 "
                + String(format: "%.1f", mean) + " µg/m³)"
        }
        var lines = Output.aligned([
            ("Least-polluted route", line(route.length, route.exposure)),
            ("Shortest path", line(route.shortestLength, route.shortestExposure)),
            ("The detour", plan.detour),
        ])
        let kind = plan.alongRoads ? "along the road file's roads" : "across the grid"
        lines.append(
            "Planned \(kind) on \(grouped(plan.readings)) PM2.5 readings from the last \(since) within "
                + "\(grouped(plan.area.radius)) m of \(plan.area.centre).")
        if found.isCapped { lines.append(capped(found) + ".") }
        let share = plan.cells > 0 ? Double(route.defaultedCells) / Double(plan.cells) * 100 : 0
        lines.append(
            "Cells with no data count at \(ParticulateReading.trim(route.defaultValue)) µg/m³: "
                + "\(grouped(route.defaultedCells)) of \(grouped(plan.cells)) cells (\(Int(share.rounded())) %) "
                + "had no reading within \(ParticulateReading.trim(searchRadius)) m.")
        lines.append("The track: --format geojson or --format gpx (\(route.points.count) points).")
        return lines.map { $0 + "\n" }.joined()
    }

    static func capped(_ found: History.AreaReadings) -> String {
        "the newest \(grouped(found.readings.count)) of \(grouped(found.matched)) readings in the area were used"
    }

    /// 12,345: whole numbers with a comma every three digits.
    static func grouped(_ value: Double) -> String { grouped(Int(value.rounded())) }

    static func grouped(_ value: Int) -> String {
        let digits = String(value.magnitude)
        var text = ""
        for (index, digit) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { text.append(",") }
            text.append(digit)
        }
        return (value < 0 ? "-" : "") + text
    }
}
