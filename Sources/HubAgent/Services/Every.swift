import HubSupport
import ServiceLifecycle

/// Runs `action` every `interval` until cancelled (a service wraps its timers in `cancelWhenGracefulShutdown`).
///
/// With `resting`, the wait after a run is also at least `resting` times as long as the run took, so work whose cost
/// grows with the data (a flush of the whole registry) takes at most about 1/(resting + 1) of a core, however large
/// the data grows.
func every(_ interval: Duration, resting: Int = 0, _ action: @Sendable () async -> Void) async {
    await repeating(interval, resting: resting, after: {}, action)
}

/// Runs `action` once `bell` has rung, `interval` after the ring (so what comes meanwhile is taken too), and again
/// after each later ring, at most once every `interval` (`resting` as for `every`): a service whose work comes in
/// bursts sleeps between them, where `every` woke it each interval to find nothing (issue 38's idle goal).
func whenRung(_ bell: Doorbell, every interval: Duration, resting: Int = 0, _ action: @Sendable () async -> Void)
    async
{
    await repeating(interval, resting: resting, after: { await bell.wait(until: nil) }, action)
}

/// Until cancelled: `wait`, then a pause of `interval` (or `resting` times the last run), then `action`.
private func repeating(
    _ interval: Duration, resting: Int, after wait: () async -> Void, _ action: @Sendable () async -> Void
) async {
    var pause = interval
    while !Task.isCancelled && !Task.isShuttingDownGracefully {
        await wait()
        do {
            try await Task.sleep(for: pause)
        } catch {
            return
        }
        let took = await ContinuousClock().measure { await action() }
        pause = max(interval, took * resting)
    }
}
