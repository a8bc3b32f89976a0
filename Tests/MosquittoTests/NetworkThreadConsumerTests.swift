import Foundation
import HubSupport
import HubTestKit
import Mosquitto
import Testing

/// `consumeOnNetworkThread`: the messages handed over on the client's network thread, each burst before its
/// acknowledgements are written, so a consumer that confirms before it returns is acknowledged in the same pass.
@Suite struct NetworkThreadConsumerTests {
    /// What a consumer saw: the payloads in order, and the threads it ran on.
    final class Seen: Sendable {
        let payloads = Locked<[String]>([])
        let threads = Locked<Set<UInt>>([])
        let calls = Locked(0)
        /// When each batch was taken.
        let arrivals = Locked<[ContinuousClock.Instant]>([])

        func take(_ batch: [MQTTMessage]) {
            arrivals.withLock { $0.append(.now) }
            payloads.withLock { $0 += batch.map { $0.payloadString ?? "?" } }
            threads.withLock { _ = $0.insert(UInt(bitPattern: Int(bitPattern: pthread_self()))) }
            calls.withLock { $0 += 1 }
        }

        /// The last message taken, when the first burst not confirmed yet was taken, when `due` was called, and how
        /// long a burst's confirmation is put off.
        let taken = Locked(0)
        let since = Locked<ContinuousClock.Instant?>(nil)
        let dues = Locked<[ContinuousClock.Instant]>([])
        let hold = Locked(Duration.milliseconds(50))

        /// Takes `client`'s messages on its network thread, putting off each burst's confirmation for `hold` after
        /// the first burst not confirmed came, and confirming everything taken when told it is due. Returns once the
        /// client has closed.
        func putOff(_ client: MosquittoClient) async {
            await client.consumeOnNetworkThread(
                { batch in
                    self.take(batch)
                    self.taken.withLock { $0 = batch.last?.number ?? $0 }
                    let since = self.since.withLock { since -> ContinuousClock.Instant in
                        if since == nil { since = .now }
                        return since!
                    }
                    return since + self.hold.withLock { $0 }
                },
                due: {
                    self.dues.withLock { $0.append(.now) }
                    self.since.withLock { $0 = nil }
                    client.confirm(through: self.taken.withLock { $0 })
                })
        }

        /// Once `putOff` has registered, puts confirmations off for `hold`: a message that came before the consumer
        /// registered is due at once (`messagesKeptBeforeAConsumerThatPutsOffRegisteredAreDueAtOnce`), so a
        /// warm-up message is sent and seen due first, and then forgotten.
        func registered(_ broker: MosquittoBroker, then hold: Duration) async throws {
            try await withClient(.test(broker)) { sender in
                try await sender.client.publish(topic: "door", payload: "warm-up", qos: .atLeastOnce)
            }
            let started = ContinuousClock.now
            while dues.withLock({ $0.isEmpty }) && ContinuousClock.now - started < .seconds(5) {
                try await Task.sleep(for: .milliseconds(10))
            }
            #expect(payloads.withLock { $0 } == ["warm-up"] && dues.withLock { $0.count } == 1)
            payloads.withLock { $0 = [] }
            arrivals.withLock { $0 = [] }
            dues.withLock { $0 = [] }
            self.hold.withLock { $0 = hold }
        }
    }

    /// With a broker that sends one message at a time until it has the PUBACK, 30 statuses arrive in order within
    /// seconds only if each confirmation inside the consumer lets the same pass acknowledge (the timeout is 30 s);
    /// every batch on one thread, not the test's.
    @Test func confirmedInsideTheConsumerEachMessageIsAcknowledgedInTheSamePass() async throws {
        try await withBroker(.init(extraLines: ["max_inflight_messages 1"])) { broker in
            let held = MosquittoConfiguration.test(broker) {
                $0.holdsAcknowledgements = true
                $0.confirmationTimeout = .seconds(30)
            }
            let client = MosquittoClient(configuration: held, logger: testLogger())
            try await client.connect()
            try await client.subscribe("door", qos: .atLeastOnce)
            let seen = Seen()
            let consuming = Task {
                await client.consumeOnNetworkThread { batch in
                    seen.take(batch)
                    if let last = batch.last { client.confirm(through: last.number) }
                    return nil
                }
            }
            let statuses = (1...30).map { "s\($0)" }
            try await withClient(.test(broker)) { sender in
                for status in statuses {
                    try await sender.client.publish(topic: "door", payload: status, qos: .atLeastOnce)
                }
            }
            let started = ContinuousClock.now
            while seen.payloads.withLock({ $0.count }) < statuses.count && ContinuousClock.now - started < .seconds(10)
            {
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(seen.payloads.withLock { $0 } == statuses)
            #expect(ContinuousClock.now - started < .seconds(10))
            let mine = UInt(bitPattern: Int(bitPattern: pthread_self()))
            #expect(seen.threads.withLock { $0.count == 1 && !$0.contains(mine) })
            await client.disconnect()
            // Returns once the client has closed.
            await consuming.value
        }
    }

    /// A broker sends what it kept for the session right after the CONNACK, before a consumer can register: the
    /// network thread is then waiting for their confirmation, and a consumer registering hands them over at once,
    /// not after the confirmation timeout (a restarted hubd's first messages waited it out, and were acknowledged
    /// unconfirmed).
    @Test func messagesKeptBeforeTheConsumerRegisteredAreHandedOverAtOnce() async throws {
        try await withBroker { broker in
            let held = try await keptSession(broker, clientID: "kept-\(UUID().uuidString.prefix(6))")
            let client = MosquittoClient(configuration: held, logger: testLogger())
            #expect(try await client.connect())
            // The kept messages reach the client's buffer while nobody takes them.
            try await Task.sleep(for: .milliseconds(300))
            let seen = Seen()
            let started = ContinuousClock.now
            let consuming = Task {
                await client.consumeOnNetworkThread { batch in
                    seen.take(batch)
                    if let last = batch.last { client.confirm(through: last.number) }
                    return nil
                }
            }
            while seen.payloads.withLock({ $0.count }) < 2 && ContinuousClock.now - started < .seconds(10) {
                try await Task.sleep(for: .milliseconds(20))
            }
            try await expectHandedOverAndAcknowledged(seen, since: started, client, consuming, held)
        }
    }

    /// The kept statuses were handed over within 5 s of `started`; once the client has closed, confirmed, so
    /// acknowledged: the session `held` connects to has nothing to send again.
    func expectHandedOverAndAcknowledged(
        _ seen: Seen, since started: ContinuousClock.Instant, _ client: MosquittoClient,
        _ consuming: Task<Void, Never>, _ held: MosquittoConfiguration
    ) async throws {
        #expect(seen.payloads.withLock { $0 } == ["open", "closed"])
        #expect(ContinuousClock.now - started < .seconds(5))
        await client.disconnect()
        await consuming.value
        try await withClient(held) { again in
            try await Task.sleep(for: .milliseconds(500))
            #expect(await again.messages.waiting == 0)
        }
    }

    /// A consumer that puts off its confirmations gets the bursts that come meanwhile, and nothing is acknowledged
    /// until they are due: a broker that lets 5 messages be in flight sends the first 5 of 10, then waits; `due`
    /// comes at the instant named, confirms, and the other 5 follow.
    @Test func confirmationsPutOffAreDueAtTheInstantNamedAndHoldEveryAcknowledgementUntilThen() async throws {
        try await withBroker(.init(extraLines: ["max_inflight_messages 5"])) { broker in
            let held = MosquittoConfiguration.test(broker) { $0.holdsAcknowledgements = true }
            let client = MosquittoClient(configuration: held, logger: testLogger())
            try await client.connect()
            try await client.subscribe("door", qos: .atLeastOnce)
            let seen = Seen()
            // Long enough that a loaded machine publishes the ten and looks within it.
            let delay = Duration.seconds(3)
            let consuming = Task { await seen.putOff(client) }
            try await seen.registered(broker, then: delay)
            let statuses = (1...10).map { "s\($0)" }
            try await withClient(.test(broker)) { sender in
                for status in statuses {
                    try await sender.client.publish(topic: "door", payload: status, qos: .atLeastOnce)
                }
            }
            let started = ContinuousClock.now
            while seen.payloads.withLock({ $0.count }) < 5 && ContinuousClock.now - started < .seconds(5) {
                try await Task.sleep(for: .milliseconds(10))
            }
            // The broker waits for acknowledgements the client holds.
            try await Task.sleep(for: .milliseconds(300))
            #expect(seen.payloads.withLock { $0 } == Array(statuses.prefix(5)))
            #expect(seen.dues.withLock { $0.isEmpty })
            while seen.payloads.withLock({ $0.count }) < 10 && ContinuousClock.now - started < .seconds(10) {
                try await Task.sleep(for: .milliseconds(10))
            }
            #expect(seen.payloads.withLock { $0 } == statuses)
            // Due once for the first five, not before the delay after the first of them came; once more for the rest.
            let times = seen.dues.withLock { $0 }
            #expect(times.count >= 1)
            if let due = times.first, let first = seen.arrivals.withLock({ $0.first }) {
                #expect(due - first >= delay - .milliseconds(5), "\(due - first)")
            }
            await client.disconnect()
            await consuming.value
        }
    }

    /// A packet another thread queues waits behind the acknowledgements held: it makes the confirmations put off
    /// due at once, so a publish is not held up for the consumer's delay (a minute here).
    @Test func aPublishMakesConfirmationsPutOffDueAtOnce() async throws {
        try await withBroker { broker in
            let held = MosquittoConfiguration.test(broker) { $0.holdsAcknowledgements = true }
            let client = MosquittoClient(configuration: held, logger: testLogger())
            try await client.connect()
            try await client.subscribe("door", qos: .atLeastOnce)
            let seen = Seen()
            let consuming = Task { await seen.putOff(client) }
            try await seen.registered(broker, then: .seconds(60))
            try await withClient(.test(broker)) { sender in
                try await sender.client.publish(topic: "door", payload: "open", qos: .atLeastOnce)
            }
            let started = ContinuousClock.now
            while seen.payloads.withLock({ $0.isEmpty }) && ContinuousClock.now - started < .seconds(5) {
                try await Task.sleep(for: .milliseconds(10))
            }
            #expect(seen.dues.withLock { $0.count } == 0)
            let publishing = ContinuousClock.now
            try await client.publish(topic: "hub/said", payload: "hello", qos: .atLeastOnce)
            #expect(ContinuousClock.now - publishing < .seconds(5))
            #expect(seen.dues.withLock { $0.count } == 1)
            await client.disconnect()
            await consuming.value
        }
    }

    /// The same for a consumer that puts off its confirmations: the thread was waiting for theirs, so they are due
    /// at once. Left to the instant it named, they waited out the confirmation timeout and were acknowledged before
    /// the consumer had made them durable (KillDeliveryTests: a record waited 2 s).
    @Test func messagesKeptBeforeAConsumerThatPutsOffRegisteredAreDueAtOnce() async throws {
        try await withBroker { broker in
            var held = try await keptSession(broker, clientID: "kept-\(UUID().uuidString.prefix(6))")
            held.confirmationTimeout = .seconds(30)
            let client = MosquittoClient(configuration: held, logger: testLogger())
            #expect(try await client.connect())
            try await Task.sleep(for: .milliseconds(300))
            let seen = Seen()
            seen.hold.withLock { $0 = .seconds(60) }
            let consuming = Task { await seen.putOff(client) }
            let started = ContinuousClock.now
            while seen.dues.withLock({ $0.isEmpty }) && ContinuousClock.now - started < .seconds(10) {
                try await Task.sleep(for: .milliseconds(20))
            }
            try await expectHandedOverAndAcknowledged(seen, since: started, client, consuming, held)
        }
    }
}
