import Foundation
import HubCore
import HubTestKit
import Mosquitto
import Testing

/// `hubd.status.json`, what `hubctl status` reads, against the built hubd and a real broker.
@Suite(.timeLimit(.minutes(2)))
struct StatusFileTests {
    /// `hubctl status` follows a running hub within 5 s: the status file is written every 5 s (within a second of
    /// its counters moving, it was a home's SD card's third-largest writer: docs/performance.md, the write budget).
    @Test func statusCountersFollowTheHubWithinFiveSeconds() async throws {
        try await withBroker { broker in
            let hub = try RunningHub()
            try await hub.prepare(broker, sensors: ["kitchen"])
            try await hub.startAndWaitUntilReady()
            // Just after a status file was written, when the next is 5 s away.
            let written = hub.status?.updated
            try await eventually("a status file written", within: .seconds(10)) { hub.status?.updated != written }
            let counted = hub.status?.counters.messages ?? 0
            try await publish(broker, "kitchen", "open")
            let sent = ContinuousClock.now
            try await eventually("hubctl status counts the message", within: .seconds(7.5)) {
                hub.status?.counters.messages == counted + 1
            }
            let status = try await hub.hubctl.run("status")
            #expect(status.standardOutput.contains("\(counted + 1) received"), "\(status.standardOutput)")
            print("status file counted the message \(ContinuousClock.now - sent) after it was published")
            #expect(await hub.stop() == 0)
        }
    }
}
