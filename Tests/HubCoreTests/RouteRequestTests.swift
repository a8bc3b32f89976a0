import Foundation
import HubCore
import Testing

/// What `hubctl route` and `/api/v1/route` share: reading `LAT,LON`, checking the settings, planning over the
/// readings inside the circle, and saying what the detour buys.
@Suite struct RouteRequestTests {
    private let city = LocalProjection(origin: GeoPoint(latitude: 52.09, longitude: 5.12)!)

    private func at(_ x: Double, _ y: Double) -> GeoPoint { city.unproject(x: x, y: y)! }

    @Test func pointsAreLatitudeCommaLongitude() throws {
        let point = try RouteRequest.point(" 52.0907 , 5.1214").get()
        #expect(point.latitude == 52.0907 && point.longitude == 5.1214)
        #expect(try RouteRequest.point("-33.87,151.21").get().longitude == 151.21)
        for (text, message) in [
            ("52.09", "is not LAT,LON"), ("52.09,5.12,3", "is not LAT,LON"), ("a,b", "is not LAT,LON"),
            ("", "is not LAT,LON"), ("91,5", "latitude"), ("52,-181", "longitude"), ("nan,5", "latitude"),
        ] {
            guard case .failure(let problem) = RouteRequest.point(text) else {
                Issue.record("'\(text)' was taken")
                continue
            }
            #expect(problem.description.contains(message), "\(text): \(problem)")
        }
    }

    @Test func settingsAndTheSamePlaceAreRefusedBeforeAnyReading() {
        var request = RouteRequest(start: at(-800, 0), end: at(800, 0))
        #expect(throws: Never.self) { try request.validate() }
        request.cellSize = .infinity
        #expect(throws: RouteError.self) { try request.validate() }
        request = RouteRequest(start: at(-800, 0), end: at(800, 0))
        request.margin = -1
        #expect((try? request.validate()) == nil)
        let near = RouteRequest(start: at(0, 0), end: at(10, 0))
        let error = #expect(throws: RouteError.self) { try near.validate() }
        #expect(error?.code == .samePlace && error?.description.contains("10 m apart, within one 25 m cell") == true)
    }

    /// Two points further apart than a cell's side can still fall in one cell (28 m across its diagonal): that is
    /// refused as the same place too, not planned as a 0 m route.
    @Test func twoPointsInOneCellOfTheGridAreTheSamePlace() throws {
        let readings = [PollutionReading(point: at(0, 0), pm25: 10)]
        // Where the grid's lines fall depends on the circle around both points (its margin): look for the margin
        // that puts a pair 28 m apart in one cell of the request's own grid.
        let pair = (190...215).lazy.map { margin in
            var request = RouteRequest(start: self.at(0, 0), end: self.at(20, 20))
            request.margin = Double(margin)
            return request
        }.first { request in
            guard let field = try? PollutionField(readings: readings, box: request.area.boundingBox),
                let a = field.cell(containing: request.start), let b = field.cell(containing: request.end)
            else { return false }
            return a == b
        }
        let request = try #require(pair)
        #expect(Geodesy.distance(request.start, request.end) > request.cellSize)
        #expect(throws: Never.self) { try request.validate() }
        let error = #expect(throws: RouteError.self) { try request.plan(readings: readings) }
        #expect(error?.code == .samePlace && error?.description.contains("28 m apart, in one 25 m cell") == true)
    }

    @Test func thePlanKeepsToTheCircleAndSaysWhatTheDetourBuys() throws {
        var readings: [PollutionReading] = []
        for i in -20...20 {
            for j in -20...20 {
                let (x, y) = (Double(i) * 50, Double(j) * 50)
                readings.append(PollutionReading(point: at(x, y), pm25: (x * x + y * y).squareRoot() <= 200 ? 150 : 5))
            }
        }
        // Far outside the circle: must not count.
        readings.append(PollutionReading(point: at(0, 5000), pm25: 999))
        var request = RouteRequest(start: at(-800, 0), end: at(800, 0))
        request.pollutionWeight = 0.05
        let plan = try request.plan(readings: readings)
        #expect(plan.readings == readings.filter { plan.area.contains($0.point) }.count)
        #expect(plan.readings < readings.count && !plan.alongRoads)
        #expect(plan.route.length > plan.route.shortestLength && plan.route.exposure < plan.route.shortestExposure)
        #expect(plan.detour.firstMatch(of: /^\+\d+ m \(\+\d+ %\), −\d+ % exposure$/) != nil, "\(plan.detour)")
        let json = try #require(JSONSerialization.jsonObject(with: Data(plan.geoJSON().utf8)) as? [String: Any])
        #expect((json["properties"] as? [String: Any])?["readings"] as? Int == plan.readings)
        request.maximumCells = 1000
        let tooMany = #expect(throws: RouteError.self) { try request.plan(readings: readings) }
        #expect(tooMany?.code == .invalidSettings && tooMany?.description.contains("1000 allowed") == true)
        #expect(throws: RouteError.self) { try request.plan(readings: []) }
    }
}
