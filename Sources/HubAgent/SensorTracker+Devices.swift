import Foundation
import HubCore

// What the tracker does with devices that publish JSON or numbers, and with their availability topics.
extension SensorTracker {
    /// A payload of a sensor with a value format or a numeric kind: its value becomes the status, its other fields
    /// the attributes. A numeric sensor's new value is a reading, not an event; a status sensor's new value is one, and
    /// so is a numeric sensor's new band (its value, with its unit, the event's `value`).
    mutating func device(
        _ tracked: inout Tracked, topic: String, payload: String, retained: Bool, time: Timestamp
    ) -> Outcome {
        let decoded: ValueFormat.Decoded
        switch tracked.format.decode(payload, numeric: tracked.kind == .numeric) {
        case .failure(let problem): return .rejected(Rejection(problem))
        case .success(let value): decoded = value
        }
        if decoded.status.isEmpty { return .rejected(.empty) }
        // A numeric mobile sensor's position is among its payload's other fields.
        var position: GeoFix?
        if tracked.kind == .numeric {
            switch GeoFix.read(from: decoded.attributes) {
            case .success(let fix)?: position = fix
            case .failure?: return .rejected(.invalidPosition)
            case nil: break
            }
        }
        if decoded.status.utf8.count > maximumStatusLength && decoded.status.count > maximumStatusLength {
            return .rejected(.tooLong)
        }
        // An offline device's retained state, replayed on subscribing, is no sign of life: its availability topic
        // says when it is back, and then with this state.
        if retained && tracked.isOffline && tracked.availability != nil {
            tracked.statusBeforeOffline = decoded.status
            tracked.attributes = decoded.attributes
            return .unchanged
        }
        // Nor is a replay of the state it had before it went silent.
        if retained && tracked.isOffline && decoded.status == tracked.statusBeforeOffline
            && decoded.attributes == tracked.attributes
        {
            return .unchanged
        }
        let old = tracked.status
        // A retained replay of what the hub has is no news; a live repeat is (the sensor is alive; a numeric
        // sensor's chart gets the point).
        if retained && !tracked.isOffline && decoded.status == old && decoded.attributes == tracked.attributes {
            return .unchanged
        }
        // A reading that says which instant it is for is a repeat when the hub has that instant's already, retained
        // or not: a source that crashed between publishing it and remembering so (a feed's ledger) publishes it
        // again after the restart, and that must not make a second point in the history.
        if tracked.kind == .numeric && !tracked.isOffline, let instant = decoded.attributes.readingTime,
            instant == tracked.attributes.readingTime
        {
            return .unchanged
        }
        var events: [SensorEvent] = []
        let format = tracked.format
        let value = decoded.number.flatMap { format.bands == nil ? nil : format.withUnit(format.format($0)) }
        func change(_ kind: SensorEvent.Kind) {
            events.append(
                SensorEvent(
                    id: tracked.nextEventID(), kind: kind, sensor: tracked.name, topic: topic, oldStatus: old,
                    newStatus: decoded.status, time: time, value: value))
        }
        if tracked.isOffline {
            tracked.isOffline = false
            tracked.statusBeforeOffline = nil
            change(.recovered)
        } else if (tracked.kind != .numeric || format.bands != nil) && decoded.status != old {
            change(.changed)
        }
        tracked.status = decoded.status
        tracked.attributes = decoded.attributes
        tracked.lastUpdated = time
        dirty.insert(topic)
        if !thresholds.isEmpty {
            events += checkThresholds(&tracked, topic: topic, number: decoded.number, time: time)
        }
        if tracked.kind == .numeric, let number = decoded.number {
            return .reading(
                .numeric(number, unit: tracked.format.unit, time: time, position: position), sensor: tracked.name,
                events: events)
        }
        switch events.count {
        case 0: return .unchanged
        case 1: return .event(events[0])
        default: return .events(events)
        }
    }

    /// What a device says on its availability topic, for each of its sensors: `offline` marks them offline at once;
    /// `online` brings back those that were.
    mutating func availability(
        _ payload: [UInt8], of topics: [String], retained: Bool, time: Timestamp, now: ContinuousClock.Instant
    ) -> Outcome {
        guard let online = Self.isOnline(payload) else { return .rejected(.invalidAvailability) }
        var events: [SensorEvent] = []
        for topic in topics {
            guard var tracked = sensors[topic], tracked.isOffline == online else { continue }
            // A replayed `online` is no news for a sensor that went silent; and with no status to show (offline
            // since before the hub started), the device's next state brings the sensor back instead.
            if online && ((retained && !tracked.offlineByAnnouncement) || tracked.statusBeforeOffline == nil) {
                continue
            }
            let old = tracked.status
            tracked.offlineByAnnouncement = !online
            tracked.cancelPendingThresholds()
            if online {
                tracked.isOffline = false
                tracked.status = tracked.statusBeforeOffline ?? Sensor.waiting
                tracked.statusBeforeOffline = nil
            } else {
                tracked.isOffline = true
                tracked.statusBeforeOffline = old
                tracked.status = Self.offline
                tracked.silenceDeadline = nil
            }
            tracked.lastUpdated = time
            let event = SensorEvent(
                id: tracked.nextEventID(), kind: online ? .recovered : .offline, sensor: tracked.name, topic: topic,
                oldStatus: old, newStatus: tracked.status, time: time)
            events.append(event)
            sensors[topic] = tracked
            dirty.insert(topic)
            if online { armSilence(topic, from: now) }
        }
        return events.isEmpty ? .unchanged : .events(events)
    }

    /// `online`/`offline` (any case: Tasmota's `Online`), `true`/`false` (Shelly), or Zigbee2MQTT's
    /// `{"state":"online"}`; `nil` for anything else.
    static func isOnline(_ payload: [UInt8]) -> Bool? {
        guard payload.count <= 1024, let text = String(validating: payload, as: UTF8.self) else { return nil }
        switch text.trimmingCharacters(in: .whitespacesAndNewlines).lowercased() {
        case "online", "true": return true
        case "offline", "false": return false
        default:
            guard case .string(let state)? = (try? JSONTree.parse(payload))?["state"] else { return nil }
            return isOnline(Array(state.utf8))
        }
    }

    /// Rebuilds which sensors each availability topic speaks for, after the sensors changed; adds the topics to
    /// subscribe to and to leave.
    mutating func followAvailability(_ delta: inout Delta) {
        var index: [String: [String]] = [:]
        for (topic, tracked) in sensors {
            if let availability = tracked.availability { index[availability, default: []].append(topic) }
        }
        // In the order of their topics, so one announcement's events come in the same order every time.
        for topic in index.keys { index[topic]?.sort() }
        // Subscribed until now: the availability topics, and the topics of the sensors just removed.
        let removed = Set(delta.unsubscribe)
        // A new sensor on a topic already followed for its availability: subscribed already.
        delta.subscribe.removeAll { availabilityTopics[$0] != nil }
        for topic in index.keys
        where sensors[topic] == nil && availabilityTopics[topic] == nil && !removed.contains(topic) {
            delta.subscribe.append(topic)
        }
        for topic in availabilityTopics.keys
        where index[topic] == nil && sensors[topic] == nil && !removed.contains(topic) {
            delta.unsubscribe.append(topic)
        }
        // A sensor removed whose topic is still some device's availability: stay subscribed.
        delta.unsubscribe.removeAll { index[$0] != nil }
        availabilityTopics = index
    }
}

extension SensorTracker.Outcome {
    /// This outcome with the events of what the same message said as an availability topic.
    func adding(_ availability: Self) -> Self {
        let more = availability.events
        guard !more.isEmpty else { return self }
        switch self {
        case .event(let event): return .events([event] + more)
        case .events(let events): return .events(events + more)
        case .reading(let reading, let sensor, let events):
            return .reading(reading, sensor: sensor, events: events + more)
        case .unchanged, .rejected: return .events(more)
        }
    }
}
