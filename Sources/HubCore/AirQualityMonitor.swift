import DequeModule

/// How the hub judges particulate readings: the status it shows, and when it raises an alert.
public struct AirQualityPolicy: Sendable, Hashable {
    /// The status a particulate sensor shows.
    public enum Scale: String, Sendable, Hashable, CaseIterable {
        /// The US EPA AQI category of the reading: Good, Moderate, … Hazardous.
        case aqi
        /// The original monitor's light: green, yellow, red.
        case light
    }

    /// What the alert watches: a pollutant, instantaneous or as a rolling mean.
    public struct Metric: Sendable, Hashable, CustomStringConvertible {
        public var pollutant: Pollutant
        /// `nil`: each reading as it comes.
        public var window: Duration?

        public init(_ pollutant: Pollutant, window: Duration?) {
            self.pollutant = pollutant
            self.window = window
        }

        /// `pm25_24h`, `pm25_1h`, `pm25`, `pm10_24h`, `pm10_1h`, `pm10`.
        public init?(_ text: String) {
            let parts = text.lowercased().split(separator: "_")
            guard let first = parts.first, parts.count <= 2 else { return nil }
            switch first {
            case "pm25", "pm2.5": pollutant = .pm25
            case "pm10": pollutant = .pm10
            default: return nil
            }
            switch parts.count == 2 ? String(parts[1]) : "" {
            case "": window = nil
            case "1h": window = .seconds(3600)
            case "24h": window = .seconds(86_400)
            default: return nil
            }
        }

        public var description: String {
            let name = pollutant == .pm25 ? "pm25" : "pm10"
            switch window {
            case nil: return name
            case .seconds(3600)?: return name + "_1h"
            default: return name + "_24h"
            }
        }

        /// "(24 h mean)", "(1 h mean)" or nothing.
        var label: String {
            switch window {
            case nil: return ""
            case .seconds(3600)?: return " (1 h mean)"
            default: return " (24 h mean)"
            }
        }
    }

    /// The alert's name among a sensor's alerts (`Sensor.alerts`), beside the configured thresholds'.
    public static let alertName = "air quality"

    public var scale = Scale.aqi
    /// Default: the WHO 24-hour guideline for PM2.5 on the 24-hour mean.
    public var metric = Metric(.pm25, window: .seconds(86_400))
    public var threshold: Double = 15
    /// The alert clears below threshold × (1 − hysteresis), so a value hovering at the line can't flap.
    public var hysteresis: Double = 0.1
    /// At most one alert in this long (the original let one through every 20 minutes).
    public var minimumInterval: Duration = .seconds(1200)

    public init() {}

    /// The alert's limit: above the threshold, cleared below threshold × (1 − hysteresis), at most one alert per
    /// minimum interval (a breach still there when the interval is over alerts then).
    var limit: ThresholdLimit {
        ThresholdLimit(above: threshold, hysteresis: threshold * hysteresis, minimumInterval: minimumInterval)
    }

    /// How the threshold reads in a message: "the WHO guideline of 15", else "the threshold of 12".
    var thresholdName: String {
        let averaging: WHOGuideline.Averaging = metric.window == .seconds(86_400) ? .day : .year
        let who = metric.window == .seconds(3600) ? nil : WHOGuideline.name(of: threshold, metric.pollutant, averaging)
        return who ?? "the threshold of \(ParticulateReading.trim(threshold))"
    }
}

/// One particulate sensor's recent readings, its status level, and its alert state.
public struct AirQualityMonitor: Sendable {
    public let policy: AirQualityPolicy
    /// The last 24 hours of readings, oldest first.
    private var samples = Deque<(time: Int64, pm25: Double?, pm10: Double?)>()
    /// Their sums, kept as readings come and go, so the 24 h mean costs nothing per reading (at one reading a
    /// second there are 86,400). In thousandths, as integers: a year of adding and taking away doesn't drift.
    private var day = (pm25: RunningSum(), pm10: RunningSum())
    /// The alert: the hub's one threshold mechanism, on the policy's metric.
    private var watch: ThresholdWatch
    public var alerting: Bool { watch.alerting }

    /// Takes `alerting` as the alert's state (a cluster's row, where another agent raised or cleared it): the
    /// watch starts again from it.
    public mutating func take(alerting: Bool) {
        guard alerting != watch.alerting else { return }
        watch = ThresholdWatch(limit: policy.limit, alerting: alerting)
    }

    public init(policy: AirQualityPolicy) {
        self.policy = policy
        watch = ThresholdWatch(limit: policy.limit)
    }

    /// An alert raised or cleared.
    public struct Alert: Sendable, Hashable {
        public var raised: Bool
        public var value: Double
        public var message: String
    }

    /// The status a reading shows.
    public func level(_ reading: ParticulateReading) -> String {
        switch policy.scale {
        case .aqi:
            guard let index = AQI.index(pm25: reading.pm25, pm10: reading.pm10) else { return "unknown" }
            return AQI.category(index).name
        case .light:
            return AirLight(pm25: reading.pm25, pm10: reading.pm10).rawValue
        }
    }

    /// The mean of `pollutant` over `window` up to the newest reading.
    public func mean(_ pollutant: Pollutant, over window: Duration) -> Double? {
        guard let newest = samples.last?.time else { return nil }
        // The samples are the last 24 hours: their sums answer for that window and any longer one.
        if window >= .seconds(86_400) { return (pollutant == .pm25 ? day.pm25 : day.pm10).mean }
        let start = newest - Int64(window.components.seconds * 1000)
        var sum = RunningSum()
        for sample in samples.reversed() {
            guard sample.time > start else { break }
            sum.add(pollutant == .pm25 ? sample.pm25 : sample.pm10)
        }
        return sum.mean
    }

    /// The newest reading taken.
    public var latest: ParticulateReading? {
        samples.last.map {
            ParticulateReading(pm25: $0.pm25, pm10: $0.pm10, time: Timestamp(millisecondsSince1970: $0.time))
        }
    }

    /// Whether `reading` is newer than the last one taken (a retained replay is not).
    public func isNew(_ reading: ParticulateReading) -> Bool {
        samples.last.map { reading.time.millisecondsSince1970 > $0.time } ?? true
    }

    /// `reading`, which the hub stamped on arrival (its payload gave no time), after the last one taken: a burst
    /// arriving within one millisecond is several readings, not one and repeats, so each is a millisecond after the
    /// one before. A reading that says its own time keeps it, and a repeat of it stays a repeat.
    public func ordered(_ reading: ParticulateReading) -> ParticulateReading {
        guard let last = samples.last?.time, reading.time.millisecondsSince1970 <= last else { return reading }
        var later = reading
        later.time = Timestamp(millisecondsSince1970: last + 1)
        return later
    }

    /// Takes a reading; returns an alert when the watched value crosses the threshold (up: at most one per
    /// minimum interval; down: past the hysteresis).
    public mutating func add(_ reading: ParticulateReading) -> Alert? {
        let time = reading.time.millisecondsSince1970
        samples.append((time, reading.pm25, reading.pm10))
        day.pm25.add(reading.pm25)
        day.pm10.add(reading.pm10)
        while let first = samples.first, first.time <= time - 86_400_000 {
            samples.removeFirst()
            day.pm25.remove(first.pm25)
            day.pm10.remove(first.pm10)
        }
        let metric = policy.metric
        let value: Double?
        if let window = metric.window {
            value = mean(metric.pollutant, over: window)
        } else {
            value = metric.pollutant == .pm25 ? reading.pm25 : reading.pm10
        }
        guard let value else { return nil }
        let shown = "\(metric.pollutant.rawValue) \(ParticulateReading.format(value)) µg/m³\(metric.label)"
        switch watch.observe(value, at: time) {
        case .raised?: return Alert(raised: true, value: value, message: "\(shown) is above \(policy.thresholdName)")
        case .cleared?:
            return Alert(raised: false, value: value, message: "\(shown) is back below \(policy.thresholdName)")
        case nil: return nil
        }
    }
}

/// A sum and a count of values in thousandths (exact, so adding and removing for ever doesn't drift).
struct RunningSum: Sendable {
    private var thousandths: Int64 = 0
    private var count = 0

    mutating func add(_ value: Double?) {
        guard let value, value.isFinite else { return }
        thousandths += Self.scaled(value)
        count += 1
    }

    mutating func remove(_ value: Double?) {
        guard let value, value.isFinite else { return }
        thousandths -= Self.scaled(value)
        count -= 1
    }

    var mean: Double? { count == 0 ? nil : Double(thousandths) / 1000 / Double(count) }

    /// Readings are validated (0 to 10,000 µg/m³); a value out of range is clamped to a million so that neither
    /// the conversion nor a day of sums (86,400 × 10⁹ thousandths) can trap.
    private static func scaled(_ value: Double) -> Int64 {
        Int64(max(-1e9, min(1e9, (value * 1000).rounded())))
    }
}
