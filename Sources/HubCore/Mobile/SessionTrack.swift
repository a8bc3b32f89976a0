import Foundation

/// One reading of a session as the history gives it back, in time order: where and when, and what it measured.
public struct TrackPoint: Sendable, Hashable {
    public var time: Timestamp
    public var position: GeoFix?
    public var pm25: Double?
    public var pm10: Double?
    /// A numeric sensor's value.
    public var value: Double?

    public init(time: Timestamp, position: GeoFix?, pm25: Double? = nil, pm10: Double? = nil, value: Double? = nil) {
        self.time = time
        self.position = position
        self.pm25 = pm25
        self.pm10 = pm10
        self.value = value
    }
}

/// A recording session as the history knows it: from its `session` events, with its readings counted.
public struct SessionSummary: Sendable, Hashable {
    /// The id of the event that started it; for a fixed sensor's one open-ended session, `fixed:<sensor>`.
    public var id: String
    public var sensor: String
    public var started: Timestamp
    /// `nil` while it is open.
    public var ended: Timestamp?
    public var readings: Int

    public init(id: String, sensor: String, started: Timestamp, ended: Timestamp?, readings: Int) {
        self.id = id
        self.sensor = sensor
        self.started = started
        self.ended = ended
        self.readings = readings
    }

    /// The id a fixed sensor's open-ended session goes by.
    public static func fixedID(of sensor: String) -> String { "fixed:" + sensor }

    /// The sensor whose open-ended session `id` names, if it names one.
    public static func fixedSensor(in id: String) -> String? {
        id.hasPrefix("fixed:") ? String(id.dropFirst(6)) : nil
    }
}

/// What a session's readings add up to: how long and how far, the spread of what it measured, and how long it
/// was above the WHO guideline. A pure function of the points, so it is tested without a history.
public struct SessionStatistics: Sendable, Hashable {
    /// Readings, and those with a position.
    public var count: Int
    public var positioned: Int
    /// From the first reading to the last.
    public var duration: Duration
    /// Metres along the positions in time order (great-circle between consecutive fixes).
    public var distance: Double
    public var pm25: Spread?
    public var pm10: Spread?
    public var value: Spread?
    /// Time with PM2.5 above `guideline`: each reading counts until the next one, for at most `longestStep`, so a
    /// pause in the recording is not counted as exposure.
    public var aboveGuideline: Duration
    /// µg/m³: the WHO 2021 24-hour guideline for PM2.5.
    public var guideline: Double

    /// The longest a single reading stands for.
    public static let longestStep = Duration.seconds(300)

    public init(_ points: [TrackPoint], guideline: Double = WHOGuideline.guideline(.pm25, .day)) {
        self.guideline = guideline
        count = points.count
        positioned = points.count { $0.position != nil }
        duration = points.first.flatMap { first in points.last.map { first.time.distance(to: $0.time) } } ?? .zero
        var distance = 0.0
        var previous: GeoPoint?
        for point in points {
            guard let here = point.position?.point else { continue }
            if let previous { distance += Geodesy.distance(previous, here) }
            previous = here
        }
        self.distance = distance
        func spread(_ values: [Double]) -> Spread? {
            guard let low = values.min(), let high = values.max() else { return nil }
            return Spread(min: low, mean: values.reduce(0, +) / Double(values.count), max: high)
        }
        pm25 = spread(points.compactMap(\.pm25))
        pm10 = spread(points.compactMap(\.pm10))
        value = spread(points.compactMap(\.value))
        var above = Duration.zero
        for (point, next) in zip(points, points.dropFirst()) {
            guard let pm25 = point.pm25, pm25 > guideline else { continue }
            above += min(point.time.distance(to: next.time), Self.longestStep)
        }
        aboveGuideline = above
    }
}

/// Min, mean and max of some values (a session's, a period's in the history).
public struct Spread: Sendable, Hashable {
    public var min: Double
    public var mean: Double
    public var max: Double

    public init(min: Double, mean: Double, max: Double) {
        self.min = min
        self.mean = mean
        self.max = max
    }
}
