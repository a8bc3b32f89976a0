import HubAgent
import HubCore
import Testing

/// The agent's rules for messages, retained replays, availability and silence, on their own.
@Suite struct SensorTrackerTests {
    let start = ContinuousClock.now
    let time = Timestamp(millisecondsSince1970: 1_795_341_780_000)

    func registry() throws -> DefaultsDocument {
        var document = DefaultsDocument()
        try document.addSensor(named: "kitchen", at: time)
        try document.addSensor(named: "garage", at: time)
        return document
    }

    func tracker(silence: Duration? = nil, following document: DefaultsDocument? = nil) throws -> SensorTracker {
        var tracker = SensorTracker(defaultSilenceTimeout: silence, maximumStatusLength: 10)
        _ = tracker.follow(try document ?? registry(), now: start)
        return tracker
    }

    func ingest(_ tracker: inout SensorTracker, _ payload: String, retained: Bool = false, after seconds: Int = 0)
        -> SensorTracker.Outcome
    {
        tracker.ingest(
            topic: "kitchen", payload: Array(payload.utf8), retained: retained, time: time,
            now: start + .seconds(seconds))
    }

    @Test func aNewStatusIsAnEventAndTheSameOneIsNot() throws {
        var tracker = try tracker()
        guard case .event(let event) = ingest(&tracker, "  open\n") else {
            Issue.record("expected an event")
            return
        }
        #expect(event.kind == .changed)
        #expect(event.oldStatus == "Waiting" && event.newStatus == "open" && event.sensor == "kitchen")
        #expect(ingest(&tracker, "open") == .unchanged)
        #expect(tracker.takeRecords(events: []).map(\.status) == ["open"])
    }

    @Test func aRetainedReplayOfTheSameStatusDoesNotTouchTheSensor() throws {
        var tracker = try tracker()
        _ = ingest(&tracker, "open")
        _ = tracker.takeRecords(events: [])
        #expect(ingest(&tracker, "open", retained: true) == .unchanged)
        #expect(tracker.takeRecords(events: []).isEmpty)
        // A retained message with another status is news: it changed while the hub was away.
        guard case .event(let event) = ingest(&tracker, "closed", retained: true) else {
            Issue.record("expected an event")
            return
        }
        #expect(event.newStatus == "closed")
    }

    @Test func badPayloadsAreRejectedWithTheirReason() throws {
        var tracker = try tracker()
        #expect(
            tracker.ingest(topic: "kitchen", payload: [0xC3, 0x28], retained: false, time: time, now: start)
                == .rejected(.invalidUTF8))
        #expect(ingest(&tracker, "   ") == .rejected(.empty))
        #expect(ingest(&tracker, "eleven chars") == .rejected(.tooLong))
        #expect(ingest(&tracker, "ten chars!") != .rejected(.tooLong))
        #expect(ingest(&tracker, "ümlautäöüß") != .rejected(.tooLong))  // ten characters, more bytes
        #expect(
            tracker.ingest(topic: "elsewhere", payload: [0x31], retained: false, time: time, now: start)
                == .rejected(.unknownTopic))
    }

    /// Control characters, and the bidi and invisible formatting characters that reorder or hide what is shown
    /// around them (issue 16), never become a status; a tab still does, as it always has.
    @Test(arguments: ["o\u{1B}[2J", "a\u{7}", "x\u{9B}y", "\u{202E}nepo", "\u{FEFF}open", "a\u{2066}b", "o\u{200B}k"])
    func statusesWithControlOrFormattingCharactersAreRejected(payload: String) throws {
        var tracker = try tracker()
        #expect(ingest(&tracker, payload) == .rejected(.controlCharacters))
        #expect(ingest(&tracker, "a\tb") != .rejected(.controlCharacters))
        #expect(ingest(&tracker, "🏳️‍🌈") != .rejected(.controlCharacters))  // a joiner, in an emoji sequence
    }

    @Test func offlineAndOnlineFromTheFirmware() throws {
        var tracker = try tracker()
        _ = ingest(&tracker, "open")
        guard case .event(let offline) = ingest(&tracker, "OFFLINE") else {
            Issue.record("expected an event")
            return
        }
        #expect(offline.kind == .offline && offline.oldStatus == "open" && offline.newStatus == "offline")
        #expect(ingest(&tracker, "offline") == .unchanged)
        guard case .event(let back) = ingest(&tracker, "online") else {
            Issue.record("expected an event")
            return
        }
        #expect(back.kind == .recovered && back.newStatus == "open")
    }

    @Test func silenceMarksOfflineOnceAndTheNextMessageRecovers() throws {
        var tracker = try tracker(silence: .seconds(60))
        _ = ingest(&tracker, "open", after: 0)
        #expect(tracker.checkSilence(now: start + .seconds(59), time: time).isEmpty)
        _ = ingest(&tracker, "open", after: 30)  // a live message pushes the deadline
        #expect(tracker.checkSilence(now: start + .seconds(61), time: time).isEmpty)
        let silent = tracker.checkSilence(now: start + .seconds(91), time: time)
        #expect(silent.map(\.kind) == [.silent])
        #expect(silent.first?.oldStatus == "open")
        #expect(tracker.checkSilence(now: start + .seconds(500), time: time).isEmpty)
        guard case .event(let back) = ingest(&tracker, "closed", after: 600) else {
            Issue.record("expected an event")
            return
        }
        #expect(back.kind == .recovered && back.oldStatus == "offline" && back.newStatus == "closed")
        // Never reported: nothing to go silent from.
        #expect(tracker.status(onTopic: "garage")?.status == "Waiting")
    }

    @Test func aRetainedReplayDoesNotProveTheSensorAlive() throws {
        var tracker = try tracker(silence: .seconds(60))
        _ = ingest(&tracker, "open", after: 0)
        _ = ingest(&tracker, "open", retained: true, after: 50)
        #expect(tracker.checkSilence(now: start + .seconds(61), time: time).count == 1)
    }

    /// Issue 36: a sensor silent past its timeout, whose device publishes retained, stays silent when the broker
    /// replays its old status (hubd restarted, or reconnected): no `recovered`, no last-updated time, and no second
    /// `silent` one timeout later. A different status, or a live message, is news.
    @Test func aReplayOfTheStatusBeforeASilenceIsNoRecovery() throws {
        var tracker = try tracker(silence: .seconds(60))
        _ = ingest(&tracker, "open", after: 0)
        #expect(tracker.checkSilence(now: start + .seconds(61), time: time).map(\.kind) == [.silent])
        _ = tracker.takeRecords(events: [])
        #expect(ingest(&tracker, "open", retained: true, after: 100) == .unchanged)
        #expect(tracker.takeRecords(events: []).isEmpty)
        #expect(tracker.status(onTopic: "kitchen")?.status == "offline")
        #expect(tracker.checkSilence(now: start + .seconds(500), time: time).isEmpty)
        // A retained status the hub has not seen is news.
        guard case .event(let back) = ingest(&tracker, "closed", retained: true, after: 501) else {
            Issue.record("expected an event")
            return
        }
        #expect(back.kind == .recovered && back.newStatus == "closed")
        // And a live message, even of the same status as before the silence.
        #expect(tracker.checkSilence(now: start + .seconds(600), time: time).map(\.kind) == [.silent])
        guard case .event(let live) = ingest(&tracker, "closed", after: 601) else {
            Issue.record("expected an event")
            return
        }
        #expect(live.kind == .recovered && live.newStatus == "closed")
    }

    /// The same for a device's JSON payload (no availability topic): the replay of its last payload is no recovery.
    @Test func aReplayOfADevicesPayloadBeforeASilenceIsNoRecovery() throws {
        var document = DefaultsDocument()
        try document.addSensor(
            named: "front door", topic: "zigbee2mqtt/front door",
            format: ValueFormat(path: try ValuePath("contact"), map: try ValueMap("true=closed,false=open")), at: time)
        var tracker = SensorTracker(defaultSilenceTimeout: .seconds(60), maximumStatusLength: 100)
        _ = tracker.follow(document, now: start)
        let payload = Array(#"{"battery":97,"contact":true}"#.utf8)
        func take(_ retained: Bool, after seconds: Int) -> SensorTracker.Outcome {
            tracker.ingest(
                topic: "zigbee2mqtt/front door", payload: payload, retained: retained, time: time,
                now: start + .seconds(seconds))
        }
        #expect(take(false, after: 0).events.map(\.newStatus) == ["closed"])
        #expect(tracker.checkSilence(now: start + .seconds(61), time: time).map(\.kind) == [.silent])
        #expect(take(true, after: 100) == .unchanged)
        #expect(tracker.checkSilence(now: start + .seconds(500), time: time).isEmpty)
        #expect(take(false, after: 501).events.map(\.kind) == [.recovered])
    }

    @Test func followingTheRegistrySubscribesUnsubscribesAndRenames() throws {
        var document = try registry()
        var tracker = try tracker(following: document)
        _ = ingest(&tracker, "open")
        try document.renameSensor("kitchen", to: "kitchen window")
        try document.removeSensor(named: "garage")
        try document.addSensor(named: "shed", at: time)
        let delta = tracker.follow(document, now: start)
        #expect(delta.subscribe == ["shed"])
        #expect(delta.unsubscribe == ["garage"])
        // The renamed sensor keeps the status the hub has (the store may not have it yet).
        #expect(tracker.status(onTopic: "kitchen")?.name == "kitchen window")
        #expect(tracker.status(onTopic: "kitchen")?.status == "open")
    }

    @Test func writtenBackByTopicWithTheSensorsIdAndSequence() throws {
        var document = try registry()
        var tracker = try tracker(following: document)
        let outcome = ingest(&tracker, "open")
        let records = tracker.takeRecords(events: outcome.events)
        #expect(records.count == 1)
        for record in records {
            #expect(record.events == outcome.events && record.sequence == 1)
            let recorded = document.recordStatus(
                record.status, lastUpdated: record.lastUpdated, onTopic: record.topic, id: record.sensorID,
                sequence: record.sequence)
            #expect(recorded)
        }
        #expect(document.sensor(named: "kitchen")?.status == "open")
        #expect(document.sensor(named: "kitchen")?.sequence == 1)
        let gone = document.recordStatus("x", lastUpdated: nil, onTopic: "gone")
        #expect(!gone)
        // A record of a sensor removed since, with a new one on its topic, changes nothing.
        try document.removeSensor(named: "kitchen")
        try document.addSensor(named: "kitchen", at: time)
        let replaced = document.recordStatus("x", lastUpdated: nil, onTopic: "kitchen", id: records[0].sensorID)
        #expect(!replaced)
    }

    /// An event derived again from what the registry holds (after a crash: the journal's replay, or the broker
    /// sending a message again) has the id it had the first time, and the next one the next id.
    @Test func eventIdsComeFromTheSensorAndItsSequence() throws {
        var document = try registry()
        let id = try #require(document.sensor(named: "kitchen")?.id)
        var first = try tracker(following: document)
        let opened = ingest(&first, "open").events
        #expect(opened.map(\.id) == ["\(id)-1"])
        for record in first.takeRecords(events: opened) {
            document.recordStatus(
                record.status, lastUpdated: record.lastUpdated, onTopic: record.topic, id: record.sensorID,
                sequence: record.sequence)
        }
        let closed = ingest(&first, "closed").events
        var second = try tracker(following: document)
        #expect(ingest(&second, "closed").events == closed)
        #expect(closed.map(\.id) == ["\(id)-2"] && closed.first?.oldStatus == "open")
        // An older record (sequence 1) applied after a newer one changes nothing.
        document.recordStatus("closed", lastUpdated: time, onTopic: "kitchen", id: id, sequence: 2)
        document.recordStatus("open", lastUpdated: time, onTopic: "kitchen", id: id, sequence: 1)
        #expect(document.sensor(named: "kitchen")?.status == "closed")
    }
}
