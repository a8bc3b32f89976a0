import HubRemote
import Testing

/// The holder's own view of a lease: granted from the time the renewal was sent, ended early by the margin, by a
/// refusal or by a release, and never extended by a renewal that got no answer.
@Suite struct LeaseStateTests {
    let start = ContinuousClock.now

    @Test func aGrantHoldsUntilTheLeaseLessTheMargin() {
        var state = LeaseState(lease: .seconds(15))
        #expect(!state.isHeld(at: start))
        state.renewed(sentAt: start, epoch: 1)
        #expect(state.epoch == 1 && state.margin == .seconds(3))
        #expect(state.isHeld(at: start + .seconds(11)))
        #expect(!state.isHeld(at: start + .seconds(12)))
    }

    @Test func renewalsExtendFromWhenTheyWereSent() {
        var state = LeaseState(lease: .seconds(15))
        state.renewed(sentAt: start, epoch: 1)
        // Sent at 5 s, answered at 9 s: good until 5 + 12 = 17 s, not 21 s.
        state.renewed(sentAt: start + .seconds(5), epoch: 1)
        #expect(state.isHeld(at: start + .seconds(16)) && !state.isHeld(at: start + .seconds(17)))
    }

    @Test func aRefusalOrAReleaseEndsItAtOnce() {
        var state = LeaseState(lease: .seconds(15))
        state.renewed(sentAt: start, epoch: 3)
        state.renewed(sentAt: start + .seconds(1), epoch: nil)
        #expect(!state.isHeld(at: start + .seconds(1)) && state.epoch == nil)
        state.renewed(sentAt: start + .seconds(2), epoch: 4)
        state.release()
        #expect(!state.isHeld(at: start + .seconds(2)))
    }
}
