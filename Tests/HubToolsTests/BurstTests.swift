import Foundation
import HubTestKit
import Testing

/// A burst larger than Mosquitto keeps for a busy client (20 in flight and 1,000 queued, its defaults), published
/// while hubd can't read — as when a mobile sensor uploads a walk while the disk is slow. Paused by SIGSTOP, hubd
/// reads nothing; the broker keeps for it what its Receive Maximum lets it send (MQTT 5, 65,535) and drops what
/// exceeds its queue. Every status must arrive.
@Suite(.timeLimit(.minutes(3)))
struct BurstTests {
    @Test func aBurstPastTheBrokersQueueWhileHubdIsPausedIsNotDropped() async throws {
        try await withBroker { broker in
            let hub = try RunningHub()
            try await hub.prepare(broker, sensors: ["door"])
            try await hub.startAndWaitUntilReady()
            let hubd = try #require(hub.child)
            let count = 3000
            hubd.send(SIGSTOP)
            do {
                try await publish(
                    broker, (0..<count).map { ("door", Array("s\($0)".utf8)) }, retain: true)
            } catch {
                hubd.send(SIGCONT)
                throw error
            }
            hubd.send(SIGCONT)
            try await eventually("every status counted by hubd", within: .seconds(60)) {
                hub.status?.counters.changes == count
            }
            #expect(try hub.sensor("door")?.status == "s\(count - 1)")
            let log = try String(contentsOfFile: broker.logFile, encoding: .utf8)
            #expect(!log.contains("Outgoing messages are being dropped"), "\(log)")
            await hub.stop()
        }
    }
}
