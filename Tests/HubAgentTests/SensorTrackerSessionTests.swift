import HubAgent
import HubCore
import Testing

/// Mobile sensors' recording sessions in the tracker: readings with a position, sessions started by the first
/// reading or by a control message, ended by a gap, a stop or a start, their ids the ids of their start events, and
/// the open session kept in the journal's records so that a restart goes on with it.
@Suite struct SensorTrackerSessionTests {
    let start = ContinuousClock.now
    let base = Timestamp(millisecondsSince1970: 1_795_341_780_000)
    static let walker = "sensorhub/walker"
    static let noise = "sensorhub/noise-walk"
    static let fixed = "sensorhub/balcony"

    func tracker(gap: Duration? = .seconds(60)) throws -> SensorTracker {
        let sensors = [
            SensorTrackerDeviceTests.sensor(1, "walker", Self.walker, #""kind": "particulate""#),
            SensorTrackerDeviceTests.sensor(
                2, "noise walk", Self.noise, #""kind": "numeric", "value": "db", "unit": "dB""#),
            SensorTrackerDeviceTests.sensor(3, "balcony", Self.fixed, #""kind": "particulate""#),
        ]
        var tracker = SensorTracker(defaultSilenceTimeout: nil, maximumStatusLength: 32)
        tracker.setSessionRules([SessionRule(sensors: ["walker", "noise*"], gap: gap)])
        _ = tracker.follow(try SensorTrackerDeviceTests.registry(sensors), now: start)
        return tracker
    }

    func at(_ seconds: Int) -> Timestamp {
        Timestamp(millisecondsSince1970: base.millisecondsSince1970 + Int64(seconds) * 1000)
    }

    func send(_ tracker: inout SensorTracker, _ topic: String, _ payload: String, at seconds: Int)
        -> SensorTracker.Outcome
    {
        tracker.ingest(topic: topic, payload: Array(payload.utf8), retained: false, time: at(seconds), now: start)
    }

    func sessionEvents(_ outcome: SensorTracker.Outcome) -> [SensorEvent] {
        outcome.events.filter { $0.kind == .session }
    }

    @Test func aReadingStartsASessionAndAGapEndsIt() throws {
        var tracker = try tracker()
        let first = send(&tracker, Self.walker, #"{"pm25": 12, "lat": 1.30, "lon": "103.80"}"#, at: 0)
        guard case .reading(.particulate(let reading), _, _) = first else {
            Issue.record("expected a reading, got \(first)")
            return
        }
        #expect(reading.position?.point == GeoPoint(latitude: 1.30, longitude: 103.80))
        let started = try #require(sessionEvents(first).first)
        #expect(started.oldStatus == "idle" && started.newStatus == "recording")
        // The sensor's second event: its first is the new level (Waiting → Good).
        #expect(first.events.map(\.kind) == [.changed, .session])
        #expect(started.value == started.id && started.id == "000000000001-2")
        #expect(tracker.recorded(.particulate(reading), topic: Self.walker).session == started.id)

        // 50 s later: the same session, no event.
        let second = send(&tracker, Self.walker, #"{"pm25": 14, "latitude": 1.301, "longitude": 103.801}"#, at: 50)
        #expect(sessionEvents(second).isEmpty)
        #expect(tracker.recorded(second.reading!, topic: Self.walker).session == started.id)

        // 61 s after that: the old session ends as of its last reading, a new one starts now.
        let third = send(&tracker, Self.walker, #"{"pm25": 9, "lat": 1.31, "lon": 103.81}"#, at: 111)
        let events = sessionEvents(third)
        #expect(events.map(\.newStatus) == ["idle", "recording"])
        #expect(events[0].value == started.id && events[0].time == at(50))
        #expect(events[1].value == events[1].id && events[1].id != started.id)
        // The open session travels in the journal's record (to the registry).
        let records = tracker.takeRecords(events: third.events)
        #expect(records.first { $0.topic == Self.walker }?.session?.id == events[1].id)
    }

    /// A walk uploaded in one burst after it (readings stamped over 11½ minutes, arriving within a second, an hour
    /// later): one session with the readings' times, ended by silence after the upload, not by the hour's gap.
    @Test func aWalkUploadedInOneBurstKeepsItsReadingsTimes() throws {
        var tracker = try tracker(gap: .seconds(600))
        let stamps = (0...23).map { at($0 * 30) }  // 0 … 690 s: 11½ min
        var events: [SensorEvent] = []
        for (index, stamp) in stamps.enumerated() {
            let payload = #"{"pm25": 12, "lat": 1.3, "lon": 103.8, "time": "\#(stamp.iso8601)"}"#
            events += sessionEvents(send(&tracker, Self.walker, payload, at: 3600 + index / 12))
            events += tracker.checkSilence(now: start, time: at(3600 + index / 12))
        }
        #expect(events.count == 1 && events.first?.newStatus == "recording" && events.first?.time == stamps[0])
        // Silent for the gap after the upload (not after the last reading's own time): ended as of that reading.
        #expect(tracker.checkSilence(now: start, time: at(3602 + 590)).isEmpty)
        let ended = tracker.checkSilence(now: start, time: at(3602 + 601))
        #expect(ended.map(\.newStatus) == ["idle"] && ended.first?.time == stamps.last)
        #expect(ended.first?.value == events.first?.id)
    }

    /// A reading stamped later than it arrived (a clock ahead by more than a minute) is the hub's time instead.
    @Test func aReadingFromTheFutureTakesTheHubsTime() throws {
        var tracker = try tracker()
        let ahead = at(3600).iso8601
        let first = send(&tracker, Self.walker, #"{"pm25": 12, "time": "\#(ahead)"}"#, at: 0)
        #expect(sessionEvents(first).first?.time == at(0))
        let ended = tracker.checkSilence(now: start, time: at(61))
        #expect(ended.map(\.newStatus) == ["idle"] && ended.first?.time == at(0))
    }

    @Test func silenceLongerThanTheGapEndsTheSessionWithoutAReading() throws {
        var tracker = try tracker()
        _ = send(&tracker, Self.walker, #"{"pm25": 12, "lat": 1.3, "lon": 103.8}"#, at: 0)
        #expect(tracker.checkSilence(now: start, time: at(59)).isEmpty)
        let ended = tracker.checkSilence(now: start, time: at(61))
        #expect(ended.map(\.kind) == [.session] && ended.first?.newStatus == "idle" && ended.first?.time == at(0))
        #expect(tracker.checkSilence(now: start, time: at(200)).isEmpty)
    }

    @Test func controlMessagesStartAndStopAndAnExplicitSessionOutlastsTheGap() throws {
        var tracker = try tracker(gap: nil)
        // Manual: a reading outside a session is kept without one.
        let loose = send(&tracker, Self.walker, #"{"pm25": 12, "lat": 1.3, "lon": 103.8}"#, at: 0)
        #expect(sessionEvents(loose).isEmpty && tracker.recorded(loose.reading!, topic: Self.walker).session == nil)

        let started = send(&tracker, Self.walker, #"{"session": "start"}"#, at: 10)
        #expect(sessionEvents(started).map(\.newStatus) == ["recording"])
        let id = try #require(started.events.first?.id)
        let late = send(&tracker, Self.walker, #"{"pm25": 30, "lat": 1.3, "lon": 103.8}"#, at: 10_000)
        #expect(sessionEvents(late).isEmpty && tracker.recorded(late.reading!, topic: Self.walker).session == id)
        #expect(tracker.checkSilence(now: start, time: at(99_999)).isEmpty)

        // A start while recording ends the open session first; a control message may carry a reading.
        let restarted = send(
            &tracker, Self.walker, #"{"session": "START", "pm25": 5, "lat": 1.3, "lon": 103.8}"#, at: 10_010)
        #expect(sessionEvents(restarted).map(\.newStatus) == ["idle", "recording"])
        guard case .reading = restarted else {
            Issue.record("the reading beside the control was lost: \(restarted)")
            return
        }
        let stopped = send(&tracker, Self.walker, #"{"session": "stop"}"#, at: 10_020)
        #expect(sessionEvents(stopped).map(\.newStatus) == ["idle"])
        #expect(send(&tracker, Self.walker, #"{"session": "stop"}"#, at: 10_030) == .unchanged)
    }

    @Test func numericMobileSensorsReadTheirPositionFromThePayload() throws {
        var tracker = try tracker()
        let outcome = send(
            &tracker, Self.noise, #"{"db": 61.5, "lat": 51.5, "lon": -0.12, "alt": 20, "accuracy": 4}"#, at: 0)
        guard case .reading(.numeric(61.5, _, _, let position?), _, _) = outcome else {
            Issue.record("expected a positioned reading, got \(outcome)")
            return
        }
        #expect(position.altitude == 20 && position.accuracy == 4 && position.point.longitude == -0.12)
        #expect(sessionEvents(outcome).count == 1)
        #expect(
            send(&tracker, Self.noise, #"{"db": 61.5, "lat": 91, "lon": 0}"#, at: 1) == .rejected(.invalidPosition))
        #expect(
            send(&tracker, Self.noise, #"{"db": 61.5, "lat": 51.5}"#, at: 2) == .rejected(.invalidPosition))
        #expect(
            send(&tracker, Self.walker, #"{"pm25": 1, "lat": "north", "lon": 0}"#, at: 3) == .rejected(.invalidReading))
    }

    @Test func fixedSensorsHaveNoSessionAndControlMessagesAreRefused() throws {
        var tracker = try tracker()
        let reading = send(&tracker, Self.fixed, #"{"pm25": 12, "lat": 1.3, "lon": 103.8}"#, at: 0)
        #expect(sessionEvents(reading).isEmpty && tracker.recorded(reading.reading!, topic: Self.fixed).session == nil)
        #expect(tracker.session(.start, topic: Self.fixed, time: at(1)) == .rejected(.notMobile))
    }

    @Test func aRuleRemovedEndsTheOpenSessionAtTheNextReading() throws {
        var tracker = try tracker()
        let first = send(&tracker, Self.walker, #"{"pm25": 12, "lat": 1.3, "lon": 103.8}"#, at: 0)
        tracker.setSessionRules([])
        let next = send(&tracker, Self.walker, #"{"pm25": 12, "lat": 1.3, "lon": 103.8}"#, at: 5)
        #expect(sessionEvents(next).map(\.value) == [sessionEvents(first).first?.id])
        #expect(tracker.recorded(next.reading!, topic: Self.walker).session == nil)
    }

    @Test func theRegistryKeepsTheOpenSessionAcrossARestart() throws {
        var tracker = try tracker()
        let first = send(&tracker, Self.walker, #"{"pm25": 12, "lat": 1.3, "lon": 103.8}"#, at: 0)
        let id = try #require(sessionEvents(first).first?.id)
        var document = try SensorTrackerDeviceTests.registry([
            SensorTrackerDeviceTests.sensor(1, "walker", Self.walker, #""kind": "particulate""#)
        ])
        for record in tracker.takeRecords(events: first.events) {
            document.recordStatus(
                record.status, lastUpdated: record.lastUpdated, onTopic: record.topic, id: record.sensorID,
                sequence: record.sequence, session: .some(record.session))
        }
        // Written and read back, as hubd's next start reads it.
        let reread = try DefaultsDocument.decode(document.encode())
        #expect(reread.sensors.first?.session?.id == id)
        var restarted = SensorTracker(defaultSilenceTimeout: nil, maximumStatusLength: 32)
        restarted.setSessionRules([SessionRule(sensors: ["walker"], gap: .seconds(60))])
        _ = restarted.follow(reread, now: start)
        let next = send(&restarted, Self.walker, #"{"pm25": 12, "lat": 1.3, "lon": 103.8}"#, at: 30)
        #expect(sessionEvents(next).isEmpty && restarted.recorded(next.reading!, topic: Self.walker).session == id)
        #expect(restarted.checkSilence(now: start, time: at(100)).first?.value == id)
    }

    /// A burst arriving within one millisecond (a mobile sensor uploading what it buffered) is as many readings, a
    /// millisecond apart; a reading stamped with its own time and sent again is a repeat.
    @Test func aBurstWithinAMillisecondIsEveryReading() throws {
        var tracker = try tracker()
        var times: [Timestamp] = []
        for pm25 in [5, 6, 7] {
            let outcome = send(&tracker, Self.fixed, #"{"pm25": \#(pm25), "lat": 1.3, "lon": 103.8}"#, at: 0)
            times += outcome.reading.map { [$0.time] } ?? []
        }
        #expect(times.map(\.millisecondsSince1970) == [0, 1, 2].map { at(0).millisecondsSince1970 + $0 })
        let stamped = #"{"pm25": 9, "time": "2026-11-25T18:00:00Z"}"#
        #expect(send(&tracker, Self.fixed, stamped, at: 10).reading != nil)
        #expect(send(&tracker, Self.fixed, stamped, at: 11) == .unchanged)
    }
}
