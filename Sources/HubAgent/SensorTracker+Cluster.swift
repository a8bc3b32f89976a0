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
                // Not watched here until now (its partition was another agent's): armed from the row below.
                || (tracked.silenceDeadline == nil && !offline
                    && (tracked.silenceTimeout ?? defaultSilenceTimeout) != nil)
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

    /// The rows a message on `topic` changes: the sensor's, and those of the sensors it is the availability of (of
    /// those, the ones `owned` says: a partition's); nil when it changes none.
    public func topicsChanged(byMessageOn topic: String, owned: ((String) -> Bool)? = nil) -> [String]? {
        var changed = sensors[topic] == nil ? [] : [topic]
        changed += (availabilityTopics[topic] ?? []).filter { $0 != topic }
        if let owned { changed.removeAll { !owned($0) } }
        return changed.isEmpty ? nil : changed
    }

    /// The topics each partition's session subscribes to (indexed by partition): its sensors' topics, and their
    /// devices' availability topics (one several partitions' sensors use is in each of them).
    public func topics(by partitions: ClusterPartitions) -> [Set<String>] {
        var topics = [Set<String>](repeating: [], count: partitions.count)
        for (topic, tracked) in sensors {
            let partition = partitions.partition(ofSensorTopic: topic)
            topics[partition].insert(topic)
            if let availability = tracked.availability { topics[partition].insert(availability) }
        }
        return topics
    }

    /// What a cluster's silence check looks at: `due`, the sensors whose silence deadline has passed (taken off the
    /// deadlines: `silence` them, and look at them again when that cannot be committed); `topics`, those and the
    /// sensors with a threshold waiting for its `for:` or a session a gap may end.
    ///
    /// - Parameter owned: the sensors this agent watches (those of the partitions it holds); the others' deadlines are
    ///   dropped (the sensor is not watched here until a catch-up with its row arms it again, `catchUp`).
    public mutating func takeSilenceCandidates(now: ContinuousClock.Instant, owned: (String) -> Bool = { _ in true })
        -> (due: Set<String>, topics: Set<String>)
    {
        var due = Set<String>()
        for topic in takeDueSilences(now: now) {
            if owned(topic) { due.insert(topic) } else { sensors[topic]?.silenceDeadline = nil }
        }
        return (due, due.union(pendingThresholds.filter(owned)).union(gapSessions.filter(owned)))
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
