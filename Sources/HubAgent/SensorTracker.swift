import HeapModule
import HubCore
import HubSupport

/// The agent's view of the registry and of every sensor's status: what a message changes, when a sensor goes
/// silent, what must be written back. A value type with no I/O, so the rules can be tested on their own.
public struct SensorTracker: Sendable {
    /// The status text shown for a sensor that went silent or said it is offline.
    public static let offline = "offline"

    var sensors = TrackedSensors()
    /// Limits on values and attributes (`thresholds:`); sensors with a breach waiting for its `for:` time.
    public internal(set) var thresholds: [ThresholdRule] = []
    var pendingThresholds: Set<String> = []
    /// The sensors (by topic) each availability topic speaks for: one ESPHome node's `status` covers all of its
    /// sensors.
    var availabilityTopics: [String: [String]] = [:]
    /// `sessions:`; the sensors (by topic) with a session a gap may end.
    public internal(set) var sessionRules: [SessionRule] = []
    var gapSessions: Set<String> = []
    private var deadlines = Heap<Deadline>()
    var dirty: Set<String> = []
    /// The hub-wide silence timeout, for sensors without their own.
    public var defaultSilenceTimeout: Duration?
    /// Longer statuses are rejected.
    public var maximumStatusLength: Int

    struct Deadline: Comparable, Sendable {
        var instant: ContinuousClock.Instant
        var topic: String
        static func < (lhs: Deadline, rhs: Deadline) -> Bool { lhs.instant < rhs.instant }
    }

    /// How particulate sensors are judged.
    public var airPolicy = AirQualityPolicy()

    public init(defaultSilenceTimeout: Duration? = nil, maximumStatusLength: Int = 256) {
        self.defaultSilenceTimeout = defaultSilenceTimeout
        self.maximumStatusLength = maximumStatusLength
    }

    /// The topics the hub must be subscribed to: the sensors', and their devices' availability.
    public var topics: [String] { Array(sensors.keys) + availabilityTopics.keys.filter { sensors[$0] == nil } }

    public var count: Int { sensors.count }

    // MARK: Following the registry

    /// What subscriptions a new registry needs.
    public struct Delta: Sendable, Hashable {
        public var subscribe: [String] = []
        public var unsubscribe: [String] = []
        public var isEmpty: Bool { subscribe.isEmpty && unsubscribe.isEmpty }
    }

    /// Takes the registry's sensors: new ones are tracked with their stored status, removed ones dropped, renamed
    /// ones renamed. Statuses the hub already tracks stay (the store may lag behind by a flush interval).
    public mutating func follow(_ document: DefaultsDocument, now: ContinuousClock.Instant) -> Delta {
        var delta = Delta()
        var wanted = Set<String>()
        for sensor in document.sensors {
            wanted.insert(sensor.topic)
            if var tracked = sensors[sensor.topic], tracked.id == sensor.id {
                tracked.name = sensor.name
                tracked.format = sensor.format
                tracked.availability = sensor.availability
                tracked.sessions = sessionRule(for: sensor.name)
                if tracked.kind != sensor.kind {
                    tracked.kind = sensor.kind
                    tracked.air = sensor.kind == .particulate ? AirQualityMonitor(policy: airPolicy) : nil
                }
                if tracked.silenceTimeout != sensor.silenceTimeout {
                    tracked.silenceTimeout = sensor.silenceTimeout
                    sensors[sensor.topic] = tracked
                    armSilence(sensor.topic, from: now)
                } else {
                    sensors[sensor.topic] = tracked
                }
            } else {
                // New, or another sensor on a topic one that was removed used.
                if sensors[sensor.topic] == nil { delta.subscribe.append(sensor.topic) }
                let offline = sensor.status == Self.offline
                sensors[sensor.topic] = Tracked(
                    id: sensor.id, sequence: sensor.sequence, name: sensor.name, status: sensor.status,
                    statusBeforeOffline: offline ? sensor.statusBeforeOffline : nil,
                    lastUpdated: sensor.lastUpdated, isOffline: offline, silenceTimeout: sensor.silenceTimeout,
                    kind: sensor.kind,
                    air: sensor.kind == .particulate ? AirQualityMonitor(policy: airPolicy) : nil,
                    format: sensor.format, attributes: sensor.attributes, availability: sensor.availability,
                    alerts: sensor.alerts, sessions: sessionRule(for: sensor.name), session: sensor.session)
                followSession(sensor.topic)
                // A sensor that has reported before gets a full timeout from now: the hub may just have started.
                if sensor.lastUpdated != nil && !offline { armSilence(sensor.topic, from: now) }
            }
        }
        for topic in sensors.keys where !wanted.contains(topic) {
            sensors.removeValue(forKey: topic)
            gapSessions.remove(topic)
            dirty.remove(topic)
            delta.unsubscribe.append(topic)
        }
        followAvailability(&delta)
        return delta
    }

    /// Applies a new hub-wide silence timeout to every sensor without its own.
    public mutating func setDefaultSilenceTimeout(_ timeout: Duration?, now: ContinuousClock.Instant) {
        defaultSilenceTimeout = timeout
        for (topic, tracked) in sensors
        where tracked.silenceTimeout == nil && !tracked.isOffline
            && tracked.lastUpdated != nil
        {
            armSilence(topic, from: now)
        }
    }

    /// Gives a particulate sensor the readings it had before (from the history), without events.
    public mutating func seed(topic: String, readings: [ParticulateReading]) {
        guard var tracked = sensors[topic], var monitor = tracked.air else { return }
        for reading in readings where monitor.isNew(reading) { _ = monitor.add(reading) }
        tracked.air = monitor
        sensors[topic] = tracked
    }

    // MARK: Messages

    /// What a message did.
    public enum Outcome: Sendable, Hashable {
        /// A real change, to be announced.
        case event(SensorEvent)
        /// The same status again (the last-updated time moved, unless it was a retained replay).
        case unchanged
        /// A reading (particulate, or a numeric sensor's value), with what it changed (a new level, an alert raised
        /// or cleared, back from offline).
        case reading(SensorReading, sensor: String, events: [SensorEvent])
        /// Several events at once (a new status and a threshold crossed; a device's availability for its sensors).
        case events([SensorEvent])
        case rejected(Rejection)
    }

    /// Takes a message from a sensor's topic.
    /// - Parameters:
    ///   - retained: a retained message the broker replays on (re)subscribing: when it repeats the status the hub
    ///     has, it is not news, and it does not prove the sensor is alive.
    ///   - time: the wall-clock time to record; `now`: the monotonic clock for silence.
    /// - Parameter owned: in a cluster, the sensors (by topic) this message may change: those of the partition whose
    ///   session it came through (an availability topic several partitions' sensors use reaches each of them).
    public mutating func ingest(
        topic: String,
        payload: [UInt8],
        retained: Bool,
        time: Timestamp,
        now: ContinuousClock.Instant,
        owned: ((String) -> Bool)? = nil
    ) -> Outcome {
        guard sensors[topic] != nil, owned?(topic) ?? true else {
            if var dependents = availabilityTopics[topic] {
                if let owned { dependents.removeAll { !owned($0) } }
                if dependents.isEmpty { return .rejected(.unknownTopic) }
                return availability(payload, of: dependents, retained: retained, time: time, now: now)
            }
            return .rejected(.unknownTopic)
        }
        let time = Self.ownMillisecond(time, after: sensors[topic]?.lastUpdated)
        // A mobile sensor's `{"session":"start"}`, which may carry a reading too.
        let control = sessionControl(topic: topic, payload: payload).map { session($0, topic: topic, time: time) }
        var outcome = inSession(
            message(topic: topic, payload: payload, retained: retained, time: time, now: now), topic: topic, time: time)
        if let control { outcome = outcome.after(control) }
        // A sensor's topic that is also other sensors' availability (an ESPHome node's status, tracked as a sensor
        // of its own) speaks for them too.
        guard let dependents = availabilityTopics[topic]?.filter({ $0 != topic && owned?($0) ?? true }),
            !dependents.isEmpty
        else {
            return outcome
        }
        return outcome.adding(availability(payload, of: dependents, retained: retained, time: time, now: now))
    }

    /// A message on the topic of a tracked sensor.
    private mutating func message(
        topic: String, payload: [UInt8], retained: Bool, time: Timestamp, now: ContinuousClock.Instant
    ) -> Outcome {
        guard var tracked = sensors[topic] else { return .rejected(.unknownTopic) }
        guard let text = String(validating: payload, as: UTF8.self) else { return .rejected(.invalidUTF8) }
        let status = text.trimmingWhitespace
        if status.isEmpty { return .rejected(.empty) }
        // A device's payload is checked once its value is taken out of it (JSON may be longer, and span lines).
        let readsDevice = tracked.kind == .numeric || !tracked.format.isEmpty
        // A particulate reading is read, not shown, and has its own bounds (a mobile one's position makes it long).
        if !readsDevice && tracked.kind != .particulate {
            // A status is shown in terminals and on the dashboard: no escape sequences, NULs, line breaks or bidi
            // overrides in it (tabs pass, as they always have).
            if UnsafeText.firstUnsafe(in: status, allowing: .tab) != nil { return .rejected(.controlCharacters) }
            if status.utf8.count > maximumStatusLength && status.count > maximumStatusLength {
                return .rejected(.tooLong)
            }
        }
        let old = tracked.status
        func event(_ kind: SensorEvent.Kind, _ new: String) -> Outcome {
            .event(
                SensorEvent(
                    id: tracked.nextEventID(), kind: kind, sensor: tracked.name, topic: topic, oldStatus: old,
                    newStatus: new, time: time))
        }
        defer {
            sensors[topic] = tracked
            if !retained || tracked.status != old { armSilence(topic, from: now) }
        }
        switch status.lowercased() {
        case "offline":
            guard !tracked.isOffline else { return .unchanged }
            tracked.isOffline = true
            tracked.offlineByAnnouncement = true
            tracked.cancelPendingThresholds()
            tracked.statusBeforeOffline = old
            tracked.status = Self.offline
            tracked.lastUpdated = time
            dirty.insert(topic)
            return event(.offline, Self.offline)
        case "online":
            guard tracked.isOffline else {
                if !retained { touch(&tracked, topic, time) }
                return .unchanged
            }
            tracked.isOffline = false
            tracked.status = tracked.statusBeforeOffline ?? Sensor.waiting
            tracked.statusBeforeOffline = nil
            tracked.lastUpdated = time
            dirty.insert(topic)
            return event(.recovered, tracked.status)
        default:
            if tracked.kind == .particulate, var monitor = tracked.air {
                guard var reading = ParticulateReading.parse(payload, receivedAt: time) else {
                    return .rejected(.invalidReading)
                }
                if reading.time == time && !retained { reading = monitor.ordered(reading) }
                // A retained replay of a reading the hub has: no news.
                guard monitor.isNew(reading) else { return .unchanged }
                let level = monitor.level(reading)
                let alert = monitor.add(reading)
                tracked.air = monitor
                var events: [SensorEvent] = []
                func change(_ kind: SensorEvent.Kind) -> SensorEvent {
                    SensorEvent(
                        id: tracked.nextEventID(), kind: kind, sensor: tracked.name, topic: topic, oldStatus: old,
                        newStatus: level, time: time)
                }
                if tracked.isOffline {
                    tracked.isOffline = false
                    tracked.statusBeforeOffline = nil
                    events.append(change(.recovered))
                } else if level != old {
                    events.append(change(.changed))
                }
                tracked.status = level
                tracked.lastUpdated = time
                // The reading's values as attributes, the alert among the sensor's alerts: one shape for every
                // consumer of a sensor's state (the API, Home Assistant's configs read `attributes.pm25`).
                tracked.attributes = SensorAttributes(
                    [("pm25", reading.pm25), ("pm10", reading.pm10)].compactMap { name, value in
                        value.map { SensorAttributes.Attribute(name: name, value: .number($0)) }
                    })
                Self.follow(monitor, in: &tracked)
                dirty.insert(topic)
                if let alert { events.append(airEvent(alert, &tracked, topic: topic, time: time)) }
                return .reading(.particulate(reading), sensor: tracked.name, events: events)
            }
            if readsDevice {
                return device(&tracked, topic: topic, payload: status, retained: retained, time: time)
            }
            if tracked.isOffline {
                // The broker replaying, on a (re)subscription, the status the sensor had before it went silent or
                // offline is no sign of life: no recovery, no last-updated time, the silence stands. (A status the
                // sensor publishes while hubd is away comes live too, queued for hubd's session.)
                if retained && status == tracked.statusBeforeOffline { return .unchanged }
                tracked.isOffline = false
                tracked.statusBeforeOffline = nil
                tracked.status = status
                tracked.lastUpdated = time
                dirty.insert(topic)
                return event(.recovered, status)
            }
            guard status != old else {
                if !retained { touch(&tracked, topic, time) }
                return .unchanged
            }
            tracked.status = status
            tracked.lastUpdated = time
            dirty.insert(topic)
            return event(.changed, status)
        }
    }

    private mutating func touch(_ tracked: inout Tracked, _ topic: String, _ time: Timestamp) {
        tracked.lastUpdated = time
        dirty.insert(topic)
    }

    // MARK: Silence

    mutating func armSilence(_ topic: String, from now: ContinuousClock.Instant) {
        guard var tracked = sensors[topic] else { return }
        if let timeout = tracked.silenceTimeout ?? defaultSilenceTimeout, !tracked.isOffline {
            let deadline = now + timeout
            tracked.silenceDeadline = deadline
            deadlines.insert(Deadline(instant: deadline, topic: topic))
        } else {
            tracked.silenceDeadline = nil
        }
        sensors[topic] = tracked
    }

    /// The next moment a sensor may go silent, to sleep until.
    public var nextSilenceDeadline: ContinuousClock.Instant? { deadlines.min?.instant }

    /// Marks `offline` every sensor whose silence deadline has passed, and returns the events.
    public mutating func checkSilence(now: ContinuousClock.Instant, time: Timestamp) -> [SensorEvent] {
        var events: [SensorEvent] = []
        while let next = deadlines.min, next.instant <= now {
            deadlines.removeMin()
            // Deadlines are not removed when bumped: only the sensor's current one counts.
            guard sensors[next.topic]?.silenceDeadline == next.instant, let event = goSilent(next.topic, time: time)
            else { continue }
            events.append(event)
        }
        events += tickThresholds(time: time)
        events += endIdleSessions(time: time)
        compactDeadlines()
        return events
    }

    /// Marks a sensor offline for its silence; nil when it is offline already.
    mutating func goSilent(_ topic: String, time: Timestamp) -> SensorEvent? {
        guard var tracked = sensors[topic], !tracked.isOffline else { return nil }
        let old = tracked.status
        tracked.isOffline = true
        tracked.offlineByAnnouncement = false
        tracked.cancelPendingThresholds()
        tracked.statusBeforeOffline = old
        tracked.status = Self.offline
        tracked.silenceDeadline = nil
        let id = tracked.nextEventID()
        sensors[topic] = tracked
        dirty.insert(topic)
        return SensorEvent(
            id: id, kind: .silent, sensor: tracked.name, topic: topic, oldStatus: old, newStatus: Self.offline,
            time: time)
    }

    /// The sensors whose silence deadline has passed, taken off the deadlines (`goSilent` each, or arm it again).
    mutating func takeDueSilences(now: ContinuousClock.Instant) -> [String] {
        var due: [String] = []
        while let next = deadlines.min, next.instant <= now {
            deadlines.removeMin()
            guard let tracked = sensors[next.topic], tracked.silenceDeadline == next.instant, !tracked.isOffline
            else { continue }
            due.append(next.topic)
        }
        compactDeadlines()
        return due
    }

    /// Superseded deadlines pile up under a flood of messages; rebuilds the heap when most of it is stale.
    mutating func compactDeadlines() {
        if deadlines.count > 4 * max(sensors.count, 16) {
            deadlines = Heap(
                sensors.compactMap { topic, tracked in
                    tracked.silenceDeadline.map { Deadline(instant: $0, topic: topic) }
                })
        }
    }

    // MARK: Writing back

    /// What changed since the last call, for the journal: each changed sensor's status with `events` (those the
    /// change caused).
    public mutating func takeRecords(events: [SensorEvent]) -> [JournalRecord] {
        guard !dirty.isEmpty else { return [] }
        defer { dirty.removeAll(keepingCapacity: true) }
        return dirty.compactMap { topic in
            sensors[topic].map {
                JournalRecord(
                    topic: topic, sensorID: $0.id, status: $0.status, lastUpdated: $0.lastUpdated,
                    sequence: $0.sequence, events: events.filter { $0.topic == topic }, attributes: $0.attributes,
                    alerts: $0.alerts, statusBeforeOffline: $0.isOffline ? $0.statusBeforeOffline : nil,
                    session: $0.session)
            }
        }
    }
}
