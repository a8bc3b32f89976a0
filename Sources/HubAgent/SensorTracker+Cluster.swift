import HubCore

/// A cluster's shared ingest (docs/cluster.md): each agent takes some of a sensor's messages, so before it applies
/// its own it catches up, under the sensor's row lock, with what the row holds. The row is the truth there; the
/// tracker is this agent's copy of it, plus what only this agent keeps.
extension SensorTracker {
    /// Takes on what the cluster committed for `sensor` (read under its row's lock, before this agent applies its
    /// own messages of it): the status, its time, sequence, attributes, alerts, offline state and session. The row
    /// wins whether it is newer (another agent's message) or older (this agent's step that did not commit). What
    /// only this agent keeps (particulate averages, threshold watches) takes the row's alerts and value as if this
    /// agent had seen them (`observeCommitted`), which may raise or clear an alert here; a silence deadline is armed
    /// again from the row's last update, so a sensor another agent heard from is not declared silent here.
    ///
    /// - Parameters:
    ///   - now: the monotonic clock; `time`: the wall clock, to tell how long ago the row's last update was.
    /// - Returns: nil when nothing changed; otherwise the events seeing the row's value made (commit them with the
    ///   step's).
    @discardableResult
    public mutating func catchUp(with sensor: Sensor, now: ContinuousClock.Instant, time: Timestamp) -> [SensorEvent]? {
        guard var tracked = sensors[sensor.topic], tracked.id == sensor.id else { return nil }
        let offline = sensor.status == Self.offline
        let statusBeforeOffline = offline ? sensor.statusBeforeOffline : nil
        guard
            tracked.sequence != sensor.sequence || tracked.status != sensor.status
                || tracked.lastUpdated != sensor.lastUpdated || tracked.isOffline != offline
                || tracked.attributes != sensor.attributes || tracked.alerts != sensor.alerts
                || tracked.session != sensor.session || tracked.statusBeforeOffline != statusBeforeOffline
        else { return nil }
        let observes = !offline && (tracked.lastUpdated != sensor.lastUpdated || tracked.alerts != sensor.alerts)
        // A new last update (another agent heard from it), or back online (a silence check of this agent's that
        // was not committed had taken its deadline).
        let heard = tracked.lastUpdated != sensor.lastUpdated || tracked.isOffline || tracked.silenceDeadline == nil
        if offline && !tracked.isOffline { tracked.offlineByAnnouncement = false }
        tracked.sequence = sensor.sequence
        tracked.status = sensor.status
        tracked.lastUpdated = sensor.lastUpdated
        tracked.isOffline = offline
        tracked.statusBeforeOffline = statusBeforeOffline
        tracked.attributes = sensor.attributes
        tracked.alerts = sensor.alerts
        tracked.session = sensor.session
        var events: [SensorEvent] = []
        if observes {
            events = observeCommitted(&tracked, topic: sensor.topic, time: sensor.lastUpdated ?? time)
            if !events.isEmpty { dirty.insert(sensor.topic) }
        }
        sensors[sensor.topic] = tracked
        if offline {
            sensors[sensor.topic]?.silenceDeadline = nil
        } else if heard, let lastUpdated = sensor.lastUpdated {
            let ago = Duration.milliseconds(max(0, time.millisecondsSince1970 - lastUpdated.millisecondsSince1970))
            armSilence(sensor.topic, from: now - ago)
        }
        followSession(sensor.topic)
        return events
    }

    /// The rows a message on `topic` changes: the sensor's, and those of the sensors it is the availability of; nil
    /// when no sensor uses the topic.
    public func topicsChanged(byMessageOn topic: String) -> [String]? {
        let dependents = availabilityTopics[topic] ?? []
        guard sensors[topic] != nil || !dependents.isEmpty else { return nil }
        return sensors[topic] == nil ? dependents : [topic] + dependents.filter { $0 != topic }
    }

    /// What a cluster's silence check looks at: `due`, the sensors whose silence deadline has passed (taken off the
    /// deadlines: `silence` them, and look at them again when that cannot be committed); `topics`, those and the
    /// sensors with a threshold waiting for its `for:` or a session a gap may end.
    public mutating func takeSilenceCandidates(now: ContinuousClock.Instant) -> (due: Set<String>, topics: Set<String>)
    {
        let due = Set(takeDueSilences(now: now))
        return (due, due.union(pendingThresholds).union(gapSessions))
    }

    /// A cluster's silence check on `topics` (whose rows it holds, caught up): each of `due` whose deadline has still
    /// passed goes offline (another agent's message may have moved it), and their thresholds and sessions are ticked.
    public mutating func silence(
        _ topics: Set<String>, due: Set<String>, now: ContinuousClock.Instant, time: Timestamp
    ) -> [SensorEvent] {
        var events: [SensorEvent] = []
        // A deadline another agent's message moved was armed again (on the heap) as the tracker caught up.
        for topic in due.sorted() {
            guard let deadline = sensors[topic]?.silenceDeadline, deadline <= now,
                let event = goSilent(topic, time: time)
            else { continue }
            events.append(event)
        }
        events += tickThresholds(time: time, among: topics)
        events += endIdleSessions(time: time, among: topics)
        return events
    }
}
