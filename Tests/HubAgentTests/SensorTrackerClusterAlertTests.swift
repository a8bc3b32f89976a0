import HubCore
import Testing

@testable import HubAgent

/// Alerts in a cluster: two agents' trackers take turns at one sensor's values, each step catching up with the
/// shared row first and committing to it after, as `Ingest.commit` does. A `for:` alerts once whichever agents took
/// the values, and not when another agent saw the breach end; an alert is raised and cleared once.
@Suite struct SensorTrackerClusterAlertTests {
    let start = ContinuousClock.now
    let time = Timestamp(millisecondsSince1970: 1_795_341_780_000)
    static let hot = ThresholdRule(
        name: "hot", sensors: ["greenhouse"], limit: ThresholdLimit(above: 30, holdFor: .seconds(60)))

    func later(_ seconds: Int64) -> Timestamp {
        Timestamp(millisecondsSince1970: time.millisecondsSince1970 + seconds * 1000)
    }

    /// The shared row and two agents' trackers.
    struct Cluster {
        var store: DefaultsDocument
        var agents: [SensorTracker]
    }

    func cluster() throws -> Cluster {
        var document = DefaultsDocument()
        try document.addSensor(
            named: "greenhouse", topic: "greenhouse", kind: .numeric,
            format: ValueFormat(path: try ValuePath("temperature"), unit: "°C"), at: time)
        var tracker = SensorTracker()
        _ = tracker.follow(document, now: start)
        tracker.setThresholds([Self.hot])
        return Cluster(store: document, agents: [tracker, tracker])
    }

    /// One step of `agent` at `seconds`: catch up with the row, run `body`, commit to the row.
    func step(
        _ cluster: inout Cluster, _ agent: Int, at seconds: Int64, _ body: (inout SensorTracker) -> [SensorEvent]
    ) -> [SensorEvent] {
        var tracker = cluster.agents[agent]
        var events: [SensorEvent] = []
        for sensor in cluster.store.sensors {
            events += tracker.catchUp(with: sensor, now: start + .seconds(seconds), time: later(seconds)) ?? []
        }
        events += body(&tracker)
        for record in tracker.takeRecords(events: events) { cluster.store.record(record) }
        cluster.agents[agent] = tracker
        return events
    }

    func send(_ cluster: inout Cluster, _ agent: Int, _ temperature: Double, at seconds: Int64) -> [SensorEvent] {
        step(&cluster, agent, at: seconds) { tracker in
            tracker.ingest(
                topic: "greenhouse", payload: Array(#"{"temperature":\#(temperature)}"#.utf8), retained: false,
                time: later(seconds), now: start + .seconds(seconds)
            ).events
        }
    }

    /// The tick each agent makes of the breaches it saw begin whose `for:` is over.
    func tick(_ cluster: inout Cluster, _ agent: Int, at seconds: Int64) -> [SensorEvent] {
        let due = cluster.agents[agent].dueThresholds(time: later(seconds))
        guard !due.isEmpty else { return [] }
        return step(&cluster, agent, at: seconds) { $0.tickThresholds(time: later(seconds), among: due) }
    }

    @Test func aHeldBreachAlertsOnceWhicheverAgentsTookItsValues() throws {
        var cluster = try cluster()
        #expect(send(&cluster, 0, 31, at: 0).isEmpty)
        #expect(send(&cluster, 1, 32, at: 30).isEmpty)
        #expect(tick(&cluster, 0, at: 59).isEmpty)
        // The breach began at 0 (agent 0's value), so both agents find it due at 60: one alert.
        let raised = tick(&cluster, 0, at: 60)
        #expect(raised.map(\.newStatus) == ["alert"])
        #expect(tick(&cluster, 1, at: 61).isEmpty)
        // Agent 1's own breach (from 30) would be due at 90: the row says the alert is raised already.
        #expect(send(&cluster, 1, 33, at: 95).isEmpty)
        #expect(cluster.store.sensor(named: "greenhouse")?.alerts == ["hot"])
        // Cleared by one agent, not again by the other.
        #expect(send(&cluster, 0, 29, at: 100).map(\.newStatus) == ["clear"])
        #expect(send(&cluster, 1, 28, at: 110).isEmpty)
        #expect(cluster.store.sensor(named: "greenhouse")?.alerts == [])
    }

    @Test func aBreachAnotherAgentSawEndDoesNotAlert() throws {
        var cluster = try cluster()
        #expect(send(&cluster, 0, 31, at: 0).isEmpty)
        #expect(send(&cluster, 1, 25, at: 30).isEmpty)
        // Agent 0 still has its breach from 0 pending; under the row it sees 25 first.
        #expect(cluster.agents[0].dueThresholds(time: later(60)) == ["greenhouse"])
        #expect(tick(&cluster, 0, at: 60).isEmpty)
        #expect(cluster.agents[0].dueThresholds(time: later(120)).isEmpty)
        // A breach that holds across both agents' values alerts.
        #expect(send(&cluster, 1, 35, at: 130).isEmpty)
        #expect(send(&cluster, 0, 36, at: 160).isEmpty)
        #expect(tick(&cluster, 0, at: 190).map(\.newStatus) == ["alert"])
    }
}
