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
        let caughtUp = second.catchUp(with: door)
        let again = second.catchUp(with: door)
        #expect(caughtUp && !again)
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
}
