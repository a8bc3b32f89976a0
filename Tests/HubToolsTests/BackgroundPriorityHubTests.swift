import Foundation
import HubCore
import HubTestKit
import Testing

/// hubd's registry and history writers run on a thread at nice +10 (`BackgroundThread`, issue 38), and nothing else
/// may: a thread inherits its creator's nice value, and libdispatch starts its workers from whichever thread
/// enqueues work. Checked in a real hubd with its default configuration after statuses made both writers work, not
/// in the test process, where hundreds of tests share that thread (CI once saw a dispatch worker at nice 10 there).
@Suite struct BackgroundPriorityHubTests {
    @Test func onlyHubdsBackgroundThreadIsLowered() async throws {
        try await withBroker { broker in
            let hub = try RunningHub(configuration: "")
            let sensors = (1...50).map { "p\($0)" }
            try await hub.prepare(broker, sensors: sensors)
            try await hub.startAndWaitUntilReady()
            for round in 1...5 {
                try await publish(broker, sensors.map { ($0, Array("s\(round)".utf8)) }, retain: true)
                try await Task.sleep(for: .milliseconds(300))
            }
            try await eventually("every status in the registry") {
                sensors.allSatisfy { (try? hub.sensor($0))??.status == "s5" }
            }
            let pid = try #require(hub.child?.pid)
            let threads = threadPriorities(of: pid)
            // Relative to hubd's main thread, which has the nice value hubd was started with (a test run under
            // `nice` starts it higher).
            let base = try #require(threads.first { $0.id == pid }?.nice)
            #expect(threads.contains { $0.name == "hub-background" && $0.nice == min(19, base + 10) }, "\(threads)")
            for thread in threads where thread.name != "hub-background" {
                #expect(thread.nice <= base, "hubd's thread \(thread.name) runs at nice \(thread.nice): \(threads)")
            }
            await hub.stop()
        }
    }
}
