import Foundation
import HubCore
import HubTestKit
import Mosquitto
import Testing

/// Per-sensor order in a cluster: three built hubd agents on a real PostgreSQL 15 and Mosquitto, 1,000 sensors, a
/// burst of 3 retained QoS 1 statuses each. The round-robin hands each sensor's three statuses to the three agents
/// (1,000 is one more than a multiple of 3); one agent is paused (SIGSTOP) through the burst, so its share is
/// committed after the others' and two sensors in three end on an older status. The agents see it (a row another
/// agent changed a moment before), read the retained statuses once the burst is over, and every sensor ends on its
/// last status. Without the re-read this fails (checked).
@Suite(.timeLimit(.minutes(3)))
struct ClusterOrderTests {
    @Test func everySensorEndsOnItsLastRetainedStatusAfterABurst() async throws {
        try await ClusterIngestTests.withAgents(3) { server, broker, _, hubs in
            let client = try await publisher(broker, id: "burst")
            let rounds = ClusterIngestTests.rounds
            let paused = try #require(hubs[0].child)
            paused.send(SIGSTOP)
            for round in 1...rounds {
                for sensor in ClusterIngestTests.sensors {
                    try await client.publish(topic: sensor, payload: "r\(round)", qos: .atLeastOnce, retain: true)
                }
            }
            await client.disconnect()
            let count = ClusterIngestTests.sensors.count
            // The other two commit their shares (or 2 s of them: a lagging agent's queue is looked at for rows
            // changed in the last 10 s, and a loaded machine takes seconds more to work through it), then the
            // paused one its own, older ones among them.
            let resume = ContinuousClock.now + .seconds(2)
            while ContinuousClock.now < resume,
                try await server.count("SELECT count(*) FROM events WHERE hub = 'block-a'", database: "burst")
                    < 2 * count
            {
                try await Task.sleep(for: .milliseconds(100))
            }
            paused.send(SIGCONT)
            try await eventually("every status of the burst has its event", within: .seconds(90)) {
                try await server.count(
                    "SELECT count(*) FROM events WHERE hub = 'block-a' AND new LIKE 'r%'", database: "burst")
                    >= count * rounds
            }
            try await eventually("every sensor on its last status in the store", within: .seconds(45)) {
                try await server.count(
                    "SELECT count(*) FROM sensorhub_sensors WHERE document::json->>'status' = 'r\(rounds)'",
                    database: "burst") == count
            }
            // The agents said what they read and put right.
            var corrected = 0
            for hub in hubs {
                while let line = try? await hub.log.next(
                    within: .milliseconds(500), "a re-read",
                    where: { $0.contains("read the retained statuses of sensors") })
                {
                    let field = line.split(separator: " ").first { $0.hasPrefix("corrected=") }
                    corrected += field.flatMap { Int($0.dropFirst("corrected=".count)) } ?? 0
                }
            }
            print("cluster order: \(count) sensors × \(rounds) retained statuses; \(corrected) put right by a re-read")
        }
    }
}
