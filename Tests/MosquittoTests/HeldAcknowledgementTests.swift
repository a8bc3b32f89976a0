import Foundation
import HubTestKit
import Mosquitto
import Testing

/// `holdsAcknowledgements`: the broker gets a message's PUBACK only once the consumer confirmed it. Seen through
/// the broker's in-flight window of one: the next message comes only after the acknowledgement of the last.
@Suite struct HeldAcknowledgementTests {
    @Test(arguments: [MQTTQoS.atLeastOnce, .exactlyOnce])
    func theNextMessageWaitsForTheConfirmationOfTheLast(qos: MQTTQoS) async throws {
        try await withBroker(.init(extraLines: ["max_inflight_messages 1"])) { broker in
            let held = MosquittoConfiguration.test(broker) {
                $0.holdsAcknowledgements = true
                $0.confirmationTimeout = .seconds(30)
            }
            try await withClient(held) { receiver in
                try await receiver.client.subscribe("door", qos: qos)
                try await withClient(.test(broker)) { sender in
                    for status in ["open", "closed", "open"] {
                        try await sender.client.publish(topic: "door", payload: status, qos: qos)
                    }
                }
                let first = try await receiver.messages.take(1)
                #expect(first.map(\.number) == [1] && first.first?.payloadString == "open")
                // Unconfirmed, so unacknowledged: the broker holds the second one back.
                try await Task.sleep(for: .milliseconds(500))
                #expect(await receiver.messages.waiting == 0)
                receiver.client.confirm(through: 1)
                let second = try await receiver.messages.take(1)
                #expect(second.map(\.number) == [2] && second.first?.payloadString == "closed")
                receiver.client.confirm(through: 2)
                #expect(try await receiver.messages.take(1).map(\.payloadString) == ["open"])
                receiver.client.confirm(through: 3)
            }
        }
    }

    /// QoS 0 messages have no acknowledgement to hold: they flow without confirmations (the fan-out benchmark at
    /// QoS 0 fell to 498 messages a second when the network thread waited for them).
    @Test func qos0MessagesAreNotHeldBack() async throws {
        try await withBroker { broker in
            let held = MosquittoConfiguration.test(broker) {
                $0.holdsAcknowledgements = true
                $0.confirmationTimeout = .seconds(30)
            }
            try await withClient(held) { receiver in
                try await receiver.client.subscribe("door", qos: .atMostOnce)
                try await withClient(.test(broker)) { sender in
                    for index in 0..<500 {
                        try await sender.client.publish(topic: "door", payload: "s\(index)", qos: .atMostOnce)
                    }
                }
                let received = try await receiver.messages.take(500, within: .seconds(5))
                #expect(received.last?.payloadString == "s499")
            }
        }
    }

    /// A broker sends what it kept for a session right after the CONNACK, often in the same read: `connect()`
    /// completes first (the consumer only takes the client then), and the kept messages wait for confirmation.
    /// (hubd's `connect()` waited the whole confirmation timeout when this pass waited first.)
    @Test func aSessionsKeptMessagesDoNotHoldUpTheConnect() async throws {
        try await withBroker { broker in
            let held = try await keptSession(broker, clientID: "held-session")
            let started = ContinuousClock.now
            try await withClient(held) { receiver in
                #expect(receiver.sessionPresent)
                #expect(ContinuousClock.now - started < .seconds(5))
                // Confirmed one by one: the network thread reads nothing while it waits for a confirmation, and the
                // broker's two sends may reach it in two reads (then waiting for both first waited 30 s: 1 run in 4).
                var kept: [String?] = []
                for _ in 0..<2 {
                    let message = try #require(try await receiver.messages.take(1).first)
                    kept.append(message.payloadString)
                    receiver.client.confirm(through: message.number)
                }
                #expect(kept == ["open", "closed"])
            }
        }
    }

    /// `leavesUnconfirmedOnStop`: a client stopped with a message it had not confirmed leaves it unacknowledged, so
    /// the broker sends it again, with its packet id, to the session's next connection (a cluster partition's next
    /// holder, which knows a message it committed by its id). The acknowledgements of one read go out together, so a
    /// message confirmed in the same read as the unconfirmed one comes again too: what comes again is the tail of what
    /// was sent, ending with the unconfirmed one. Without the option, stopping acknowledged it on the way out
    /// (checked: the second connection then got nothing).
    @Test func aStopLeavesWhatWasNotConfirmedToTheSessionsNextConnection() async throws {
        try await withBroker { broker in
            let held = MosquittoConfiguration.test(broker, clientID: "partition-07") {
                $0.cleanSession = false
                $0.holdsAcknowledgements = true
                $0.leavesUnconfirmedOnStop = true
                $0.confirmationTimeout = .seconds(30)
            }
            let statuses = ["s1", "s2", "s3"]
            // Confirmed one by one (the network thread reads nothing while it waits for a confirmation), but for the
            // last.
            let taken = try await withClient(held) { receiver in
                try await receiver.client.subscribe("door", qos: .atLeastOnce)
                try await withClient(.test(broker)) { sender in
                    for status in statuses {
                        try await sender.client.publish(topic: "door", payload: status, qos: .atLeastOnce)
                    }
                }
                var taken: [MQTTMessage] = []
                while taken.count < statuses.count {
                    let message = try #require(try await receiver.messages.take(1, within: .seconds(10)).first)
                    taken.append(message)
                    if taken.count < statuses.count { receiver.client.confirm(through: message.number) }
                }
                try await Task.sleep(for: .milliseconds(300))
                return taken
            }
            #expect(taken.map(\.payloadString) == statuses)
            try await withClient(held) { next in
                #expect(next.sessionPresent)
                var again: [MQTTMessage] = []
                while again.last?.payloadString != "s3" {
                    let message = try #require(try await next.messages.take(1, within: .seconds(5)).first)
                    again.append(message)
                    next.client.confirm(through: message.number)
                }
                let tail = Array(taken.suffix(again.count))
                #expect(again.map(\.payloadString) == tail.map(\.payloadString), "the tail of what was sent")
                #expect(again.map(\.packetID) == tail.map(\.packetID), "with the same packet ids")
                try await Task.sleep(for: .milliseconds(300))
            }
            // Confirmed whole and stopped: nothing comes again.
            try await withClient(held) { last in
                #expect(last.sessionPresent)
                try await Task.sleep(for: .milliseconds(500))
                #expect(await last.messages.waiting == 0)
            }
        }
    }

    /// `MQTTMessage.sessionIsNew` marks the first message after a CONNACK that found no session (its packet ids start
    /// again): a new client id's first connection, and a broker restarted without persistence (which forgot the
    /// session while the client reconnected by itself); not a connection to the session the broker kept.
    @Test func theFirstMessageOfASessionTheBrokerMadeAnewSaysSo() async throws {
        try await withBroker { broker in
            let kept = MosquittoConfiguration.test(broker, clientID: "session-\(UUID().uuidString.prefix(6))") {
                $0.cleanSession = false
                $0.reconnectDelay = .milliseconds(100)...(.milliseconds(200))
            }
            func send(_ statuses: [String]) async throws {
                try await withClient(.test(broker)) { sender in
                    for status in statuses {
                        try await sender.client.publish(topic: "door", payload: status, qos: .atLeastOnce)
                    }
                }
            }
            try await withClient(kept) { receiver in
                #expect(!receiver.sessionPresent)
                try await receiver.client.subscribe("door", qos: .atLeastOnce)
                try await send(["s1", "s2"])
                let first = try await receiver.messages.take(2)
                #expect(first.map(\.sessionIsNew) == [true, false])
            }
            try await withClient(kept) { receiver in
                #expect(receiver.sessionPresent)
                // In the client's own set too (the broker kept it), for the restore after the restart below.
                try await receiver.client.subscribe("door", qos: .atLeastOnce)
                try await send(["s3"])
                #expect(try await receiver.messages.take(1).map(\.sessionIsNew) == [false])
                // Restarted without persistence: the client reconnects by itself to a session made anew, and its
                // subscriptions are restored.
                await broker.stop()
                try await broker.start()
                while true {
                    let event = try #require(try await receiver.events.take(1, within: .seconds(10)).first)
                    if case .subscriptionsRestored = event { break }
                }
                try await send(["s4", "s5"])
                let after = try await receiver.messages.take(2, within: .seconds(10))
                #expect(after.map(\.payloadString) == ["s4", "s5"])
                #expect(after.map(\.sessionIsNew) == [true, false])
            }
        }
    }

    /// A consumer that never confirms delays the acknowledgements by the timeout, not forever.
    @Test func anUnconfirmedMessageIsAcknowledgedAfterTheTimeout() async throws {
        try await withBroker(.init(extraLines: ["max_inflight_messages 1"])) { broker in
            let held = MosquittoConfiguration.test(broker) {
                $0.holdsAcknowledgements = true
                $0.confirmationTimeout = .milliseconds(300)
            }
            try await withClient(held) { receiver in
                try await receiver.client.subscribe("door", qos: .atLeastOnce)
                try await withClient(.test(broker)) { sender in
                    for status in ["open", "closed"] {
                        try await sender.client.publish(topic: "door", payload: status, qos: .atLeastOnce)
                    }
                }
                #expect(try await receiver.messages.take(2).map(\.payloadString) == ["open", "closed"])
            }
        }
    }

    /// The network thread's own pass over TLS: the handshake, a burst read whole, the acknowledgements after the
    /// confirmations; and a certificate that does not verify still fails the connect, with OpenSSL's words.
    @Test func overTLS() async throws {
        let certificates = try await TestCertificates.shared()
        try await withBroker(.init(tls: certificates.localhost)) { broker in
            let held = MosquittoConfiguration.test(broker) {
                $0.host = "localhost"
                $0.tls = TLSConfiguration(trustRoots: .caFile(certificates.caFile))
                $0.holdsAcknowledgements = true
                $0.confirmationTimeout = .seconds(30)
            }
            let sender = MosquittoConfiguration.test(broker) {
                $0.host = "localhost"
                $0.tls = TLSConfiguration(trustRoots: .caFile(certificates.caFile))
            }
            try await withClient(held) { client in
                try await client.client.subscribe("tls/held", qos: .atLeastOnce)
                // While the network thread waits for a confirmation it reads nothing, not even the answer to its
                // own publish: the messages come from another client, as a sensor's would.
                let publishing = Task {
                    try await withClient(sender) { sender in
                        for index in 0..<200 {
                            try await sender.client.publish(topic: "tls/held", payload: "s\(index)", qos: .atLeastOnce)
                        }
                    }
                }
                var received: [String] = []
                while received.count < 200 {
                    let message = try await client.messages.next()
                    received.append(message.payloadString ?? "")
                    client.client.confirm(through: message.number)
                }
                try await publishing.value
                #expect(received == (0..<200).map { "s\($0)" })
            }
            let wrong = MosquittoClient(
                configuration: .test(broker) {
                    $0.host = "localhost"
                    $0.tls = TLSConfiguration(trustRoots: .caFile(certificates.otherCAFile))
                    $0.holdsAcknowledgements = true
                },
                logger: testLogger())
            await #expect(throws: MosquittoError.self) { try await wrong.connect() }
            await wrong.disconnect()
        }
    }
}
