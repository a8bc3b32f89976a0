import CMosquitto
import Foundation
import Logging
import Synchronization

/// Acknowledgements held until the application says it has kept the messages.
///
/// libmosquitto queues a QoS 1 message's PUBACK (a QoS 2 message's PUBREC) before it calls back with the message,
/// and `mosquitto_loop` writes it in the same pass: the broker's at-least-once guarantee ends inside the library,
/// and a message an application loses in a crash right after is gone. The network thread runs its own pass instead
/// (`loopPass`), with the calls `mosquitto_loop` makes (poll, `mosquitto_loop_read`, `mosquitto_loop_write`,
/// `mosquitto_loop_misc`); with `MosquittoConfiguration.holdsAcknowledgements` it takes one step between reading
/// and writing: it hands the messages read to the consumer and waits until the consumer has
/// confirmed them (`MosquittoClient.confirm(through:)`), at most `confirmationTimeout`. The acknowledgements then go
/// out. Everything read in one pass is confirmed together, so a consumer that makes messages durable in batches
/// (one `fsync` each) keeps up with any rate. While it waits, the network thread reads nothing, not even the answer
/// to the client's own publish: a consumer must not wait on the same client before it confirms.
final class AcknowledgementGate: @unchecked Sendable {
    private let condition = NSCondition()
    private var confirmed = 0
    private var released = false
    private var nudged = false
    /// Set when another thread queues a packet: while the consumer puts off confirmations, it is what makes them
    /// due at once (the packet waits behind their acknowledgements).
    let packetQueued = Atomic<Bool>(false)

    /// Messages up to `number` (their `MQTTMessage.number`) are kept.
    func confirm(through number: Int) {
        condition.lock()
        if number > confirmed {
            confirmed = number
            condition.broadcast()
        }
        condition.unlock()
    }

    /// The last number confirmed.
    var confirmedNumber: Int {
        condition.lock()
        defer { condition.unlock() }
        return confirmed
    }

    /// Waits until messages up to `number` are confirmed; false when `deadline` came first. A `nudge` meanwhile runs
    /// `flush` (outside the lock) and waits on.
    func wait(for number: Int, until deadline: Date, flush: () -> Void) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while confirmed < number && !released {
            if nudged {
                nudged = false
                condition.unlock()
                flush()
                condition.lock()
                continue
            }
            if !condition.wait(until: deadline) { return confirmed >= number || released }
        }
        return true
    }

    /// Has a wait hand over what is pending again: a consumer on the network thread has just registered, and the
    /// messages the thread waits on are still in the buffer.
    func nudge() {
        condition.lock()
        nudged = true
        condition.broadcast()
        condition.unlock()
    }

    /// Stops every wait: the client is stopping.
    func release() {
        condition.lock()
        released = true
        condition.broadcast()
        condition.unlock()
    }
}

extension ClientCore {
    /// One pass of the network loop, holding acknowledgements when the configuration says so (see
    /// `AcknowledgementGate`); returns what `mosquitto_loop` would.
    ///
    /// Every client runs this pass rather than `mosquitto_loop`, whose `select()` no other thread can wake but by
    /// queueing a packet: a stop would wait for its timeout, so it had to be short (100 ms), and an idle client woke
    /// ten times a second for nothing (issue 38's idle goal). Here the wake descriptor ends the wait for a packet
    /// queued and for a stop alike, and an idle client wakes only for `mosquitto_loop_misc`'s keepalive
    /// (`idleWait`).
    func loopPass(_ m: OpaquePointer) -> Int32 {
        let fd = mosquitto_socket(m)
        guard fd >= 0 else { return MOSQ_ERR_NO_CONN.rawValue }
        // While the consumer puts off its confirmations, nothing is written: the wait is for reading, until they
        // are due.
        var putOff = messageBuffer.confirmationsDue
        if putOff != nil && gate.confirmedNumber >= deliveredHeld.load(ordering: .relaxed) {
            // Confirmed meanwhile (or only messages without acknowledgements were put off).
            messageBuffer.confirmationsAreDue()
            putOff = nil
        }
        // Written in this pass anyway: only a packet queued once confirmations are put off makes them due.
        if putOff == nil { gate.packetQueued.store(false, ordering: .relaxed) }
        let writes = putOff == nil && mosquitto_want_write(m)
        var fds = [
            pollfd(fd: fd, events: Int16(POLLIN) | (writes ? Int16(POLLOUT) : 0), revents: 0),
            pollfd(fd: wake.descriptor, events: Int16(POLLIN), revents: 0),
        ]
        // The wake descriptor ends the wait when another thread queues a packet (a publish, a subscribe) or asks
        // the client to stop, as libmosquitto's own socket pair does for `mosquitto_loop`.
        // Nor past a publish's deadline (`Deadlines`), expired after the pass.
        var until = deadlines.earliest
        if let putOff, until.map({ putOff < $0 }) ?? true { until = putOff }
        if poll(&fds, 2, min(until.map(Self.milliseconds(until:)) ?? idleWait, idleWait)) < 0 {
            return errno == EINTR ? mosquitto_loop_misc(m) : MOSQ_ERR_ERRNO.rawValue
        }
        if fds[1].revents != 0 { wake.clear() }
        // Writable counts too: a TLS handshake begun before the TCP connection was made (a broker across a network)
        // goes on only in libmosquitto's read, which `mosquitto_loop` calls when the socket turns writable; its
        // write does nothing until the handshake is done, and nothing arrives before the ClientHello is out.
        if fds[0].revents & Int16(POLLIN | POLLERR | POLLHUP | POLLOUT) != 0 {
            // Everything that has arrived, so that one confirmation covers the whole burst.
            var packets = 0
            repeat {
                let rc = mosquitto_loop_read(m, 1)
                if rc != MOSQ_ERR_SUCCESS.rawValue { return rc }
                if mosquitto_socket(m) < 0 { return MOSQ_ERR_NO_CONN.rawValue }
                packets += 1
            } while packets < 1000 && hasUnreadBytes(m)
        }
        // Only QoS 1/2 messages have acknowledgements to hold; confirming one confirms the QoS 0 ones before it.
        let last = deliveredHeld.load(ordering: .relaxed)
        if configuration.holdsAcknowledgements && last > gate.confirmedNumber {
            messageBuffer.flush()
            // A CONNACK in this burst comes first: handling it completes `connect()`, and only then does the consumer
            // take the client's messages (a broker sends what it kept for the session right after the CONNACK).
            // The acknowledgements wait for the next pass.
            if connackArrived.load(ordering: .acquiring) { return MOSQ_ERR_SUCCESS.rawValue }
            if let due = messageBuffer.confirmationsDue, gate.confirmedNumber < last {
                // Read on until they are due, unless a packet of another thread's waits behind the acknowledgements,
                // or the client stops.
                let queued = gate.packetQueued.exchange(false, ordering: .relaxed)
                if .now < due && !queued && !stopRequested.load(ordering: .acquiring) {
                    return mosquitto_loop_misc(m)
                }
                messageBuffer.confirmationsAreDue()
            }
            let deadline = Date(timeIntervalSinceNow: configuration.confirmationTimeout.timeInterval)
            // A consumer that registers meanwhile takes the messages waiting here: what it puts off is due at once
            // (this wait is for its confirmation).
            let handOver = { [messageBuffer] in
                messageBuffer.flush()
                messageBuffer.confirmationsAreDue()
            }
            if !gate.wait(for: last, until: deadline, flush: handOver) { noteUnconfirmed(last) }
            // Released by a stop: what was not confirmed stays unacknowledged, for the session's next connection.
            if configuration.leavesUnconfirmedOnStop && stopRequested.load(ordering: .acquiring)
                && gate.confirmedNumber < last
            {
                return MOSQ_ERR_SUCCESS.rawValue
            }
        }
        if mosquitto_want_write(m) {
            let rc = mosquitto_loop_write(m, 1)
            if rc != MOSQ_ERR_SUCCESS.rawValue { return rc }
        }
        return mosquitto_loop_misc(m)
    }

    /// Milliseconds from now to `instant`, rounded up (a wait that ends early only goes round once more).
    static func milliseconds(until instant: ContinuousClock.Instant) -> Int32 {
        let left = ContinuousClock.now.duration(to: instant)
        guard left > .zero else { return 0 }
        return Int32(clamping: Int((left.timeInterval * 1000).rounded(.up)))
    }

    /// How long the network thread's poll waits with nothing to do, in milliseconds: a quarter of the keepalive in
    /// force (15 s at hubd's 60 s; the broker's, when an MQTT 5 broker set one), at least a second.
    /// `mosquitto_loop` shortens its wait to the moment the next PINGREQ is due, which the library does not tell; a
    /// quarter late at most, a PINGREQ still goes out within 1.25 keepalives of the last packet, inside the 1.5 a
    /// broker allows, and a PINGRESP that never came is noticed that much later. An idle client woke every second
    /// before (issue 38's idle goal).
    var idleWait: Int32 {
        let configured = Int(configuration.keepAlive.components.seconds)
        let told = serverKeepAlive.load(ordering: .relaxed)
        // 0: no Server Keep Alive (or one that turns keepalives off): the configured one, the safe side.
        let inForce = told > 0 ? min(told, configured) : configured
        return Int32(clamping: max(1000, inForce * 1000 / 4))
    }

    /// Whether QoS 1/2 messages were handed over that the consumer has not confirmed (their acknowledgements held).
    var hasUnconfirmedMessages: Bool {
        configuration.holdsAcknowledgements && deliveredHeld.load(ordering: .relaxed) > gate.confirmedNumber
    }

    /// Logs, at most every ten seconds, that acknowledgements went out without the consumer's confirmation.
    private func noteUnconfirmed(_ number: Int) {
        guard let report = state.withLock({ $0.unconfirmedLog.note() }) else { return }
        logger.warning(
            "the consumer did not confirm messages in time; acknowledging them anyway",
            metadata: [
                "message": "\(number)", "timeout": "\(configuration.confirmationTimeout)",
                "times_since_last_report": "\(report)",
            ])
    }
}

/// A non-blocking pipe that wakes the network thread's poll.
final class WakeDescriptor: Sendable {
    /// The end to poll.
    let descriptor: Int32
    private let writeEnd: Int32
    /// `errno` of a failed `pipe()` (then `descriptor` is -1), else 0.
    let failure: Int32

    init() {
        var ends: [Int32] = [-1, -1]
        var failure: Int32 = 0
        if pipe(&ends) == 0 {
            for end in ends {
                _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
                _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            }
        } else {
            failure = errno
            ends = [-1, -1]
        }
        self.failure = failure
        descriptor = ends[0]
        writeEnd = ends[1]
    }

    func signal() {
        guard writeEnd >= 0 else { return }
        var byte: UInt8 = 1
        // A full pipe already wakes the poll.
        _ = write(writeEnd, &byte, 1)
    }

    func clear() {
        var buffer = [UInt8](repeating: 0, count: 64)
        while read(descriptor, &buffer, buffer.count) > 0 {}
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
        if writeEnd >= 0 { close(writeEnd) }
    }
}
