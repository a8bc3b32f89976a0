import Foundation

/// A least-polluted route as `hubctl route` and `GET /api/v1/route` ask for it: the two ends and the settings, checked
/// the same way for both, and planned from the readings the history has in `area`.
public struct RouteRequest: Sendable {
    public var start: GeoPoint
    public var end: GeoPoint
    /// Metres added to the seed's circle (half the start–end distance around their midpoint).
    public var margin: Double = RouteRequest.defaultMargin
    /// Metres along a grid cell's side.
    public var cellSize: Double = 25
    /// Metres within which a reading counts for a cell.
    public var searchRadius: Double = 250
    /// k per µg/m³ in length × (1 + k × PM2.5).
    public var pollutionWeight: Double = 0.02
    /// µg/m³ for cells with no reading within the search radius (the WHO 2021 24-hour guideline).
    public var defaultValue: Double = 15
    /// The most grid cells the request may build.
    public var maximumCells = PollutionField.maximumCells

    /// Room for a detour around a hotspot halfway: without one a route can't bend out of the seed's circle.
    public static let defaultMargin = 200.0

    public init(start: GeoPoint, end: GeoPoint) {
        self.start = start
        self.end = end
    }

    /// The circle whose readings the route is planned on.
    public var area: RouteArea { RouteArea(start: start, end: end, margin: margin) }

    /// What can be refused before the history is read: settings that can't work, and a start and an end in one
    /// grid cell.
    public func validate() throws(RouteError) {
        for (value, what, minimum) in [
            (margin, "the margin", 0.0), (pollutionWeight, "the pollution weight", 0),
            (defaultValue, "the default PM2.5", 0),
        ] where !(value.isFinite && value >= minimum) {
            throw .invalidSettings("\(what) must be a number of at least \(Int(minimum)), not \(value)")
        }
        for (value, what) in [(cellSize, "the cell size"), (searchRadius, "the search radius")]
        where !(value.isFinite && value > 0) {
            throw .invalidSettings("\(what) must be a number of metres above 0, not \(value)")
        }
        let apart = Geodesy.distance(start, end)
        if apart < cellSize {
            throw .samePlace(start, end, "\(Self.metres(apart)) apart, within one \(Self.metres(cellSize)) cell")
        }
    }

    /// Plans the route over the readings (those outside the circle are left out), on the grid or along `roads`.
    public func plan(readings: [PollutionReading], roads: RoadNetwork? = nil) throws(RouteError) -> RoutePlan {
        try validate()
        let area = area
        let selected = area.select(readings)
        let field = try PollutionField(
            readings: selected, box: area.boundingBox, cellSize: cellSize, searchRadius: searchRadius,
            defaultValue: defaultValue, maximumCells: maximumCells)
        let planner = RoutePlanner(pollutionWeight: pollutionWeight)
        let route: Route
        if let roads {
            route = try planner.route(from: start, to: end, along: roads, field: field)
            if route.points.count < 2 {
                throw .samePlace(start, end, "nearest to the same road node")
            }
        } else {
            // Closer than a cell's side was refused above; further apart, both can still be in one cell (its
            // diagonal is 1.4 sides), where the planner's route is 0 m.
            if let first = field.cell(containing: start), let last = field.cell(containing: end), first == last {
                let apart = Geodesy.distance(start, end)
                throw .samePlace(start, end, "\(Self.metres(apart)) apart, in one \(Self.metres(cellSize)) cell")
            }
            route = try planner.route(from: start, to: end, over: field)
        }
        return RoutePlan(
            route: route, readings: field.readingCount, cells: field.cellCount, area: area, alongRoads: roads != nil)
    }

    /// Reads `LAT,LON` in decimal degrees, north and east positive (`52.0907,5.1214`); spaces around either number
    /// are allowed. The error says what is wrong, for `--from` or `from=`.
    public static func point(_ text: String) -> Result<GeoPoint, PointProblem> {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
        guard parts.count == 2,
            let latitude = Double(parts[0].trimmingCharacters(in: .whitespaces)),
            let longitude = Double(parts[1].trimmingCharacters(in: .whitespaces))
        else { return .failure(PointProblem("'\(text)' is not LAT,LON in degrees (like 52.0907,5.1214)")) }
        guard latitude.isFinite, (-90...90).contains(latitude) else {
            return .failure(PointProblem("the latitude in '\(text)' must be from -90 to 90 degrees (north positive)"))
        }
        guard longitude.isFinite, (-180...180).contains(longitude) else {
            return .failure(
                PointProblem("the longitude in '\(text)' must be from -180 to 180 degrees (east positive)"))
        }
        return .success(GeoPoint(latitude: latitude, longitude: longitude)!)
    }

    /// Why a `LAT,LON` was refused.
    public struct PointProblem: Error, Sendable, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }

    static func metres(_ value: Double) -> String {
        // Rounded first, so that 9.99 m is "10 m" and not "10.0 m".
        (value * 10).rounded() < 100 ? String(format: "%.1f m", value) : "\(Int(value.rounded())) m"
    }
}

/// A planned route with what it was planned on.
public struct RoutePlan: Sendable {
    public var route: Route
    /// Readings inside the circle that went into the pollution grid.
    public var readings: Int
    /// Cells of the grid; `route.defaultedCells` of them had no reading within the search radius.
    public var cells: Int
    public var area: RouteArea
    public var alongRoads: Bool

    /// The route as a GeoJSON Feature, with the number of readings among its properties.
    public func geoJSON(name: String? = nil) -> String { route.geoJSON(name: name, readings: readings) }

    /// What the detour buys beside the shortest path: `+180 m (+6 %), −41 % exposure`.
    public var detour: String {
        let extra = route.length - route.shortestLength
        var text = (extra >= 0 ? "+" : "−") + RouteRequest.metres(abs(extra))
        if route.shortestLength > 0 {
            text += " (\(Self.signedPercent(extra / route.shortestLength)))"
        }
        if route.shortestExposure > 0 {
            text += ", \(Self.signedPercent(route.exposure / route.shortestExposure - 1)) exposure"
        }
        return text
    }

    /// `+6 %`, `−41 %`, `0 %`.
    static func signedPercent(_ fraction: Double) -> String {
        let percent = Int((fraction * 100).rounded())
        return percent == 0 ? "0 %" : (percent > 0 ? "+\(percent) %" : "−\(-percent) %")
    }
}
