import Testing

@testable import HubAgent

/// `FloodWatch`: when the subscriptions service takes a burst of live messages for a flood that may have overflowed
/// the broker's queue for hubd (`max_queued_messages`), and when it does not.
struct FloodWatchTests {
    let start = ContinuousClock.now

    /// `watch.rang`, outside `#expect` (which can't take a mutating call).
    func ring(_ watch: inout FloodWatch, _ count: Int, at instant: ContinuousClock.Instant) -> Bool {
        watch.rang(count: count, at: instant)
    }

    /// 500 messages within 50 s: a flood; the first ring alone is not one.
    @Test func fiveHundredWithinTheWindowAreAFlood() {
        var watch = FloodWatch()
        #expect(!ring(&watch, 500, at: start))
        #expect(ring(&watch, 1000, at: start + .seconds(3)))
        // Answered: the next ring starts counting afresh.
        watch.reset()
        #expect(!ring(&watch, 1500, at: start + .seconds(4)))
        #expect(ring(&watch, 2000, at: start + .seconds(54)))
    }

    /// A home's 4 statuses a second ring every 125 s: never a flood, however long they run.
    @Test func aTrickleIsNeverAFlood() {
        var watch = FloodWatch()
        for step in 1...100 {
            #expect(!ring(&watch, step * 500, at: start + .seconds(125 * step)))
        }
    }

    /// A second is quiet below a flood's rate (10 a second): a home's trickle is, a flood's tail at that rate is not.
    @Test func aSecondBelowAFloodsRateIsQuiet() {
        #expect(FloodWatch.isQuiet(0))
        #expect(FloodWatch.isQuiet(4))
        #expect(FloodWatch.isQuiet(9))
        #expect(!FloodWatch.isQuiet(10))
        #expect(!FloodWatch.isQuiet(500))
    }

    /// Rings faster than the watch wakes are one wake: the step reached counts, not the messages counted.
    @Test func ringsTakenTogetherCountTheStepsReached() {
        var watch = FloodWatch()
        #expect(!ring(&watch, 730, at: start))
        // The same step again (a ring left from before the watch waited): nothing new.
        #expect(!ring(&watch, 990, at: start + .seconds(1)))
        #expect(ring(&watch, 1001, at: start + .seconds(2)))
    }
}
