import HubCore

extension SensorTracker {
    /// Catches up with what another agent of a cluster recorded for `sensor` (read under its row's lock, before this
    /// agent applies its own messages of it): a newer record (a higher sequence, or the same one updated later)
    /// replaces the tracked status, its time, attributes, alerts, offline state and session; what only this agent
    /// keeps (particulate averages, threshold watches, the silence deadline) stays. Returns whether it was newer.
    @discardableResult
    public mutating func catchUp(with sensor: Sensor) -> Bool {
        guard var tracked = sensors[sensor.topic], tracked.id == sensor.id else { return false }
        let later: Bool
        switch (sensor.lastUpdated, tracked.lastUpdated) {
        case (let recorded?, let known?): later = recorded > known
        case (.some, nil): later = true
        default: later = false
        }
        let newer = sensor.sequence > tracked.sequence || (sensor.sequence == tracked.sequence && later)
        guard newer else { return false }
        let offline = sensor.status == Self.offline
        tracked.sequence = sensor.sequence
        tracked.status = sensor.status
        tracked.lastUpdated = sensor.lastUpdated
        tracked.isOffline = offline
        tracked.offlineByAnnouncement = false
        tracked.statusBeforeOffline = offline ? sensor.statusBeforeOffline : nil
        tracked.attributes = sensor.attributes
        tracked.alerts = sensor.alerts
        tracked.session = sensor.session
        sensors[sensor.topic] = tracked
        return true
    }
}
