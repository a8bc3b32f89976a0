import HubCore

extension SensorTracker.Tracked {
    /// The id of the sensor's next event, which it counts.
    mutating func nextEventID() -> String {
        sequence += 1
        return SensorEvent.id(sensor: id, sequence: sequence)
    }
}

extension SensorTracker.Outcome {
    /// The events the message caused.
    public var events: [SensorEvent] {
        switch self {
        case .event(let event): [event]
        case .reading(_, _, let events), .events(let events): events
        case .unchanged, .rejected: []
        }
    }
}

extension SensorTracker.Outcome {
    /// The reading the message gave, if it gave one.
    public var reading: SensorReading? {
        guard case .reading(let reading, _, _) = self else { return nil }
        return reading
    }
}

extension String {
    /// Without leading and trailing white space and line breaks.
    var trimmingWhitespace: String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
            let last = scalars.lastIndex(where: { !$0.properties.isWhitespace })
        else { return "" }
        return String(scalars[first...last])
    }
}
