import Foundation
import HubCore
import HubTestKit
import Mosquitto
import Testing

/// Three built hubd agents of one cluster on a real PostgreSQL 15 and Mosquitto, 1,000 sensors, a burst of QoS 1
/// statuses spread over the agents by their partitions: every status is applied once in the store (each
/// sensor's sequence counts its statuses, one event each), and a webhook on every agent gets each event once, from
/// the cluster's outbox in PostgreSQL.
@Suite(.timeLimit(.minutes(6)))  // with the wait for one of the two PostgreSQL servers a test process runs at once
struct ClusterIngestTests {
    static let sensors = (1...1_000).map { String(format: "s%04d", $0) }
    static let rounds = 3

    /// The agents' configuration: the store, the cluster, a webhook.
    static func configuration(_ server: PostgresServer, agent: String, webhook: String) -> String {
        PostgresStoreTests.configuration(server, database: "burst") + """

            cluster:
              group: block-a
              agent: \(agent)
              lease: 5s
            notifiers:
              backends:
                hook: { type: webhook, url: "\(webhook)/events", concurrency: 4 }
              rules:
                all: { backends: [hook] }
            """
    }

    /// Starts the agents with the sensors imported, runs `body`, and stops them.
    static func withAgents(
        _ count: Int, _ body: (PostgresServer, MosquittoBroker, TestHTTPServer, [RunningHub]) async throws -> Void
    ) async throws {
        try await withPostgres { server in
            try await server.createDatabase("burst")
            try await withBroker { broker in
                let receiver = try await TestHTTPServer.start()
                let hubs = try (1...count).map {
                    try RunningHub(
                        configuration: configuration(server, agent: "hub-\($0)", webhook: receiver.url))
                }
                let config = hubs[0].configFile
                let set = try await hubs[0].hubctl.run(
                    ["broker", "set", "--host", broker.host, "--port", "\(broker.port)", "--config", config])
                #expect(set.status == 0, "\(set.standardError)")
                let csv = FileManager.default.temporaryDirectory.appendingPathComponent("burst-\(UUID()).csv")
                try ("name\n" + sensors.joined(separator: "\n") + "\n").write(
                    to: csv, atomically: true, encoding: .utf8)
                defer { try? FileManager.default.removeItem(at: csv) }
                let imported = try await hubs[0].hubctl.run(["sensors", "import", csv.path, "--config", config])
                #expect(imported.status == 0, "\(imported.standardError)")
                for hub in hubs { try await hub.startAndWaitUntilReady() }
                try await body(server, broker, receiver, hubs)
                for hub in hubs { await hub.stop() }
                await receiver.stop()
            }
        }
    }

    /// The event ids the webhook received, with how many times each.
    static func delivered(_ receiver: TestHTTPServer) -> [String: Int] {
        var ids: [String: Int] = [:]
        for request in receiver.requests where request.path == "/events" {
            guard let body = try? JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any],
                let id = body["id"] as? String
            else { continue }
            ids[id, default: 0] += 1
        }
        return ids
    }

    @Test func threeAgentsApplyEveryStatusOfABurstOnce() async throws {
        try await Self.withAgents(3) { server, broker, receiver, hubs in
            let client = try await publisher(broker, id: "burst")
            let started = ContinuousClock.now
            for round in 1...Self.rounds {
                for sensor in Self.sensors {
                    try await client.publish(topic: sensor, payload: "r\(round)", qos: .atLeastOnce, retain: false)
                }
            }
            await client.disconnect()
            let expected = Self.sensors.count * Self.rounds
            try await eventually("every status has its event in the store", within: .seconds(90)) {
                try await server.count("SELECT count(*) FROM events WHERE hub = 'block-a'", database: "burst")
                    == expected
            }
            let took = ContinuousClock.now - started
            // Each status applied once: every sensor's sequence counts its statuses, and no event id is there twice.
            let sequences = try await server.psql(
                """
                SELECT (document::json->>'sequence')::int AS n, count(*) FROM sensorhub_sensors GROUP BY n ORDER BY n
                """, database: "burst")
            #expect(sequences == "\(Self.rounds)|\(Self.sensors.count)", "sequences and their counts: \(sequences)")
            let distinct = try await server.count(
                "SELECT count(DISTINCT id) FROM events WHERE hub = 'block-a'", database: "burst")
            #expect(distinct == expected)
            let newest = try await server.count(
                "SELECT count(*) FROM sensorhub_sensors WHERE document::json->>'status' = 'r\(Self.rounds)'",
                database: "burst")
            // Notifications: each event once, by the agent that committed it.
            try await eventually("the webhook has every event", within: .seconds(60)) {
                Self.delivered(receiver).count == expected
            }
            let twice = Self.delivered(receiver).filter { $0.value > 1 }
            #expect(twice.isEmpty, "delivered more than once: \(twice.keys.sorted().prefix(10))")
            // The cluster's outbox is empty once every delivery is marked done.
            try await eventually("the cluster's outbox is empty", within: .seconds(10)) {
                try await server.count("SELECT count(*) FROM sensorhub_outbox", database: "burst") == 0
            }
            // Which agent took what: each one's share of the statuses, from its counters.
            // (The status file is written every 5 s.)
            var shares: [Int] = []
            try await eventually("the agents' status files count every change", within: .seconds(10)) {
                shares = []
                for hub in hubs {
                    let status = try await hub.hubctl.run("status", "--json", "--config", hub.configFile)
                    let object =
                        try JSONSerialization.jsonObject(with: Data(status.standardOutput.utf8)) as? [String: Any]
                    shares.append(object?["changes"] as? Int ?? -1)
                }
                return shares.reduce(0, +) == expected
            }
            #expect(shares.allSatisfy { $0 > 0 }, "\(shares)")
            // One agent applies each sensor's messages, in the broker's order: every sensor ends on its last status.
            #expect(newest == Self.sensors.count, "\(newest) of \(Self.sensors.count) on the last round's status")
            print(
                """
                cluster burst: 3 agents, \(Self.sensors.count) sensors × \(Self.rounds) QoS 1 statuses in \(took) \
                to the last commit; changes per agent \(shares); sensors ending on the last round's status \(newest) \
                of \(Self.sensors.count)
                """)
        }
    }

    /// The same burst with the agent that holds the duties SIGKILLed a third of the way in, and not restarted: the
    /// others take its partitions (the broker kept their sessions' messages) and finish the burst, its duties move, and the webhook gets
    /// every event. A notification can reach the webhook twice only when it was in flight at the kill (delivered,
    /// not yet marked done): each such one's first delivery is before the kill, its second after.
    @Test func theOthersFinishTheBurstOfAKilledAgent() async throws {
        try await Self.withAgents(3) { server, broker, receiver, hubs in
            let client = try await publisher(broker, id: "burst")
            var kill: Task<ContinuousClock.Instant, Never>?
            for round in 1...Self.rounds {
                for (index, sensor) in Self.sensors.enumerated() {
                    if round == 2 && index == 0 {
                        // hub-1 started first: it holds every duty.
                        kill = Task {
                            _ = await hubs[0].stop(SIGKILL)
                            return ContinuousClock.now
                        }
                    }
                    try await client.publish(topic: sensor, payload: "r\(round)", qos: .atLeastOnce, retain: false)
                }
            }
            await client.disconnect()
            let killed = await kill!.value
            let survivors = Array(hubs.dropFirst())
            let took = try await ClusterDutyTests.waitForDuty("availability", in: survivors, within: .seconds(20))
            let moved = took - killed
            // The stated bound, lease + renewal, with 3 s for a loaded machine.
            #expect(moved < .seconds(5) + .seconds(5) / 3 + .seconds(3), "availability moved after \(moved)")
            let expected = Self.sensors.count * Self.rounds
            try await eventually("every status has its event in the store", within: .seconds(90)) {
                try await server.count("SELECT count(*) FROM events WHERE hub = 'block-a'", database: "burst")
                    >= expected
            }
            // Each status applied once: no sensor has two events to one status (a message hub-1 committed but had
            // not acknowledged, which the broker sent the adopting agent again, is known by its packet id).
            let twiceApplied = try await server.psql(
                """
                SELECT sensor || '=' || new FROM events WHERE hub = 'block-a' GROUP BY sensor, new HAVING count(*) > 1
                """, database: "burst")
            #expect(twiceApplied.isEmpty, "applied twice: \(twiceApplied.prefix(300))")
            let finished = ContinuousClock.now - killed
            let sequences = try await server.psql(
                """
                SELECT (document::json->>'sequence')::int AS n, count(*) FROM sensorhub_sensors GROUP BY n ORDER BY n
                """, database: "burst")
            #expect(sequences == "\(Self.rounds)|\(Self.sensors.count)", "sequences and their counts: \(sequences)")
            try await eventually("the webhook has every event", within: .seconds(60)) {
                Self.delivered(receiver).count == expected
            }
            try await eventually("the cluster's outbox is empty", within: .seconds(20)) {
                try await server.count("SELECT count(*) FROM sensorhub_outbox", database: "burst") == 0
            }
            // Delivered twice: only what was in flight when hub-1 died.
            var firsts: [String: ContinuousClock.Instant] = [:]
            var twice: [String] = []
            for request in receiver.requests where request.path == "/events" {
                guard let body = try? JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any],
                    let id = body["id"] as? String
                else { continue }
                if let first = firsts[id] {
                    // A request hub-1 sent just before it died is received a moment after (seen under load on CI):
                    // a second late. The second delivery is a survivor's, once hub-1's claim ran out.
                    #expect(
                        first <= killed + .seconds(1) && request.received > killed,
                        "\(id) delivered twice, not across the kill")
                    twice.append(id)
                } else {
                    firsts[id] = request.received
                }
            }
            // Messages the broker sent the adopting agent again, known and skipped (the status file's counters).
            try await Task.sleep(for: .seconds(5))
            var again = 0
            for hub in survivors {
                let status = try await hub.hubctl.run("status", "--json", "--config", hub.configFile)
                let object = try JSONSerialization.jsonObject(with: Data(status.standardOutput.utf8)) as? [String: Any]
                let rejected = object?["rejected"] as? [String: Int] ?? [:]
                again += rejected.filter { $0.key.contains("applied already") }.values.reduce(0, +)
            }
            // Every partition's session is held by a survivor: hub-1's were taken over when its lease ran out.
            let taken = try await server.count(
                """
                SELECT count(*) FROM sensorhub_leases
                WHERE duty LIKE 'partition:%' AND holder <> 'hub-1' AND expires > now()
                """, database: "burst")
            #expect(taken == ClusterPartitions.standard.count, "partitions the survivors hold: \(taken)")
            print(
                """
                cluster burst with a SIGKILL: \(expected) statuses, all applied once; availability moved after \(moved); \
                the burst finished \(finished) after the kill; sent again by the broker and skipped: \(again); notifications delivered twice (in flight at the kill): \(twice.count)
                """)
        }
    }

    /// PostgreSQL killed (a crash) in the middle of a burst and started again 2 s later: the agents retry their
    /// steps until it is back and lose nothing. An acknowledged status is committed, or (past the 2 s an
    /// acknowledgement is held for) kept in the agent's memory and committed once the database is back; only the
    /// agent dying during such an outage would lose those.
    @Test func aDatabaseRestartedUnderLoadLosesNothing() async throws {
        try await Self.withAgents(2) { server, broker, receiver, hubs in
            let client = try await publisher(broker, id: "burst")
            let sensors = Array(Self.sensors.prefix(200))
            let rounds = 6
            var outage: Task<Void, any Error>?
            for round in 1...rounds {
                if round == 3 {
                    outage = Task {
                        await server.kill()
                        try await Task.sleep(for: .seconds(2))
                        try await server.start()
                    }
                }
                for sensor in sensors {
                    try await client.publish(topic: sensor, payload: "r\(round)", qos: .atLeastOnce, retain: false)
                    try await Task.sleep(for: .milliseconds(2))
                }
            }
            await client.disconnect()
            let published = ContinuousClock.now
            try await outage!.value
            let expected = sensors.count * rounds
            try await eventually("every status has its event in the store", within: .seconds(60)) {
                try await server.count("SELECT count(*) FROM events WHERE hub = 'block-a'", database: "burst")
                    >= expected
            }
            let committed = ContinuousClock.now - published
            let twiceApplied = try await server.psql(
                """
                SELECT sensor || '=' || new FROM events WHERE hub = 'block-a' GROUP BY sensor, new HAVING count(*) > 1
                """, database: "burst")
            #expect(twiceApplied.isEmpty, "applied twice: \(twiceApplied.prefix(300))")
            let events = try await server.count(
                "SELECT count(*) FROM events WHERE hub = 'block-a'", database: "burst")
            #expect(events == expected)
            try await eventually("the webhook has every event", within: .seconds(60)) {
                Self.delivered(receiver).count == expected
            }
            print(
                """
                cluster burst with PostgreSQL killed and back 2 s later: \(expected) statuses, all applied once; \
                the last committed \(committed) after the last was published
                """)
        }
    }
}
