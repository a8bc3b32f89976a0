import HubCore
import Testing

/// A session's statistics as pure arithmetic over its points: distance along the fixes, spreads, and time above the
/// WHO guideline with a pause in the recording not counted as exposure.
@Suite struct SessionStatisticsTests {
    func point(_ seconds: Int64, _ latitude: Double?, pm25: Double?) -> TrackPoint {
        TrackPoint(
            time: Timestamp(millisecondsSince1970: 1_795_341_780_000 + seconds * 1000),
            position: latitude.flatMap { GeoPoint(latitude: $0, longitude: 0) }.map { GeoFix(point: $0) }, pm25: pm25)
    }

    @Test func distanceSpreadAndTimeAboveTheGuideline() {
        let statistics = SessionStatistics([
            point(0, 0, pm25: 20),  // above for 60 s
            point(60, 0.001, pm25: 10),
            point(120, nil, pm25: 30),  // above, then a pause of an hour: counted for 5 min only
            point(3720, 0.002, pm25: 5),
        ])
        #expect(statistics.count == 4 && statistics.positioned == 3)
        #expect(statistics.duration == .seconds(3720))
        // Two steps of 0.001° along the equator: 111.195 m each on the mean Earth.
        #expect(abs(statistics.distance - 222.39) < 0.01)
        #expect(statistics.pm25 == Spread(min: 5, mean: 16.25, max: 30))
        #expect(statistics.aboveGuideline == .seconds(60 + 300))
        #expect(statistics.guideline == 15 && statistics.value == nil)
    }

    @Test func anEmptySessionIsZeroes() {
        let statistics = SessionStatistics([])
        #expect(statistics.count == 0 && statistics.distance == 0 && statistics.duration == .zero)
        #expect(statistics.pm25 == nil && statistics.aboveGuideline == .zero)
    }
}
