/// A limit on a value: above and/or below a line, with hysteresis, a time the breach must hold, and a least interval
/// between alerts. The one rule behind every alert the hub raises on a value — the air-quality alert and the
/// configured `thresholds:` alike.
public struct ThresholdLimit: Sendable, Hashable {
    /// A value above this is a breach.
    public var above: Double?
    /// A value below this is a breach.
    public var below: Double?
    /// How far back past the line a value must come to clear the alert, so a value hovering at the line can't flap.
    public var hysteresis: Double
    /// How long a breach must last before it alerts (`for: 5m`); `nil`: at once.
    public var holdFor: Duration?
    /// At most one alert in this long; a breach still there when it is over alerts then.
    public var minimumInterval: Duration?

    public init(
        above: Double? = nil, below: Double? = nil, hysteresis: Double = 0, holdFor: Duration? = nil,
        minimumInterval: Duration? = nil
    ) {
        self.above = above
        self.below = below
        self.hysteresis = hysteresis
        self.holdFor = holdFor
        self.minimumInterval = minimumInterval
    }

    /// Whether `value` is past the line.
    public func breached(by value: Double) -> Bool {
        (above.map { value > $0 } ?? false) || (below.map { value < $0 } ?? false)
    }

    /// Whether `value` is back far enough to clear an alert.
    public func cleared(by value: Double) -> Bool {
        (above.map { value < $0 - hysteresis } ?? true) && (below.map { value > $0 + hysteresis } ?? true)
    }

    /// "above 30", "below 18", "outside 18 to 30", with `format` for the numbers.
    public func describe(_ format: (Double) -> String) -> String {
        switch (above, below) {
        case (let high?, let low?): "outside \(format(low)) to \(format(high))"
        case (let high?, nil): "above \(format(high))"
        case (nil, let low?): "below \(format(low))"
        case (nil, nil): "anywhere"
        }
    }
}

/// One watched value against a limit: fires once when it crosses (and has held for long enough), once when it is
/// back. A value type with no clock of its own: times are the readings' (milliseconds since 1970).
public struct ThresholdWatch: Sendable, Hashable {
    public let limit: ThresholdLimit
    public private(set) var alerting: Bool
    /// When the current breach began, while it has not alerted yet.
    public private(set) var breachSince: Int64?
    private var lastAlert: Int64?
    /// The last value seen, reported by a held breach that fires on a tick.
    public private(set) var lastValue: Double?

    public init(limit: ThresholdLimit, alerting: Bool = false) {
        self.limit = limit
        self.alerting = alerting
    }

    /// A crossing: the alert raised, or cleared, at `value`.
    public enum Crossing: Sendable, Hashable {
        case raised(Double)
        case cleared(Double)
    }

    /// Takes a value seen at `time`.
    public mutating func observe(_ value: Double, at time: Int64) -> Crossing? {
        lastValue = value
        if alerting {
            guard limit.cleared(by: value) else { return nil }
            alerting = false
            breachSince = nil
            return .cleared(value)
        }
        guard limit.breached(by: value) else {
            breachSince = nil
            return nil
        }
        if breachSince == nil { breachSince = time }
        return fireIfDue(at: time)
    }

    /// A breach that has now held long enough alerts, even with no new value (a sensor reporting every 5 minutes,
    /// a `for: 2m`).
    public mutating func tick(at time: Int64) -> Crossing? {
        guard !alerting, breachSince != nil else { return nil }
        return fireIfDue(at: time)
    }

    /// Forgets a breach still waiting to alert (the value is no longer known: its sensor went offline).
    public mutating func cancelPending() { breachSince = nil }

    /// Whether a breach waits to alert (for its holding time or the least interval).
    public var isPending: Bool { !alerting && breachSince != nil }

    private mutating func fireIfDue(at time: Int64) -> Crossing? {
        guard let since = breachSince, let value = lastValue else { return nil }
        if let hold = limit.holdFor, time - since < hold.milliseconds { return nil }
        if let interval = limit.minimumInterval, let lastAlert, time - lastAlert < interval.milliseconds { return nil }
        alerting = true
        breachSince = nil
        lastAlert = time
        return .raised(value)
    }
}

extension Duration {
    /// The duration in whole milliseconds.
    public var milliseconds: Int64 { components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000 }
}
