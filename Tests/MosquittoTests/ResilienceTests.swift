import Foundation
import HubTestKit
import Mosquitto
import Testing

/// What happens when things break: the broker restarts, the client dies, the network thread fails, nobody answers.
@Suite(.timeLimit(.minutes(1)))
struct ResilienceTests {
    enum Outage: String, CaseIterable, CustomTestStringConvertible {
        case graceful, killed
        var testDescription: String { rawValue }
    }

    @Test(arguments: Outage.allCases)
    func brokerRestartRestoresEverySubscription(outage: Outage) async throws {
        try await withBroker { broker in
            try await withClient(.test(broker)) { client in
                try await client.client.subscribe(["restart/a/#", "restart/b"], qos: .atLeastOnce)
                try await client.client.subscribe("restart/c", qos: .atMostOnce)
                switch outage {
                case .graceful: await broker.stop()
                case .killed: await broker.kill()
                }
                _ = try await client.events.next(where: { if case .disconnected = $0 { true } else { false } })
                try await broker.start()
                _ = try await client.events.next(where: { $0 == .connected(sessionPresent: false) })
                let restored = try await client.events.next(where: {
                    if case .subscriptionsRestored = $0 { true } else { false }
                })
                #expect(restored == .subscriptionsRestored(count: 3, refused: []))
                #expect(client.client.statistics.reconnects == 1)

                try await withClient(.test(broker)) { sender in
                    for topic in ["restart/a/1", "restart/b", "restart/c"] {
                        try await sender.client.publish(topic: topic, payload: "after", qos: .atLeastOnce)
                    }
                }
                let received = try await client.messages.take(3)
                #expect(Set(received.map(\.topic)) == ["restart/a/1", "restart/b", "restart/c"])
            }
        }
    }

    @Test func reconnectAttemptsAreReportedWithBackOff() async throws {
        try await withBroker { broker in
            let configuration = MosquittoConfiguration.test(broker) {
                $0.reconnectDelay = .milliseconds(50)...(.milliseconds(200))
            }
            try await withClient(configuration) { client in
                await broker.stop()
                var delays: [Duration] = []
                while delays.count < 4 {
                    let event = try await client.events.next(where: {
                        if case .reconnectFailed = $0 { true } else { false }
                    })
                    guard case .reconnectFailed(let error, let retryIn) = event else { continue }
                    #expect(error.description.contains("Connection refused"), "\(error)")
                    delays.append(retryIn)
                }
                // Doubling from 50 ms with ±20 % jitter, capped at 200 ms.
                #expect(delays.allSatisfy { $0 <= .milliseconds(200) })
                #expect(delays[3] >= .milliseconds(160))
                try await broker.start()
                _ = try await client.events.next(where: { if case .connected = $0 { true } else { false } })
            }
        }
    }

    @Test func persistentSessionDeliversWhatArrivedWhileAway() async throws {
        try await withBroker { broker in
            let persistent = MosquittoConfiguration.test(broker, clientID: "hub-persistent") { $0.cleanSession = false }
            try await withClient(persistent) { first in
                #expect(!first.sessionPresent)
                try await first.client.subscribe("away/#", qos: .atLeastOnce)
            }
            try await withClient(.test(broker)) { sender in
                for index in 0..<5 {
                    try await sender.client.publish(
                        topic: "away/\(index)", payload: "queued \(index)", qos: .atLeastOnce)
                }
            }
            try await withClient(persistent) { second in
                #expect(second.sessionPresent)
                let received = try await second.messages.take(5)
                #expect(received.map(\.payloadString) == (0..<5).map { "queued \($0)" })
            }
        }
    }

    @Test func willIsPublishedWhenTheClientDies() async throws {
        let probe = try builtProduct("mosquitto-probe")
        try await withBroker { broker in
            try await withClient(.test(broker)) { watcher in
                try await watcher.client.subscribe("hub/availability", qos: .atLeastOnce)
                let output = try makePipe()
                let dying = try ChildProcess(
                    probe,
                    [
                        "hold", "--port", "\(broker.port)", "--will-topic", "hub/availability", "--will-payload",
                        "offline",
                    ],
                    standardOutput: output.write.fileDescriptor)
                try output.write.close()
                let lines = Inbox.consuming(lines(of: output.read))
                _ = try await lines.next(where: { $0 == "connected" })
                dying.send(SIGKILL)
                #expect(await dying.wait() == 128 + SIGKILL)
                let will = try await watcher.messages.next()
                #expect(will.topic == "hub/availability")
                #expect(will.payloadString == "offline")
            }
        }
    }

    @Test func willIsNotPublishedOnACleanDisconnect() async throws {
        try await withBroker { broker in
            try await withClient(.test(broker)) { watcher in
                try await watcher.client.subscribe(["hub/availability", "marker"], qos: .atLeastOnce)
                let configuration = MosquittoConfiguration.test(broker) {
                    $0.will = .init(topic: "hub/availability", payload: "offline", retain: false)
                }
                try await withClient(configuration) { _ in }
                try await withClient(.test(broker)) { sender in
                    try await sender.client.publish(topic: "marker", payload: "", qos: .atLeastOnce)
                }
                // QoS 1 keeps order: a will would have come before the marker.
                #expect(try await watcher.messages.next().topic == "marker")
            }
        }
    }

    /// libmosquitto marks the client disconnected as soon as `mosquitto_disconnect` is called, and then drops the
    /// socket on the next packet it reads, before DISCONNECT is out: on a busy connection the broker would publish
    /// the will of a client that left cleanly. The network thread writes DISCONNECT without reading first.
    @Test func willIsNotPublishedOnACleanDisconnectUnderLoad() async throws {
        try await withBroker { broker in
            try await withClient(.test(broker)) { watcher in
                try await watcher.client.subscribe(["hub/availability", "marker"], qos: .atLeastOnce)
                let configuration = MosquittoConfiguration.test(broker) {
                    $0.will = .init(topic: "hub/availability", payload: "offline", retain: false)
                }
                let busy = try await Connected.connect(configuration)
                try await busy.client.subscribe("busy", qos: .atMostOnce)
                try await withClient(.test(broker)) { sender in
                    let flood = Task {
                        for index in 0..<20_000 {
                            try await sender.client.publish(topic: "busy", payload: "\(index)", qos: .atMostOnce)
                        }
                    }
                    // Messages are streaming in when the client leaves.
                    _ = try await busy.messages.take(20)
                    await busy.client.disconnect()
                    flood.cancel()
                    _ = await flood.result
                    try await sender.client.publish(topic: "marker", payload: "", qos: .atLeastOnce)
                }
                // QoS 1 keeps order: a will would have come before the marker.
                #expect(try await watcher.messages.next().topic == "marker")
            }
        }
    }

    /// A caller reacting to `.connected` after a reconnect must not be overtaken by the restore of the old set.
    @Test func unsubscribeRightAfterReconnectIsNotUndoneByTheRestore() async throws {
        try await withBroker { broker in
            try await withClient(.test(broker)) { client in
                try await client.client.subscribe(["gone", "kept"], qos: .atLeastOnce)
                await broker.stop()
                try await broker.start()
                _ = try await client.events.next(where: { $0 == .connected(sessionPresent: false) })
                try await client.client.unsubscribe("gone")
                try await withClient(.test(broker)) { sender in
                    try await sender.client.publish(topic: "gone", payload: "should not arrive", qos: .atLeastOnce)
                    try await sender.client.publish(topic: "kept", payload: "arrives", qos: .atLeastOnce)
                }
                #expect(try await client.messages.next().topic == "kept")
                #expect(client.client.subscriptions == ["kept": .atLeastOnce])
            }
        }
    }

    @Test func concurrentDisconnectsAllReturn() async throws {
        try await withBroker { broker in
            let connected = try await Connected.connect(.test(broker))
            async let first: Void = connected.client.disconnect()
            async let second: Void = connected.client.disconnect()
            async let third: Void = connected.client.disconnect()
            _ = await (first, second, third)
            #expect(try await connected.events.end().last == .closed(nil))
        }
    }

    /// libmosquitto's own loop (`mosquitto_loop`, on `select()`) fails for good on a socket numbered 1024 or more.
    /// The network thread polls instead, so a client in a process with many files open reconnects and works. Run in
    /// a child process: it takes every descriptor below 1024 while the broker is down.
    @Test func aSocketNumberedPast1024Works() async throws {
        let probe = try builtProduct("mosquitto-probe")
        try await withBroker { broker in
            let output = try makePipe()
            let child = try ChildProcess(
                probe, ["past-1024", "--port", "\(broker.port)"], standardOutput: output.write.fileDescriptor)
            try output.write.close()
            let lines = Inbox.consuming(lines(of: output.read))
            _ = try await lines.next(where: { $0 == "connected" })
            await broker.stop()
            let filled = try await lines.next(where: { $0.hasPrefix("filled") })
            #expect(filled.hasSuffix("the last 1024"), "\(filled)")
            try await broker.start()
            let outcome = try await lines.next(
                within: .seconds(20), where: { $0 == "published" || $0.hasPrefix("closed") })
            #expect(outcome == "published", "\(outcome)")
            #expect(await child.wait(timeout: .seconds(10)) == 0)
        }
    }

    @Test func subscribeWhileReconnectingCompletesOnceReconnected() async throws {
        try await withBroker { broker in
            try await withClient(.test(broker)) { client in
                await broker.stop()
                _ = try await client.events.next(where: { if case .disconnected = $0 { true } else { false } })
                async let subscribed = client.client.subscribe("late/topic", qos: .atLeastOnce)
                try await broker.start()
                #expect(try await subscribed == .atLeastOnce)
                try await client.client.publish(topic: "late/topic", payload: "here")
                #expect(try await client.messages.next().payloadString == "here")
            }
        }
    }

    @Test func qos1PublishWhileReconnectingIsDeliveredAfterwards() async throws {
        try await withBroker(.init(persistence: true)) { broker in
            let watcherConfiguration = MosquittoConfiguration.test(broker, clientID: "watcher") {
                $0.cleanSession = false
            }
            try await withClient(watcherConfiguration) { watcher in
                try await watcher.client.subscribe("queued/out", qos: .atLeastOnce)
            }
            try await withClient(.test(broker)) { client in
                await broker.stop()
                _ = try await client.events.next(where: { if case .disconnected = $0 { true } else { false } })
                await #expect(throws: MosquittoError.notConnected(operation: "publish to 'queued/out'")) {
                    try await client.client.publish(topic: "queued/out", payload: "qos0", qos: .atMostOnce)
                }
                async let published: Void = client.client.publish(
                    topic: "queued/out", payload: "qos1", qos: .atLeastOnce)
                try await broker.start()
                try await published
            }
            try await withClient(watcherConfiguration) { watcher in
                let message = try await watcher.messages.next()
                #expect(message.payloadString == "qos1")
            }
        }
    }

    @Test func connectToAServerThatNeverAnswersTimesOut() async throws {
        let listener = try SilentListener()
        let client = MosquittoClient(
            configuration: MosquittoConfiguration(
                host: "127.0.0.1", port: listener.port, operationTimeout: .milliseconds(300)),
            logger: testLogger())
        let events = Inbox.consuming(client.events)
        await #expect(
            throws: MosquittoError.timeout(
                operation: "connect to 127.0.0.1:\(listener.port)", after: .milliseconds(300))
        ) {
            try await client.connect()
        }
        // The failed attempt leaves nothing running: the events end with `closed`.
        let rest = try await events.end(within: .seconds(5))
        #expect(rest.last == .closed(nil))
    }

    @Test func connectWhereNothingListensSaysSo() async throws {
        let port = try freeLoopbackPort()
        let client = MosquittoClient(
            configuration: MosquittoConfiguration(host: "127.0.0.1", port: port), logger: testLogger())
        await #expect(throws: MosquittoError.connectFailed(endpoint: "127.0.0.1:\(port)", reason: "Connection refused"))
        {
            try await client.connect()
        }
    }

    @Test func disconnectEndsTheStreamsAndLaterCallsSayClosed() async throws {
        try await withBroker { broker in
            let connected = try await Connected.connect(.test(broker))
            try await connected.client.subscribe("x")
            await connected.client.disconnect()
            #expect(try await connected.events.end().last == .closed(nil))
            #expect(try await connected.messages.end().isEmpty)
            await #expect(throws: MosquittoError.closed(operation: "publish to 'x'")) {
                try await connected.client.publish(topic: "x", payload: "late")
            }
            await #expect(throws: MosquittoError.closed(operation: "subscribe to 'y'")) {
                try await connected.client.subscribe("y")
            }
            await #expect(
                throws: MosquittoError.invalidConfiguration(
                    "this client was disconnected; make a new MosquittoClient to connect again")
            ) {
                try await connected.client.connect()
            }
        }
    }

    @Test func aSlowConsumerLosesTheOldestMessagesCounted() async throws {
        try await withBroker { broker in
            let configuration = MosquittoConfiguration.test(broker) { $0.messageBufferLimit = 10 }
            let client = MosquittoClient(configuration: configuration, logger: testLogger())
            try await client.connect()
            // QoS 0 towards us: the broker sends without waiting for acknowledgements, in order.
            try await client.subscribe("flood", qos: .atMostOnce)
            try await withClient(.test(broker)) { sender in
                for index in 0..<50 {
                    try await sender.client.publish(topic: "flood", payload: "\(index)", qos: .atLeastOnce)
                }
            }
            // Our PUBACK comes on the same connection after the flood: once it is here, so is the flood.
            try await client.publish(topic: "ping", payload: "", qos: .atLeastOnce)
            let statistics = client.statistics
            #expect(statistics.received == 50)
            #expect(statistics.dropped == 40)
            await client.disconnect()
            var seen: [String] = []
            for await message in client.messages { seen.append(message.payloadString ?? "") }
            // The newest survive.
            #expect(seen == (40..<50).map { "\($0)" })
        }
    }

    @Test func invalidTopicsAndFiltersAreRejectedBeforeTheBroker() async throws {
        try await withBroker { broker in
            try await withClient(.test(broker)) { client in
                await #expect(
                    throws: MosquittoError.invalidTopic(
                        "topic 'a/+/b' contains a wildcard (+ or #), which only subscriptions may use")
                ) {
                    try await client.client.publish(topic: "a/+/b", payload: "x")
                }
                await #expect(
                    throws: MosquittoError.invalidTopic(
                        "in topic filter 'a/#/b', '#' must be a whole level and the last one")
                ) {
                    try await client.client.subscribe("a/#/b")
                }
                await #expect(throws: MosquittoError.invalidTopic("topic filter is empty")) {
                    try await client.client.subscribe("")
                }
                // Still usable afterwards.
                try await client.client.publish(topic: "a/b", payload: "fine")
            }
        }
    }
}
