import Foundation
import HubTestKit
import Mosquitto
import Testing

/// `sensors.sync_delay`: with hubd's defaults one journal `fsync` covers the statuses of 10 s (or 64 messages),
/// where `0` flushes each burst. Twenty statuses 50 ms apart, retained at QoS 1 as firmware publishes them.
@Suite struct SyncDelayTests {
    /// The journal's flushes for 20 statuses, each its own burst, under `configuration`.
    func flushes(_ configuration: String) async throws -> (records: Int, commits: Int) {
        try await withBroker { broker in
            let hub = try RunningHub(configuration: configuration)
            try await hub.prepare(broker, sensors: ["door"])
            try await hub.startAndWaitUntilReady()
            for index in 0..<20 {
                try await publish(broker, "door", index % 2 == 0 ? "open" : "closed", retain: true)
                try await Task.sleep(for: .milliseconds(50))
            }
            try await eventually("20 statuses journaled and flushed", within: .seconds(15)) {
                hub.status?.counters.journal?.records == 20
            }
            let journal = try #require(hub.status?.counters.journal)
            await hub.stop()
            return (journal.records, journal.commits)
        }
    }

    @Test func byDefaultOneFsyncCoversTheStatusesOfSeconds() async throws {
        let shared = try await flushes("")
        // About a second of statuses, 64 at most a flush: one or two flushes; 20 were one each.
        #expect(shared.commits <= 6, "\(shared)")
        let each = try await flushes("sensors: {sync_delay: 0}")
        #expect(each.commits >= 15, "\(each)")
    }
}
