import HubAgent
import HubCore
import Testing

/// A numeric sensor with bands in the tracker: its status is the band, each value a reading; a new band is one
/// `changed` event, the same band a reading only, a retained replay nothing.
@Suite struct SensorTrackerBandTests {
    let start = ContinuousClock.now
    let time = Timestamp(millisecondsSince1970: 1_795_341_780_000)
    static let topic = "sensorhub/uv/garden"

    func tracker() throws -> SensorTracker {
        let uv = SensorTrackerDeviceTests.sensor(
            7, "garden uv", Self.topic,
            #""kind": "numeric", "value": "uvi", "unit": "UVI", "decimals": 1, "bands": "\#(ValueBands.whoUV)""#)
        var tracker = SensorTracker(defaultSilenceTimeout: nil, maximumStatusLength: 32)
        _ = tracker.follow(try SensorTrackerDeviceTests.registry([uv]), now: start)
        return tracker
    }

    func ingest(_ tracker: inout SensorTracker, _ uvi: Double, retained: Bool = false) -> SensorTracker.Outcome {
        tracker.ingest(
            topic: Self.topic, payload: Array(#"{"uvi": \#(uvi), "max_today": 7.2}"#.utf8), retained: retained,
            time: time, now: start)
    }

    @Test func aNewBandIsOneEventTheSameBandAReadingOnly() throws {
        var tracker = try tracker()
        guard case .reading(.numeric(let value, let unit, _, _), let sensor, let first) = ingest(&tracker, 2.1) else {
            Issue.record("expected a reading")
            return
        }
        #expect(value == 2.1 && unit == "UVI" && sensor == "garden uv")
        #expect(first.map(\.kind) == [.changed])
        #expect(first.first?.oldStatus == "Waiting" && first.first?.newStatus == "Low")
        #expect(tracker.status(onTopic: Self.topic)?.status == "Low")

        // The same band: the reading, no event. In the same millisecond as the last, it takes the next one.
        #expect(
            ingest(&tracker, 2.4)
                == .reading(
                    .numeric(2.4, unit: "UVI", time: time.adding(milliseconds: 1)), sensor: "garden uv", events: []))

        guard case .reading(.numeric(_, _, _, _), _, let events) = ingest(&tracker, 6.04) else {
            Issue.record("expected a reading")
            return
        }
        #expect(events.count == 1)
        let changed = try #require(events.first)
        #expect(changed.kind == .changed && changed.oldStatus == "Low" && changed.newStatus == "High")
        #expect(changed.value == "6.0 UVI")
        #expect(tracker.status(onTopic: Self.topic)?.status == "High")
    }

    @Test func aRetainedReplayIsNothing() throws {
        var tracker = try tracker()
        _ = ingest(&tracker, 3.3)
        #expect(ingest(&tracker, 3.3, retained: true) == .unchanged)
        // A retained value that differs, in the same band, is still a reading.
        #expect(
            ingest(&tracker, 3.4, retained: true)
                == .reading(
                    .numeric(3.4, unit: "UVI", time: time.adding(milliseconds: 1)), sensor: "garden uv", events: []))
    }
}
