import Foundation
import HubTestKit
import Mosquitto
import Testing

/// After a flood of live messages (`FloodWatch`: 500 within 50 s), which may have overflowed the broker's queue for
/// hubd (`max_queued_messages`), hubd subscribes again once a quiet second has passed: each sensor's newest retained
/// status comes after the flood. A trickle never does (`FloodWatchTests`), so a home's hub sets no timer for it.
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
}
