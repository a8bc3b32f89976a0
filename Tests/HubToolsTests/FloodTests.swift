import Foundation
import HubTestKit
import Mosquitto
import Testing

/// After a flood of live messages (`FloodWatch`: 500 within 50 s), which may have overflowed the broker's queue for
/// hubd (`max_queued_messages`), hubd subscribes again once a quiet second has passed (fewer than 10 messages:
/// `FloodWatch.isQuiet`): each sensor's newest retained status comes after the flood. A trickle is never a flood
/// (`FloodWatchTests`), so a home's hub sets no timer for it.
@Suite(.timeLimit(.minutes(2)))
struct FloodTests {
    @Test func aFloodIsFollowedByAnotherPassOnceQuiet() async throws {
        try await withBroker { broker in
            let hub = try RunningHub(configuration: HubdTests.fastFlush)
            try await hub.prepare(broker, sensors: ["kitchen"])
            try await publish(broker, "kitchen", "open", retain: true)
            try await hub.startAndWaitUntilReady()
            // The first quiet second after connecting: the first pass's second look.
            try await hub.waitForLog("subscribed again for the newest retained statuses")
            // 1,001 live statuses in a row cross two multiples of 500, in a few seconds: a flood.
            let flood = (0...1000).map { ("kitchen", Array(($0 % 2 == 0 ? "open" : "closed").utf8)) }
            try await publish(broker, flood, retain: true)
            try await publish(broker, "kitchen", "ajar", retain: true)
            try await hub.waitForLog("a burst may have overflowed the broker's queue for hubd", within: .seconds(30))
            try await hub.waitForLog("subscribed again for the newest retained statuses")
            try await eventually("the newest status") { try hub.sensor("kitchen")?.status == "ajar" }
            await hub.stop()
        }
    }

    /// A trickle of 4 statuses a second that goes on before, through and after the flood, never a second without a
    /// message: the watch still begins, takes the flood for one, and the second pass still comes once it is over.
    /// (With a quiet second one with no message at all, the watch never began at a steady trickle.)
    @Test func aFloodAmidATrickleIsFollowedByAnotherPass() async throws {
        try await withBroker { broker in
            let hub = try RunningHub(configuration: HubdTests.fastFlush)
            try await hub.prepare(broker, sensors: ["kitchen", "porch"])
            try await hub.startAndWaitUntilReady()
            var configuration = MosquittoConfiguration(host: broker.host, port: broker.port)
            configuration.operationTimeout = .seconds(10)
            try await MosquittoClient.withConnection(configuration: configuration, logger: testLogger()) { client in
                let trickle = Task {
                    for index in 0... {
                        let payload = Array("\(20 + Double(index % 10) / 10)".utf8)
                        try await client.publish(topic: "porch", payload: payload, qos: .atLeastOnce, retain: true)
                        try await Task.sleep(for: .milliseconds(250))
                    }
                }
                defer { trickle.cancel() }
                try await hub.waitForLog("subscribed again for the newest retained statuses")
                // The watch begins after a quiet second of its own, counted from the connection as the first pass's.
                try await Task.sleep(for: .seconds(2))
                let flood = (0...1000).map { ("kitchen", Array(($0 % 2 == 0 ? "open" : "closed").utf8)) }
                try await publish(broker, flood, retain: true)
                try await publish(broker, "kitchen", "ajar", retain: true)
                try await hub.waitForLog(
                    "a burst may have overflowed the broker's queue for hubd", within: .seconds(30))
                try await hub.waitForLog("subscribed again for the newest retained statuses")
                try await eventually("the newest status") { try hub.sensor("kitchen")?.status == "ajar" }
                #expect(try hub.sensor("porch")?.status != "Waiting")
            }
            await hub.stop()
        }
    }
}
