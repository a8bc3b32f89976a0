import HubSupport
import Testing

/// `Doorbell`: a ring with nobody waiting is kept for the next wait, which then returns at once, deadline or not;
/// without one, a wait ends at its deadline or at the next ring.
struct DoorbellTests {
    @Test func aRingKeptForTheNextWaitEndsItAtOnce() async {
        let bell = Doorbell()
        bell.ring()
        let clock = ContinuousClock()
        let waited = await clock.measure { await bell.wait(until: .now + .seconds(30)) }
        #expect(waited < .seconds(5), "\(waited)")
        // The ring was taken: the next wait lasts until its deadline.
        let next = await clock.measure { await bell.wait(until: .now + .milliseconds(200)) }
        #expect(next >= .milliseconds(200), "\(next)")
    }

    @Test func aWaitEndsAtTheNextRing() async {
        let bell = Doorbell()
        let ringer = Task {
            try? await Task.sleep(for: .milliseconds(100))
            bell.ring()
        }
        let clock = ContinuousClock()
        let waited = await clock.measure { await bell.wait(until: .now + .seconds(30)) }
        #expect(waited < .seconds(10), "\(waited)")
        await ringer.value
    }
}
