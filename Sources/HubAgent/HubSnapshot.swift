import Foundation
import HubCore
import HubNotify

/// What the hub is now, read-only: the sensors' live statuses, particulate air, counters, the connection and the
/// notifiers. The HTTP API, `/metrics` and the status file read it, never a service's lock; a test of the API
/// builds one.
public struct HubSnapshot: Sendable {
    public var started = Date()
    public var connection = Connection()
    public var counters = AgentStatus.Counters()
    public var lastError: AgentStatus.LastError?
    /// Sensors in the registry as hubd follows it.
    public var sensorCount = 0
    /// Status by topic as hubd knows it now (the registry file may lag behind by a flush interval); only filled
    /// when asked for, since it costs a copy per sensor.
    public var statuses: [String: SensorTracker.LiveStatus] = [:]
    /// Every particulate sensor's air quality, by name.
    public var air: [SensorTracker.AirSnapshot] = []
    public var notifications = NotificationRouter.Statistics()
    /// How a sensor added through the API gets its topic.
    public var topicTemplate: TopicTemplate = .default
    /// `thresholds:` now (a reload may change them): the dashboard's charts draw them.
    public var thresholds: [ThresholdRule] = []

    public init() {}

    public struct Connection: Sendable, Hashable {
        public var connected = false
        public var since: Date?
        /// `host:port`.
        public var broker = ""
    }

    /// Who makes snapshots: `statuses` asks for the per-sensor statuses too.
    public typealias Source = @Sendable (_ statuses: Bool) -> HubSnapshot

    /// Takes what the tracker knows: the sensor count, the air, and the statuses when asked for.
    public mutating func take(_ tracker: SensorTracker, statuses: Bool) {
        sensorCount = tracker.count
        air = tracker.airSnapshots()
        if statuses { self.statuses = tracker.liveStatuses }
    }

    /// The status file's content (`hubctl status` reads it).
    var agentStatus: AgentStatus {
        var status = AgentStatus(
            pid: getpid(), version: SensorHubVersion.current, started: started, broker: connection.broker)
        status.updated = Date()
        status.connected = connection.connected
        status.connectedSince = connection.connected ? connection.since : nil
        status.sensors = sensorCount
        status.counters = counters
        status.lastError = lastError
        status.notifications = AgentStatus.Notifications(
            pending: notifications.outboxPending, suppressed: notifications.router.suppressed,
            backends: notifications.backends, alerts: notifications.alerts)
        return status
    }
}
