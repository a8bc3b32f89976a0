import CMosquitto
import Foundation

// Between connections: the back-off, waited out while publishes' deadlines are kept, and the next attempt.
extension ClientCore {
    /// Waits out a reconnect back-off, or until a stop, expiring the publishes whose deadlines pass meanwhile.
    func waitOut(_ delay: Duration) {
        let end = ContinuousClock.now + delay
        while !stopRequested.load(ordering: .acquiring) {
            let until = min(end, deadlines.earliest ?? end)
            let woken = wakeup.wait(timeout: .now() + ContinuousClock.now.duration(to: until).timeInterval)
            deadlines.expire()
            if woken == .success || ContinuousClock.now >= end { return }
        }
    }

    /// Starts the next connection attempt; a failure to start it is the next pass's reason.
    func reconnect(_ m: OpaquePointer) {
        let rc = mosquitto_reconnect_async(m)
        if rc != MOSQ_ERR_SUCCESS.rawValue {
            let reason = reasonText(rc: rc, errno: errno)
            state.withLock {
                $0.lastFailureReason = reason
                $0.lastFailureWasConnected = false
            }
        }
    }

    /// Exponential back-off between the configured bounds, with ±20 % jitter so many clients don't stampede.
    func backoff(attempt: Int) -> Duration {
        let low = configuration.reconnectDelay.lowerBound
        let high = configuration.reconnectDelay.upperBound
        let doublings = min(attempt - 1, 30)
        let base = min(high, low * Double(1 << doublings))
        return min(high, base * Double.random(in: 0.8...1.2))
    }
}
