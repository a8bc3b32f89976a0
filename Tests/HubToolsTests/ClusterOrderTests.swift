import Foundation
import HubCore
import HubTestKit
import Mosquitto
import Testing

/// Per-sensor order when an agent stalls: three built hubd agents on a real PostgreSQL 15 and Mosquitto (lease 5 s),
/// 1,000 sensors, a burst of 3 retained QoS 1 statuses each, and one agent paused (SIGSTOP) in the middle of it for
/// longer than its lease. The others take its partitions (the broker sends them what it had not acknowledged); when
/// it wakes, the steps it had in hand find the partitions' leases taken (`PostgresRegistry.Fence`) and commit
/// nothing. Every status is applied once, in order, and every sensor ends on its last status. (With the fence
/// disabled this still passes: the new holder committed those messages first and the woken agent's steps skip them
/// by their packet ids. The fence is what stops them once the packet ids are forgotten, 4,096 messages later on a
/// partition, which `PostgresRegistryTests.aStepUnderALeaseAnotherAgentTookCommitsNothing` shows.)
@Suite(.timeLimit(.minutes(3)))
struct ClusterOrderTests {
    @Test func anAgentPausedPastItsLeaseCommitsNothingOutOfOrder() async throws {
        try await ClusterIngestTests.withAgents(3) { server, broker, _, hubs in
            let client = try await publisher(broker, id: "burst")
            let rounds = ClusterIngestTests.rounds
            let sensors = ClusterIngestTests.sensors
            let paused = try #require(hubs[0].child)
            for round in 1...rounds {
                for (index, sensor) in sensors.enumerated() {
                    if round == 2 && index == 0 { paused.send(SIGSTOP) }
                    try await client.publish(topic: sensor, payload: "r\(round)", qos: .atLeastOnce, retain: true)
                }
            }
            await client.disconnect()
            // Past the lease (5 s) and a renewal: the others hold its partitions by then.
            try await Task.sleep(for: .seconds(8))
            paused.send(SIGCONT)
            try await eventually("every sensor on its last status in the store", within: .seconds(60)) {
                try await server.count(
                    "SELECT count(*) FROM sensorhub_sensors WHERE document::json->>'status' = 'r\(rounds)'",
                    database: "burst") == sensors.count
            }
            try await eventually("every status has its event", within: .seconds(30)) {
                try await server.count(
                    "SELECT count(*) FROM events WHERE hub = 'block-a' AND new LIKE 'r%'", database: "burst")
                    >= sensors.count * rounds
            }
            // Each sensor's events, in the order their sequence gives: r1, r2, r3, each once.
            let rows = try await server.psql(
                """
                SELECT sensor, string_agg(new, ',' ORDER BY split_part(id, '-', 2)::int) FROM events
                WHERE hub = 'block-a' AND kind = 'changed' GROUP BY sensor
                """, database: "burst")
            let wrong = rows.split(separator: "\n").filter { !$0.hasSuffix("|r1,r2,r3") }
            #expect(wrong.isEmpty, "sensors whose statuses were not applied once each, in order: \(wrong.prefix(10))")
            let fenced = try await ClusterDutyTests.count(
                0, "another agent holds this partition now", in: [hubs[0]])
            print(
                """
                cluster order: \(sensors.count) sensors × \(rounds) retained statuses, one agent paused 8 s (lease 5 s); \
                every sensor r1,r2,r3 in order; steps the woken agent found fenced off: \(fenced[0])
                """)
        }
    }
}
