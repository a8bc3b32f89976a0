import Foundation
import HubTestKit
import Mosquitto
import Testing

/// MQTT 5 as a consumer that holds its acknowledgements needs it, against Mosquitto's default settings: a kept
/// session, a Receive Maximum the broker honours in place of its `max_inflight_messages`, and a fall-back to
/// MQTT 3.1.1 for a broker that speaks only that.
@Suite struct MQTT5Tests {
    /// MQTT 5 ends a session at the disconnect unless the CONNECT gives it an expiry; libmosquitto sends one only
    /// through a side door (`ClientCore.setConnectProperties`). Messages published while the client was away must
    /// wait for it, as they do in MQTT 3.1.1.
    @Test(arguments: [MQTTProtocolVersion.v311, .v5])
    func aKeptSessionOutlivesTheDisconnect(version: MQTTProtocolVersion) async throws {
        try await withBroker { broker in
            let kept = MosquittoConfiguration.test(broker, clientID: "kept-\(version)") {
                $0.cleanSession = false
                $0.protocolVersion = version
            }
            try await withClient(kept) { first in
                #expect(!first.sessionPresent)
                try await first.client.subscribe("away", qos: .atLeastOnce)
            }
            try await withClient(.test(broker)) { sender in
                for index in 0..<3 { try await sender.client.publish(topic: "away", payload: "m\(index)") }
            }
            try await withClient(kept) { again in
                #expect(again.sessionPresent)
                let waited = try await again.messages.take(3)
                #expect(waited.map(\.payloadString) == ["m0", "m1", "m2"])
            }
        }
    }

    /// A burst of 1,400 QoS 1 messages while the consumer has not confirmed the first. In MQTT 3.1.1 the broker
    /// sends 20 (`max_inflight_messages`), queues 1,000 (`max_queued_messages`) and drops the rest; with a Receive
    /// Maximum of 500 it sends 500 and queues 1,000 beyond those, so it keeps them all.
    @Test(arguments: [MQTTProtocolVersion.v311, .v5])
    func aBurstPastTheBrokersQueueArrivesWholeInMQTT5(version: MQTTProtocolVersion) async throws {
        try await withBroker { broker in
            let held = MosquittoConfiguration.test(broker, clientID: "held-\(version)") {
                $0.cleanSession = false
                $0.protocolVersion = version
                $0.receiveMaximum = version == .v5 ? 500 : nil
                $0.holdsAcknowledgements = true
                $0.confirmationTimeout = .seconds(120)
            }
            try await withClient(held) { receiver in
                try await receiver.client.subscribe("burst", qos: .atLeastOnce)
                let count = 1400
                try await withClient(.test(broker)) { sender in
                    try await sender.client.publish(topic: "burst", payload: "0")
                    _ = try await receiver.messages.take(1)
                    // Not confirmed: the network thread waits, and the broker sends what its window allows.
                    for index in 1..<count { try await sender.client.publish(topic: "burst", payload: "\(index)") }
                }
                receiver.client.confirm(through: Int.max)
                var received = ["0"]
                while received.count < count, let message = try? await receiver.messages.next(within: .seconds(3)) {
                    received.append(message.payloadString ?? "")
                }
                let log = (try? String(contentsOfFile: broker.logFile, encoding: .utf8)) ?? ""
                if version == .v5 {
                    #expect(received == (0..<count).map { "\($0)" })
                    #expect(!log.contains("Outgoing messages are being dropped"))
                } else {
                    #expect(received.count < 1100, "max_inflight_messages 20 + max_queued_messages 1000")
                    #expect(log.contains("Outgoing messages are being dropped for client held-v311"))
                }
            }
        }
    }

    @Test func aBrokerThatSpeaksOnlyMQTT311IsSpokenToInIt() async throws {
        try await withBroker { broker in
            let old = try MQTT311Broker(before: broker)
            defer { old.stop() }
            let strict = MosquittoConfiguration.test(broker) {
                $0.port = old.port
                $0.protocolVersion = .v5
            }
            await #expect {
                try await withClient(strict) { _ in }
            } throws: { error in
                guard case .connectionRefused(let code, let reason)? = error as? MosquittoError else { return false }
                return code == 132 && reason.lowercased().contains("unsupported protocol version")
            }
            #expect(old.refusedV5 == 1)

            var falling = strict
            falling.fallsBackToV311 = true
            falling.clientID = "old-broker"
            falling.cleanSession = false
            falling.receiveMaximum = 1000
            try await withClient(falling) { client in
                try await client.client.subscribe("old/topic", qos: .atLeastOnce)
                try await client.client.publish(topic: "old/topic", payload: "hello")
                let message = try await client.messages.next()
                #expect(message.payloadString == "hello")
                // The broker's window is its own max_inflight_messages now, which the client can't know.
                #expect(client.client.receiveWindow == nil)
            }
            #expect(old.refusedV5 == 2)
            try await withClient(MosquittoConfiguration.test(broker) { $0.protocolVersion = .v5 }) { modern in
                #expect(modern.client.receiveWindow == 20)
            }
            // Then the 3.1.1 session was kept, as 3.1.1 keeps it.
            try await withClient(falling) { again in #expect(again.sessionPresent) }
        }
    }

    /// A broker's Server Keep Alive (Mosquitto's `max_keepalive`, lower than the client's) is the keepalive
    /// libmosquitto keeps to; an idle client must wake for it, not for a quarter of its own (120 s → 30 s, when the
    /// broker drops a client silent for 1.5 × 10 s). Idle 20 s: still connected, never reconnected, never timed out.
    @Test func anIdleClientKeepsToTheBrokersKeepalive() async throws {
        try await withBroker(.init(extraLines: ["max_keepalive 10"])) { broker in
            let configuration = MosquittoConfiguration.test(broker) {
                $0.protocolVersion = .v5
                $0.keepAlive = .seconds(120)
            }
            try await withClient(configuration) { client in
                try await Task.sleep(for: .seconds(20))
                #expect(client.client.statistics.reconnects == 0)
                #expect(!broker.log.contains("exceeded timeout"), "\(broker.log)")
                try await client.client.subscribe("idle/topic", qos: .atLeastOnce)
                try await client.client.publish(topic: "idle/topic", payload: "awake")
                #expect(try await client.messages.next().payloadString == "awake")
            }
        }
    }
}
