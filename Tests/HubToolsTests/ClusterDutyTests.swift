import Foundation
import HubCore
import HubTestKit
import Testing

/// Two built hubd agents of one cluster on a real PostgreSQL 15 and Mosquitto: each says it is alive, exactly one
/// holds each duty, one agent takes all of a sensor's messages (its partition's holder) and declares it offline once
/// when it falls silent, `hubctl status` shows both, and
/// the duty moves when its holder stops (at the other's next renewal) or is killed (within the lease and one
/// renewal).
@Suite(.timeLimit(.minutes(6)))  // with the wait for one of the two PostgreSQL servers a test process runs at once
struct ClusterDutyTests {
    static func configuration(_ server: PostgresServer, agent: String) -> String {
        PostgresStoreTests.configuration(server, database: "cluster") + """

            sensors:
              silence_timeout: 3s
            cluster:
              group: block-a
              agent: \(agent)
              lease: 5s
            """
    }

    /// The agents `hubctl status --json` lists, and which of them holds `availability`.
    static func agents(_ hubctl: Hubctl, _ config: String) async throws -> (alive: [String], holder: [String]) {
        let status = try await hubctl.run("status", "--json", "--config", config)
        let object = try JSONSerialization.jsonObject(with: Data(status.standardOutput.utf8)) as? [String: Any]
        let cluster = object?["cluster"] as? [String: Any]
        let agents = cluster?["agents"] as? [[String: Any]] ?? []
        let alive = agents.filter { $0["alive"] as? Bool == true }
        return (
            alive.compactMap { $0["name"] as? String },
            alive.filter { ($0["duties"] as? [String])?.contains("availability") == true }.compactMap {
                $0["name"] as? String
            }
        )
    }

    /// Counts the log lines with all of `fragments` each hub writes, until `expected` in all, then for a second more.
    static func count(_ expected: Int, _ fragments: String..., in hubs: [RunningHub]) async throws -> [Int] {
        var counts = Array(repeating: 0, count: hubs.count)
        let deadline = ContinuousClock.now + .seconds(15)
        let matches: @Sendable (String) -> Bool = { line in fragments.allSatisfy { line.contains($0) } }
        while counts.reduce(0, +) < expected && ContinuousClock.now < deadline {
            for (index, hub) in hubs.enumerated() {
                if (try? await hub.log.next(within: .milliseconds(200), "a line", where: matches)) != nil {
                    counts[index] += 1
                }
            }
        }
        for (index, hub) in hubs.enumerated() {
            while (try? await hub.log.next(within: .seconds(1), "a line", where: matches)) != nil { counts[index] += 1 }
        }
        return counts
    }

    /// Waits until one of `hubs` logs that it took `duty`; returns when that was seen.
    static func waitForDuty(_ duty: String, in hubs: [RunningHub], within limit: Duration) async throws
        -> ContinuousClock.Instant
    {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            for hub in hubs {
                if (try? await hub.log.next(
                    within: .milliseconds(100), "a line",
                    where: { $0.contains("took a cluster duty") && $0.contains("duty=\(duty)") })) != nil
                {
                    return .now
                }
            }
        }
        throw TestKitError("no agent took \(duty) within \(limit)")
    }

    @Test func oneAgentHoldsEachDutyAndItMovesWhenItsHolderGoes() async throws {
        try await withPostgres { server in
            try await server.createDatabase("cluster")
            try await withBroker { broker in
                let first = try RunningHub(configuration: Self.configuration(server, agent: "hub-1"))
                let second = try RunningHub(configuration: Self.configuration(server, agent: "hub-2"))
                let config = first.configFile
                let set = try await first.hubctl.run(
                    ["broker", "set", "--host", broker.host, "--port", "\(broker.port)", "--config", config])
                #expect(set.status == 0, "\(set.standardError)")
                let added = try await first.hubctl.run(["sensors", "add", "hall", "--config", config])
                #expect(added.status == 0, "\(added.standardError)")
                try await first.startAndWaitUntilReady()
                try await second.startAndWaitUntilReady()
                try await eventually("both agents are alive, one holds availability") {
                    let (alive, holder) = try await Self.agents(first.hubctl, config)
                    return alive == ["hub-1", "hub-2"] && holder == ["hub-1"]
                }
                // hubctl status names each agent's partitions, twelve each.
                try await eventually("each agent holds twelve partitions") {
                    let status = try await first.hubctl.run("status", "--config", config)
                    return status.standardOutput.components(separatedBy: "(12 of 24)").count == 3
                }
                // Partitions: all of one sensor's messages reach the one agent that holds its partition.
                for index in 1...10 { try await publish(broker, "hall", "status \(index)") }
                let events = try await Self.count(
                    10, "sensor event", "sensor=hall", "event=changed", in: [first, second])
                #expect(events.sorted() == [0, 10], "\(events)")
                // Silent for 3 s: declared offline once, by the agent that holds its partition (and took its messages).
                let offline = try await Self.count(
                    1, "sensor event", "sensor=hall", "event=silent", in: [first, second])
                #expect(offline == events.map { $0 == 10 ? 1 : 0 }, "\(offline)")
                // A sensor added while both run: the agent holding its partition subscribes to it and takes its status.
                let porch = try await first.hubctl.run(["sensors", "add", "porch", "--config", config])
                #expect(porch.status == 0, "\(porch.standardError)")
                try await eventually("the new sensor's status in the store", within: .seconds(15)) {
                    try await publish(broker, "porch", "light on")
                    return try await first.hubctl.run(["sensors", "show", "porch", "--config", config])
                        .standardOutput.contains("light on")
                }
                // A graceful stop hands the duty on at the other's next renewal.
                #expect(await first.stop() == 0)
                try await second.waitForLog(
                    "took a cluster duty", "duty=availability", "agent=hub-2", within: .seconds(5))
                // Killed, it can't: the duty moves once its lease has run out (5 s) and the other renews.
                try await first.startAndWaitUntilReady()
                _ = await second.stop(SIGKILL)
                let killed = ContinuousClock.now
                try await first.waitForLog(
                    "took a cluster duty", "duty=availability", "agent=hub-1", within: .seconds(10))
                let moved = ContinuousClock.now - killed
                // The stated bound, lease + renewal, with 3 s for two processes' start-up on a loaded machine.
                #expect(moved < .seconds(5) + .seconds(5) / 3 + .seconds(3), "took \(moved)")
                try await eventually("hub-2 is gone, hub-1 holds availability") {
                    let (alive, holder) = try await Self.agents(first.hubctl, config)
                    return alive == ["hub-1"] && holder == ["hub-1"]
                }
                // hub-2's will said the hub is offline; hub-1 runs, and says online again within a renewal.
                try await withListener(broker, subscribing: "sensorhub/availability") { inbox in
                    _ = try await inbox.next(within: .seconds(5), "the hub online again") {
                        $0.payloadString == "online"
                    }
                }
                #expect(await first.stop() == 0)
            }
        }
    }
}
