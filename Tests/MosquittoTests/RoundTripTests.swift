import Foundation
import HubTestKit
import Mosquitto
import Testing

/// Messages through a real broker: QoS, retained, wildcards, payload shapes, and real peers on the other end.
@Suite(.timeLimit(.minutes(1)))
struct RoundTripTests {
    @Test(arguments: [MQTTQoS.atMostOnce, .atLeastOnce, .exactlyOnce])
    func roundTrip(qos: MQTTQoS) async throws {
        try await withBroker { broker in
            try await withClient(.test(broker)) { receiver in
                let granted = try await receiver.client.subscribe("home/kitchen", qos: qos)
                #expect(granted == qos)
                try await withClient(.test(broker)) { sender in
                    for status in ["open", "closed", "open"] {
                        try await sender.client.publish(topic: "home/kitchen", payload: status, qos: qos)
                    }
                }
                let received = try await receiver.messages.take(3)
                #expect(received.map(\.payloadString) == ["open", "closed", "open"])
                #expect(received.allSatisfy { $0.topic == "home/kitchen" && $0.qos == qos && !$0.retain })
                #expect(receiver.client.statistics.received == 3)
            }
        }
    }

    @Test func retainedMessageArrivesOnSubscribe() async throws {
        try await withBroker { broker in
            try await withClient(.test(broker)) { sender in
                try await sender.client.publish(topic: "home/door", payload: "closed", qos: .atLeastOnce, retain: true)
            }
            try await withClient(.test(broker)) { receiver in
                try await receiver.client.subscribe("home/door")
                let message = try await receiver.messages.next()
                #expect(message.payloadString == "closed")
                #expect(message.retain)
            }
        }
    }

    @Test func wildcardFilters() async throws {
        try await withBroker { broker in
            try await withClient(.test(broker)) { receiver in
                try await receiver.client.subscribe(["home/+/status", "garden/#", "end"], qos: .atLeastOnce)
                #expect(
                    receiver.client.subscriptions
                        == ["home/+/status": .atLeastOnce, "garden/#": .atLeastOnce, "end": .atLeastOnce])
                try await withClient(.test(broker)) { sender in
                    for topic in [
                        "home/kitchen/status", "home/kitchen/battery", "garden/shed/door", "garden", "office/x",
                    ] {
                        try await sender.client.publish(topic: topic, payload: topic, qos: .atLeastOnce)
                    }
                    try await sender.client.publish(topic: "end", payload: "", qos: .atLeastOnce)
                }
                var topics: [String] = []
                while true {
                    let message = try await receiver.messages.next()
                    if message.topic == "end" { break }
                    topics.append(message.topic)
                }
                #expect(topics == ["home/kitchen/status", "garden/shed/door", "garden"])
            }
        }
    }

    @Test func emptyBinaryAndLargePayloadsRoundTripByteForByte() async throws {
        let payloads: [[UInt8]] = [
            [],
            [0x00, 0xFF, 0xC3, 0x28, 0x00, 0x0A, 0x0D],  // NUL, invalid UTF-8, line breaks
            .pattern(count: 256 * 1024),
        ]
        try await withBroker { broker in
            try await withClient(.test(broker)) { receiver in
                try await receiver.client.subscribe("bytes/#", qos: .atLeastOnce)
                try await withClient(.test(broker)) { sender in
                    for (index, payload) in payloads.enumerated() {
                        try await sender.client.publish(topic: "bytes/\(index)", payload: payload, qos: .atLeastOnce)
                    }
                }
                let received = try await receiver.messages.take(payloads.count)
                #expect(received.map(\.topic) == ["bytes/0", "bytes/1", "bytes/2"])
                #expect(received.map(\.payload) == payloads)
                #expect(received[1].payloadString == nil)
            }
        }
    }

    /// mosquitto_pub and mosquitto_sub are independent peers: what they send we read, and the reverse.
    @Test func interoperatesWithMosquittoClients() async throws {
        let pub = try requireExecutable("mosquitto_pub", package: "mosquitto-clients")
        let sub = try requireExecutable("mosquitto_sub", package: "mosquitto-clients")
        try await withBroker { broker in
            let directory = try TemporaryDirectory()
            let payload = [UInt8].pattern(count: 4096)
            try Data(payload).write(to: URL(fileURLWithPath: directory.file("payload")))
            try await withClient(.test(broker)) { receiver in
                try await receiver.client.subscribe("peer/in")
                let sent = try await runProcess(
                    pub,
                    [
                        "-h", broker.host, "-p", "\(broker.port)", "-q", "1", "-t", "peer/in", "-f",
                        directory.file("payload"),
                    ])
                #expect(sent.status == 0, "\(sent.standardError)")
                #expect(try await receiver.messages.next().payload == payload)

                // Retained, so mosquitto_sub gets it whenever it subscribes.
                try await receiver.client.publish(
                    topic: "peer/out", payload: "from swift", qos: .atLeastOnce, retain: true)
                let read = try await runProcess(
                    sub, ["-h", broker.host, "-p", "\(broker.port)", "-t", "peer/out", "-C", "1", "-W", "5"])
                #expect(read.status == 0, "\(read.standardError)")
                #expect(read.standardOutput == "from swift\n")
            }
        }
    }

    @Test func unsubscribeStopsDelivery() async throws {
        try await withBroker { broker in
            try await withClient(.test(broker)) { receiver in
                try await receiver.client.subscribe(["a", "b"])
                try await receiver.client.unsubscribe("a")
                #expect(receiver.client.subscriptions == ["b": .atLeastOnce])
                try await withClient(.test(broker)) { sender in
                    try await sender.client.publish(topic: "a", payload: "dropped")
                    try await sender.client.publish(topic: "b", payload: "kept")
                }
                // QoS 1 keeps order on one connection: had "a" arrived, it would come before "b".
                let first = try await receiver.messages.next()
                #expect(first.topic == "b")
            }
        }
    }

    @Test func mqtt5RoundTrip() async throws {
        try await withBroker { broker in
            let configuration = MosquittoConfiguration.test(broker) { $0.protocolVersion = .v5 }
            try await withClient(configuration) { client in
                try await client.client.subscribe("v5/topic", qos: .exactlyOnce)
                try await client.client.publish(topic: "v5/topic", payload: "hello", qos: .exactlyOnce)
                #expect(try await client.messages.next().payloadString == "hello")
            }
        }
    }

    @Test func manySubscriptionsInBatches() async throws {
        try await withBroker { broker in
            try await withClient(.test(broker)) { receiver in
                let filters = (0..<1_200).map { "many/\($0)" }
                let granted = try await receiver.client.subscribe(filters, qos: .atLeastOnce)
                #expect(granted.count == 1_200)
                #expect(receiver.client.subscriptions.count == 1_200)
                try await withClient(.test(broker)) { sender in
                    try await sender.client.publish(topic: "many/1199", payload: "last")
                }
                #expect(try await receiver.messages.next().topic == "many/1199")
            }
        }
    }
}
