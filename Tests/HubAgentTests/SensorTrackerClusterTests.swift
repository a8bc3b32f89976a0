import HubAgent
import HubCore
import Testing

/// Two agents' trackers taking turns at one sensor's messages, as a shared subscription hands them out: each catches
/// up with the other's record first, so transitions and event ids carry on as one tracker's would.
@Suite struct SensorTrackerClusterTests {
    let start = ContinuousClock.now
    let time = Timestamp(millisecondsSince1970: 1_795_341_780_000)

    func ingest(_ tracker: inout SensorTracker, _ payload: String) -> SensorTracker.Outcome {
        tracker.ingest(topic: "door", payload: Array(payload.utf8), retained: false, time: time, now: start)
    }

    @Test func anAgentCatchesUpBeforeItsTurn() throws {
        var store = DefaultsDocument()
        try store.addSensor(named: "door", at: time)
        var first = SensorTracker(defaultSilenceTimeout: nil, maximumStatusLength: 64)
        var second = first
        _ = first.follow(store, now: start)
        _ = second.follow(store, now: start)
        // The first agent gets "open": an event, recorded in the shared store.
        guard case .event(let opened) = ingest(&first, "open") else {
            Issue.record("no event for open")
            return
        }
        #expect(opened.oldStatus == "Waiting" && opened.newStatus == "open")
        let sequence = try #require(first.takeRecords(events: [opened]).first?.sequence)
        store.recordStatus("open", lastUpdated: time, onTopic: "door", sequence: sequence)
        // Without catching up, the second agent would see Waiting → closed, under the same event id.
        var stale = second
        guard case .event(let wrong) = ingest(&stale, "closed") else { return }
        #expect(wrong.oldStatus == "Waiting" && wrong.id == opened.id)
        // Caught up, it carries on from open, with the next id; a record no newer changes nothing.
        let door = try #require(store.sensor(named: "door"))
        let caughtUp = second.catchUp(with: door, now: start, time: time)
        let again = second.catchUp(with: door, now: start, time: time)
        #expect(caughtUp == [] && again == nil)
        guard case .event(let closed) = ingest(&second, "closed") else {
            Issue.record("no event for closed")
            return
        }
        #expect(closed.oldStatus == "open" && closed.newStatus == "closed" && closed.id != opened.id)
        // The same status again, as a redelivered message would be: no event.
        guard case .unchanged = ingest(&second, "closed") else {
            Issue.record("a repeated status made an event")
            return
        }
    }

    @Test func theRowWinsOverAStepThatWasNotCommitted() throws {
        var store = DefaultsDocument()
        try store.addSensor(named: "door", at: time)
        var tracker = SensorTracker(defaultSilenceTimeout: nil, maximumStatusLength: 64)
        _ = tracker.follow(store, now: start)
        // A step applied "open" but its transaction failed: the row still says Waiting.
        guard case .event(let lost) = ingest(&tracker, "open") else {
            Issue.record("no event for open")
            return
        }
        _ = tracker.takeRecords(events: [lost])
        let door = try #require(store.sensor(named: "door"))
        let rolledBack = tracker.catchUp(with: door, now: start, time: time)
        #expect(rolledBack != nil)
        // Tried again, the same message makes the same transition under the same id.
        guard case .event(let again) = ingest(&tracker, "open") else {
            Issue.record("the retried message made no event")
            return
        }
        #expect(again.id == lost.id && again.oldStatus == lost.oldStatus)
    }

    @Test func aSensorAnotherAgentHeardIsNotSilentHere() throws {
        var store = DefaultsDocument()
        try store.addSensor(named: "door", at: time)
        store.recordStatus("closed", lastUpdated: time, onTopic: "door", sequence: 1)
        var tracker = SensorTracker(defaultSilenceTimeout: .seconds(60), maximumStatusLength: 64)
        _ = tracker.follow(store, now: start)
        // 61 s on, the deadline armed at start has passed: a candidate.
        let later = start + .seconds(61)
        let laterTime = Timestamp(millisecondsSince1970: time.millisecondsSince1970 + 61_000)
        let (due, topics) = tracker.takeSilenceCandidates(now: later)
        #expect(due == ["door"] && topics == ["door"])
        // Another agent took a message 10 s ago: caught up, the sensor has 50 s left.
        store.recordStatus(
            "closed", lastUpdated: Timestamp(millisecondsSince1970: laterTime.millisecondsSince1970 - 10_000),
            onTopic: "door", sequence: 1)
        tracker.catchUp(with: try #require(store.sensor(named: "door")), now: later, time: laterTime)
        #expect(tracker.silence(topics, due: due, now: later, time: laterTime).isEmpty)
        let early = tracker.takeSilenceCandidates(now: later + .seconds(49))
        #expect(early.due.isEmpty)
        // Nobody hears from it after that: offline once, at the deadline the row gave it.
        let (dueAgain, topicsAgain) = tracker.takeSilenceCandidates(now: later + .seconds(51))
        #expect(dueAgain == ["door"])
        let events = tracker.silence(topicsAgain, due: dueAgain, now: later + .seconds(51), time: laterTime)
        let id = try #require(store.sensor(named: "door")).id
        #expect(events.map(\.kind) == [.silent] && events.first?.id == SensorEvent.id(sensor: id, sequence: 2))
    }
}
