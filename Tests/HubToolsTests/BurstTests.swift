import Foundation
import HubTestKit
import Testing

/// A burst larger than Mosquitto keeps for a client that reads nothing in MQTT 3.1.1 (20 in flight and 1,000
/// queued, its defaults), published while hubd can't read — as when a mobile sensor uploads a walk while the disk
/// is slow. hubd, paused by SIGSTOP, speaks MQTT 5 with a Receive Maximum of 200: the broker keeps 200 in flight to
/// it and 1,000 queued beyond those, so a burst of 1,100 arrives whole (about 1,020 of it in MQTT 3.1.1).
@Suite(.timeLimit(.minutes(3)))
struct BurstTests {
    @Test func aBurstPastTheBrokersQueueWhileHubdIsPausedIsNotDropped() async throws {
        try await withBroker { broker in
            let hub = try RunningHub()
            try await hub.prepare(broker, sensors: ["door"])
            try await hub.startAndWaitUntilReady()
            let hubd = try #require(hub.child)
            let count = 1100
            hubd.send(SIGSTOP)
            do {
                try await publish(
                    broker, (0..<count).map { ("door", Array("s\($0)".utf8)) }, retain: true)
            } catch {
                hubd.send(SIGCONT)
                throw error
            }
            hubd.send(SIGCONT)
            try? await eventually("every status counted by hubd", within: .seconds(30)) {
                hub.status?.counters.changes == count
            }
            let changes = hub.status?.counters.changes ?? 0
            #expect(changes == count, "hubd counted \(changes) of the \(count) statuses")
            // The registry is written every flush interval, on the background thread: after the counters (the status
            // file follows them within a second) it may still be a flush behind.
            try await eventually("the registry has the last status", within: .seconds(30)) {
                try hub.sensor("door")?.status == "s\(count - 1)"
            }
            let log = try String(contentsOfFile: broker.logFile, encoding: .utf8)
            #expect(!log.contains("Outgoing messages are being dropped"), "\(log)")
            await hub.stop()
        }
    }
}
