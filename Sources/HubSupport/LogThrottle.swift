/// Says when a recurring problem deserves a log line: the first at once, then at most one every `interval`,
/// carrying how many happened since the last line, so a flood of bad input can't flood the log too.
package struct LogThrottle: Sendable {
    package let interval: Duration
    private var unreported = 0
    private var last: ContinuousClock.Instant?

    package init(every interval: Duration = .seconds(10)) {
        self.interval = interval
    }

    /// Counts `count` more; returns the count to report now (since the last line), or `nil` to stay quiet.
    package mutating func note(_ count: Int = 1, now: ContinuousClock.Instant = .now) -> Int? {
        unreported += count
        if let last, now - last < interval { return nil }
        last = now
        defer { unreported = 0 }
        return unreported
    }
}
