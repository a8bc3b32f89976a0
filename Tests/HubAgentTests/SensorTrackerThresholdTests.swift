import HubAgent
import HubCore
import Testing

/// Configured thresholds in the tracker: a held breach alerts on the silence timer's tick, an attribute rule on a
/// status sensor, and the alert state carried across a restart by the registry.
@Suite struct SensorTrackerThresholdTests {
    let start = ContinuousClock.now
    let time = Timestamp(millisecondsSince1970: 1_795_341_780_000)

    func later(_ seconds: Int64) -> Timestamp {
        Timestamp(millisecondsSince1970: time.millisecondsSince1970 + seconds * 1000)
    }

    func registry() throws -> DefaultsDocument {
        var document = DefaultsDocument()
        try document.addSensor(
            named: "greenhouse", topic: "greenhouse", kind: .numeric,
            format: ValueFormat(path: try ValuePath("temperature"), unit: "°C"), at: time)
        try document.addSensor(
            named: "door", topic: "door", format: ValueFormat(path: try ValuePath("contact")), at: time)
        return document
    }

    func tracker(_ document: DefaultsDocument, _ rules: [ThresholdRule]) -> SensorTracker {
        var tracker = SensorTracker()
        _ = tracker.follow(document, now: start)
        tracker.setThresholds(rules)
        return tracker
    }

    func send(_ tracker: inout SensorTracker, _ topic: String, _ payload: String, at seconds: Int64)
        -> [SensorEvent]
    {
        tracker.ingest(
            topic: topic, payload: Array(payload.utf8), retained: false, time: later(seconds),
            now: start + .seconds(seconds)
        ).events
    }

    @Test func aHeldBreachAlertsOnTheTickWhenItsTimeHasCome() throws {
        let hot = ThresholdRule(
            name: "hot", sensors: ["green*"], limit: ThresholdLimit(above: 30, holdFor: .seconds(60)))
        var tracker = tracker(try registry(), [hot])
        #expect(send(&tracker, "greenhouse", #"{"temperature":31}"#, at: 0).isEmpty)
        #expect(tracker.checkSilence(now: start + .seconds(59), time: later(59)).isEmpty)
        let events = tracker.checkSilence(now: start + .seconds(60), time: later(60))
        #expect(events.map(\.kind) == [.threshold])
        #expect(events.first?.newStatus == "alert")
        #expect(events.first?.value == "hot: 31 °C is above 30 for 1m")
        #expect(tracker.takeRecords(events: events).first?.alerts == ["hot"])
        #expect(send(&tracker, "greenhouse", #"{"temperature":32}"#, at: 70).isEmpty)
        #expect(send(&tracker, "greenhouse", #"{"temperature":29}"#, at: 80).map(\.newStatus) == ["clear"])
    }

    @Test func anAttributeRuleWatchesAStatusSensorsBattery() throws {
        let low = ThresholdRule(
            name: "battery low", attribute: "battery", limit: ThresholdLimit(below: 15, hysteresis: 5))
        var tracker = tracker(try registry(), [low])
        #expect(send(&tracker, "door", #"{"contact":true,"battery":20}"#, at: 0).map(\.kind) == [.changed])
        let events = send(&tracker, "door", #"{"contact":true,"battery":14}"#, at: 1)
        #expect(events.map(\.kind) == [.threshold])
        #expect(events.first?.value == "battery low: battery 14% is below 15")
        #expect(send(&tracker, "door", #"{"contact":false,"battery":19}"#, at: 2).map(\.kind) == [.changed])
        #expect(send(&tracker, "door", #"{"contact":false,"battery":21}"#, at: 3).map(\.newStatus) == ["clear"])
    }

    @Test func anAlertStoredBeforeARestartClearsOnceAndDoesNotAlertAgain() throws {
        let hot = ThresholdRule(name: "hot", limit: ThresholdLimit(above: 30))
        var document = try registry()
        var first = tracker(document, [hot])
        let raised = send(&first, "greenhouse", #"{"temperature":31}"#, at: 0)
        #expect(raised.map(\.newStatus) == ["alert"])
        for record in first.takeRecords(events: raised) {
            document.recordStatus(
                record.status, lastUpdated: record.lastUpdated, onTopic: record.topic, id: record.sensorID,
                sequence: record.sequence, attributes: record.attributes, alerts: record.alerts)
        }
        #expect(document.sensor(named: "greenhouse")?.alerts == ["hot"])
        // The hub restarts from that registry: still hot is no news; back is one clear.
        var second = tracker(document, [hot])
        #expect(send(&second, "greenhouse", #"{"temperature":33}"#, at: 10).isEmpty)
        #expect(send(&second, "greenhouse", #"{"temperature":28}"#, at: 20).map(\.newStatus) == ["clear"])
        // A rule removed from the configuration while the sensor is past it: it is past it no longer.
        #expect(send(&second, "greenhouse", #"{"temperature":35}"#, at: 30).map(\.newStatus) == ["alert"])
        _ = second.takeRecords(events: [])
        second.setThresholds([])
        #expect(second.takeRecords(events: []).first?.alerts == [])
    }

    @Test func aPendingBreachDoesNotAlertForASensorThatWentOffline() throws {
        let hot = ThresholdRule(name: "hot", limit: ThresholdLimit(above: 30, holdFor: .seconds(60)))
        var document = try registry()
        try document.configureSensor(named: "greenhouse") { $0.availability = "greenhouse/availability" }
        var tracker = tracker(document, [hot])
        #expect(send(&tracker, "greenhouse", #"{"temperature":31}"#, at: 0).isEmpty)
        #expect(send(&tracker, "greenhouse/availability", "offline", at: 10).map(\.kind) == [.offline])
        #expect(tracker.checkSilence(now: start + .seconds(61), time: later(61)).isEmpty)
    }

    @Test func aReplayedOnlineDoesNotBringBackASensorThatWentSilent() throws {
        var document = try registry()
        try document.configureSensor(named: "greenhouse") { $0.availability = "greenhouse/availability" }
        var tracker = SensorTracker(defaultSilenceTimeout: .seconds(60))
        _ = tracker.follow(document, now: start)
        _ = send(&tracker, "greenhouse", #"{"temperature":21}"#, at: 0)
        #expect(tracker.checkSilence(now: start + .seconds(61), time: later(61)).map(\.kind) == [.silent])
        // The broker replays the device's retained `online` on a reconnect: no news, no recovery.
        let replay = tracker.ingest(
            topic: "greenhouse/availability", payload: Array("online".utf8), retained: true, time: later(70),
            now: start + .seconds(70))
        #expect(replay.events.isEmpty)
        // Said live, it is.
        #expect(send(&tracker, "greenhouse/availability", "online", at: 80).map(\.newStatus) == ["21"])
    }

    @Test func anOfflineSensorComesBackWithItsStatusAfterARestart() throws {
        var document = try registry()
        try document.configureSensor(named: "door") { $0.availability = "door/availability" }
        var first = tracker(document, [])
        _ = send(&first, "door", #"{"contact":"closed"}"#, at: 0)
        #expect(send(&first, "door/availability", "offline", at: 5).map(\.kind) == [.offline])
        for record in first.takeRecords(events: []) {
            document.recordStatus(
                record.status, lastUpdated: record.lastUpdated, onTopic: record.topic, id: record.sensorID,
                sequence: record.sequence, statusBeforeOffline: .some(record.statusBeforeOffline))
        }
        // The registry keeps what `online` brings back, and survives being written and read again.
        let stored = try DefaultsDocument.decode(document.encode())
        #expect(stored.sensor(named: "door")?.statusBeforeOffline == "closed")
        var second = tracker(stored, [])
        let back = send(&second, "door/availability", "online", at: 60)
        #expect(back.map(\.kind) == [.recovered] && back.first?.newStatus == "closed")
        #expect(second.takeRecords(events: back).first?.statusBeforeOffline == nil)
    }
}
