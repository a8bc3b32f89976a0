import Foundation
import HubSupport

/// A source's work done by one agent of a cluster: the SDS011, a feed, the UV index. Outside a cluster (no keeper)
/// the work simply runs. In one, it runs while this agent holds the source's duty, is cancelled when the duty goes
/// (another agent's then), and starts again when it comes back: an agent that dies hands its sources on within the
/// lease plus a renewal, as its other duties.
struct DutyGate: Sendable {
    let keeper: LeaseKeeper?
    let duty: LeaseKeeper.Duty
    /// How often whether the duty is held is looked at (a lease is renewed every few seconds).
    var checks: Duration = .milliseconds(250)

    /// Runs `work` while the duty is held, until cancelled. Work that ends on its own (a sensor it could not
    /// register) is started again only after the duty has gone and come back.
    func run(_ work: @escaping @Sendable () async -> Void) async {
        guard let keeper else { return await work() }
        while !Task.isCancelled {
            guard await wait(until: true, keeper) else { return }
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await work() }
                group.addTask { _ = await wait(until: false, keeper) }
                await group.next()
                group.cancelAll()
            }
            guard await wait(until: false, keeper) else { return }
        }
    }

    /// Waits until holding the duty is `held`; false when cancelled first.
    private func wait(until held: Bool, _ keeper: LeaseKeeper) async -> Bool {
        while keeper.holds(duty) != held {
            guard (try? await Task.sleep(for: checks)) != nil else { return false }
        }
        return !Task.isCancelled
    }
}
