import Dispatch
import Foundation
import HubCore
import HubHistory
import HubSupport
import Hummingbird
import NIOCore

/// `GET /api/v1/route`: the least-polluted route over the history's readings, as `hubctl route` plans it.
extension HubAPI {
    /// The most grid cells one request may build. `PollutionField.maximumCells` (16 M) is what a command run by
    /// hand may take; a request costs about 70 bytes a cell (the grid, and A*'s arrays for two searches), so 1 M
    /// cells, 70 MB, keeps a hub on a Raspberry Pi standing. A 25 m grid of 1 M cells is 25 km across.
    static let maximumRouteCells = 1_000_000
    /// The widest search radius a request may ask for, in metres: each cell weighs every reading within it, so the
    /// radius, not only the cell count, sets the work (1 km over the 200,000 readings an area may give is a few
    /// billion distances at most).
    static let maximumSearchRadius = 1000.0

    /// The query's parameters, checked: a bad one is a 400 that names it.
    func routeRequest(_ request: Request) async throws -> (
        RouteRequest, since: Timestamp, sensors: [String]?, gpx: Bool, shortest: Bool
    ) {
        let query = request.uri.queryParameters
        func point(_ key: String) throws -> GeoPoint {
            guard let text = query.get(key) else {
                throw HTTPError(.badRequest, message: "\(key) is required: \(key)=LAT,LON (like 52.0907,5.1214)")
            }
            switch RouteRequest.point(text) {
            case .success(let point): return point
            case .failure(let problem): throw HTTPError(.badRequest, message: "\(key): \(problem)")
            }
        }
        func number(_ key: String, _ what: String) throws -> Double? {
            guard let text = query.get(key) else { return nil }
            guard let value = Double(text), value.isFinite else {
                throw HTTPError(.badRequest, message: "\(key) is \(what), not '\(text)'")
            }
            return value
        }
        var route = RouteRequest(start: try point("from"), end: try point("to"))
        route.margin = try number("margin", "a number of metres") ?? route.margin
        route.cellSize = try number("cell", "a number of metres") ?? route.cellSize
        route.searchRadius = try number("radius", "a number of metres") ?? route.searchRadius
        route.pollutionWeight = try number("weight", "a number (k per µg/m³)") ?? route.pollutionWeight
        route.defaultValue = try number("default", "a number of µg/m³") ?? route.defaultValue
        route.maximumCells = Self.maximumRouteCells
        guard route.searchRadius <= Self.maximumSearchRadius else {
            throw HTTPError(
                .badRequest,
                message: "radius is at most \(Int(Self.maximumSearchRadius)) m here (hubctl route takes more)")
        }
        let format = query.get("format") ?? "geojson"
        guard ["geojson", "gpx"].contains(format) else {
            throw HTTPError(.badRequest, message: "format is geojson or gpx, not '\(format)'")
        }
        var sensors: [String]?
        if let list = query.get("sensors") {
            let document = try await readStore()
            sensors = try list.split(separator: ",").map { name in
                let name = name.trimmingCharacters(in: .whitespaces)
                guard let sensor = document.sensor(named: name) else {
                    throw HTTPError(.notFound, message: "no sensor named '\(name)'")
                }
                return sensor.name
            }
            guard sensors?.isEmpty == false else {
                throw HTTPError(.badRequest, message: "sensors names at least one sensor")
            }
        }
        do {
            try route.validate()
        } catch {
            throw Self.httpError(error)
        }
        let since = try sinceParameter(request, default: .seconds(30 * 86_400))
        let shortest = query.get("shortest") ?? "false"
        guard ["true", "false"].contains(shortest) else {
            throw HTTPError(.badRequest, message: "shortest is true or false, not '\(shortest)'")
        }
        return (route, since, sensors, format == "gpx", shortest == "true")
    }

    /// `GET /api/v1/route`: the plan as GeoJSON (a Feature, or with `shortest=true` a FeatureCollection of the
    /// route and the shortest path) or GPX.
    func route(_ request: Request) async throws -> Response {
        let (route, since, sensors, gpx, shortest) = try await routeRequest(request)
        let (plan, _) = try await plan(route, since: since, sensors: sensors)
        if gpx {
            return Response(
                status: .ok, headers: [.contentType: "application/gpx+xml; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(string: plan.route.gpx(shortest: shortest))))
        }
        let body = shortest ? plan.route.geoJSONWithShortest(readings: plan.readings) : plan.geoJSON()
        return Response(
            status: .ok, headers: [.contentType: "application/geo+json; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: body)))
    }

    /// Plans on a thread of Dispatch's: reading the area's readings from SQLite and A* over a grid take from
    /// milliseconds to seconds, and Swift's cooperative pool has only as many threads as cores. At most
    /// `maximumRoutesPlanning` at once; one more is a 503. The API's and the route page's one way to plan; with the
    /// readings it was planned on, for the page's map.
    func plan(_ route: RouteRequest, since: Timestamp, sensors: [String]?) async throws -> (
        RoutePlan, readings: [PollutionReading]
    ) {
        let admitted = routesPlanning.withLock { planning in
            guard planning < maximumRoutesPlanning else { return false }
            planning += 1
            return true
        }
        guard admitted else {
            throw HTTPError(
                .serviceUnavailable,
                message: "\(maximumRoutesPlanning) routes are being planned already: try again in a moment")
        }
        // Held until the work is done, even when the client has gone: the thread is busy until then.
        defer { routesPlanning.withLock { $0 -= 1 } }
        let roads = self.roads
        let found = try await historyCall { history throws(HistoryError) in
            try await history.pollutionReadings(
                in: route.area.boundingBox, since: since, sensors: sensors, limit: History.maximumAreaReadings)
        }
        let planned: Result<RoutePlan, any Error> = await DispatchQueue.global().run {
            Result {
                do throws(RouteError) {
                    return try route.plan(readings: found.readings, roads: roads)
                } catch {
                    throw Self.httpError(error)
                }
            }
        }
        return (try planned.get(), found.readings)
    }

    /// A route's refusal as the status that fits it: the request's fault (400), nothing to plan on (404), or roads
    /// that do not join the two ends (422).
    static func httpError(_ error: RouteError) -> HTTPError {
        switch error.code {
        case .noReadings: HTTPError(.notFound, message: error.description)
        case .unreachable: HTTPError(.unprocessableContent, message: error.description)
        case .invalidRoads: HTTPError(.internalServerError, message: error.description)
        default: HTTPError(.badRequest, message: error.description)
        }
    }
}
