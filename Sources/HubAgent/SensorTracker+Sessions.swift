import HubCore
import HubSupport

/// What a control message, `hubctl sessions` or the API asks of a mobile sensor's recording.
public enum SessionAction: String, Sendable, Hashable, CaseIterable {
    case start, stop
}

// Mobile sensors' recording sessions (`sessions:` in hubd.yaml). A session starts with a `session` event
// (`idle` → `recording`) whose id is the session's, and ends with one (`recording` → `idle`) whose value is that id;
// its readings carry the id to the stores. A session's times are its readings' own (a walk uploaded in one burst
// spans the walk, not the second it arrived in), unless a reading says it is from later than it arrived; but its
// silence is measured by the hub's clock, from when the sensor was last heard (`lastUpdated`, which the registry,
// the journal and a cluster's rows keep), so a device whose clock is behind can't end its sessions at once.
extension SensorTracker {
    /// Takes new `sessions:` rules (at start and on SIGHUP).
    public mutating func setSessionRules(_ rules: [SessionRule]) {
        guard rules != sessionRules else { return }
        sessionRules = rules
        for (topic, var tracked) in sensors {
            tracked.sessions = sessionRule(for: tracked.name)
            sensors[topic] = tracked
            followSession(topic)
        }
    }

    /// The first rule naming the sensor called `name`.
    func sessionRule(for name: String) -> SessionRule? {
        sessionRules.first { glob(anyOf: $0.sensors, name) }
    }

    /// Keeps `gapSessions` up to date for the sensor on `topic`.
    mutating func followSession(_ topic: String) {
        if let tracked = sensors[topic], let session = tracked.session, !session.explicit,
            tracked.sessions?.gap != nil
        {
            gapSessions.insert(topic)
        } else {
            gapSessions.remove(topic)
        }
    }

    /// `{"session":"start"}` or `{"session":"stop"}` on a mobile sensor's topic; `nil` for any other payload.
    func sessionControl(topic: String, payload: [UInt8]) -> SessionAction? {
        // Cheap checks first: this runs for every message of a mobile sensor.
        guard sensors[topic]?.sessions != nil, payload.first == UInt8(ascii: "{"), payload.count <= 4096,
            payload.firstRange(of: Array(#""session""#.utf8)) != nil,
            case .string(let text)? = (try? JSONTree.parse(payload))?["session"]
        else { return nil }
        return SessionAction(rawValue: text.lowercased())
    }

    /// Starts or stops the recording session of the sensor on `topic`: a start while one is open ends it first.
    public mutating func session(_ action: SessionAction, topic: String, time: Timestamp, explicit: Bool = true)
        -> Outcome
    {
        guard var tracked = sensors[topic] else { return .rejected(.unknownTopic) }
        guard tracked.sessions != nil else { return .rejected(.notMobile) }
        var events: [SensorEvent] = []
        if tracked.session != nil { events.append(endSession(&tracked, topic: topic, at: time)) }
        if action == .start { events.append(startSession(&tracked, topic: topic, at: time, explicit: explicit)) }
        sensors[topic] = tracked
        followSession(topic)
        return events.isEmpty ? .unchanged : .events(events)
    }

    /// A reading's outcome with its session kept up: a gap ends the open session, and with a gap set a reading
    /// outside one starts one. A sensor no rule names any more ends its open session.
    mutating func inSession(_ outcome: Outcome, topic: String, time arrival: Timestamp) -> Outcome {
        guard case .reading(let reading, let sensor, var events) = outcome, var tracked = sensors[topic],
            tracked.sessions != nil || tracked.session != nil
        else { return outcome }
        let time = reading.time <= arrival.adding(milliseconds: Self.clockAllowance) ? reading.time : arrival
        if let open = tracked.session {
            let gap = tracked.sessions?.gap
            if tracked.sessions == nil || (!open.explicit && gap.map { open.last.distance(to: time) > $0 } == true) {
                events.append(endSession(&tracked, topic: topic, at: open.last))
            }
        }
        if tracked.session == nil, tracked.sessions?.gap != nil {
            events.append(startSession(&tracked, topic: topic, at: time, explicit: false))
        }
        if let open = tracked.session, open.last < time { tracked.session?.last = time }
        sensors[topic] = tracked
        dirty.insert(topic)
        followSession(topic)
        return .reading(reading, sensor: sensor, events: events)
    }

    /// How far ahead of the hub's clock a reading's own time may be and still be taken as the time it was read
    /// (clocks a little apart): 1 min.
    static let clockAllowance: Int64 = 60_000

    /// Ends the sessions whose sensor was last heard (by the hub's clock) longer ago than their gap, as of their last
    /// reading.
    /// - Parameter among: only these sensors' (a cluster's step, which holds their rows).
    mutating func endIdleSessions(time: Timestamp, among: Set<String>? = nil) -> [SensorEvent] {
        var events: [SensorEvent] = []
        for topic in gapSessions where among?.contains(topic) ?? true {
            guard var tracked = sensors[topic], let open = tracked.session, let gap = tracked.sessions?.gap,
                (tracked.lastUpdated ?? open.last).distance(to: time) > gap
            else { continue }
            events.append(endSession(&tracked, topic: topic, at: open.last))
            sensors[topic] = tracked
            followSession(topic)
        }
        return events
    }

    private mutating func startSession(_ tracked: inout Tracked, topic: String, at time: Timestamp, explicit: Bool)
        -> SensorEvent
    {
        let id = tracked.nextEventID()
        tracked.session = OpenSession(id: id, started: time, explicit: explicit)
        dirty.insert(topic)
        return SensorEvent(
            id: id, kind: .session, sensor: tracked.name, topic: topic, oldStatus: SessionState.idle,
            newStatus: SessionState.recording, time: time, value: id)
    }

    private mutating func endSession(_ tracked: inout Tracked, topic: String, at time: Timestamp) -> SensorEvent {
        let id = tracked.session?.id ?? ""
        tracked.session = nil
        dirty.insert(topic)
        return SensorEvent(
            id: tracked.nextEventID(), kind: .session, sensor: tracked.name, topic: topic,
            oldStatus: SessionState.recording, newStatus: SessionState.idle, time: time, value: id)
    }

    /// `reading` of the sensor on `topic` as the stores keep it: with the sensor's id and its open session.
    public func recorded(_ reading: SensorReading, topic: String) -> RecordedReading {
        let tracked = sensors[topic]
        return RecordedReading(
            sensor: tracked?.name ?? topic, reading: reading, sensorID: tracked?.id ?? "", session: tracked?.session?.id
        )
    }

    /// The topic of the sensor called `name` (any case), if it is tracked.
    public func topic(ofSensor name: String) -> String? {
        let key = SensorRules.key(name)
        return sensors.first { SensorRules.key($0.value.name) == key }?.key
    }
}

extension SensorTracker.Outcome {
    /// This outcome after `first` (a control message's): their events together, the reading kept.
    func after(_ first: Self) -> Self {
        switch (first, self) {
        case (.rejected, _): return self
        case (_, .rejected): return first
        case (_, .reading(let reading, let sensor, let events)):
            return .reading(reading, sensor: sensor, events: first.events + events)
        default:
            let events = first.events + self.events
            return events.isEmpty ? .unchanged : .events(events)
        }
    }
}
