import HubCore
import HubSupport
import Testing

@Suite struct LogThrottleTests {
    /// The first at once, then quiet within the interval, then one line carrying everything since the last.
    @Test func reportsTheFirstThenTheCountOncePerInterval() {
        var throttle = LogThrottle(every: .seconds(10))
        let start = ContinuousClock.now
        #expect(throttle.note(now: start) == 1)
        #expect(throttle.note(now: start + .seconds(1)) == nil)
        #expect(throttle.note(5, now: start + .seconds(9)) == nil)
        #expect(throttle.note(now: start + .seconds(10)) == 7)
        #expect(throttle.note(now: start + .seconds(15)) == nil)
        #expect(throttle.note(2, now: start + .seconds(25)) == 3)
    }
}
