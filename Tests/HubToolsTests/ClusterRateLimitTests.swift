import Foundation
import HubCore
import HubTestKit
import Testing

/// A rule's `rate_limit` in a cluster is the cluster's: two built hubd agents on a real PostgreSQL 15 and Mosquitto;
/// the agent holding a sensor's partition takes its first five changes, then stops, and the other takes the
/// partition and the last five; a rule allowing one notification an hour sends one, the other nine held back,
/// whichever agent committed them. Without the shared limit each agent would let its first through.
@Suite(.timeLimit(.minutes(6)))  // with the wait for one of the two PostgreSQL servers a test process runs at once
struct ClusterRateLimitTests {
    @Test func aRateLimitHoldsAcrossAgents() async throws {
        try await withPostgres { server in
            try await server.createDatabase("cluster")
            try await withBroker { broker in
                let receiver = try await TestHTTPServer.start()
                let notifiers = """

                    notifiers:
                      backends:
                        hook: { type: webhook, url: "\(receiver.url)/events" }
                      rules:
                        hall: { sensors: [hall], events: [changed], backends: [hook], rate_limit: 1h }
                    """
                // No silence timeout: the sensor must not go silent while its partition changes hands.
                let hubs = try ["hub-1", "hub-2"].map {
                    try RunningHub(
                        configuration: PostgresStoreTests.configuration(server, database: "cluster") + """

                            cluster: { group: block-a, agent: \($0), lease: 5s }
                            """ + notifiers)
                }
                let config = ["--config", hubs[0].configFile]
                let set = try await hubs[0].hubctl.run(
                    ["broker", "set", "--host", broker.host, "--port", "\(broker.port)"] + config)
                #expect(set.status == 0, "\(set.standardError)")
                let added = try await hubs[0].hubctl.run(["sensors", "add", "hall"] + config)
                #expect(added.status == 0, "\(added.standardError)")
                for hub in hubs { try await hub.startAndWaitUntilReady() }

                // hall's partition is hub-2's (ClusterPartitionsTests): five changes there, then it stops and
                // hub-1 takes the partition and the next five.
                for index in 1...5 { try await publish(broker, "hall", "status \(index)") }
                let before = try await Self.count(5, in: hubs)
                #expect(before.changes == [0, 5], "\(before)")
                #expect(await hubs[1].stop() == 0)
                for index in 6...10 { try await publish(broker, "hall", "status \(index)") }
                let after = try await Self.count(5, in: hubs)
                #expect(after.changes == [5, 0], "\(after)")
                let held: Int = (before.held + after.held).reduce(0, +)
                #expect(held == 9, "\(before), \(after)")
                let sent = receiver.requests.filter { $0.path == "/events" }
                #expect(sent.count == 1, "\(sent.count) notifications sent")
                #expect(await hubs[0].stop() == 0)
                await receiver.stop()
            }
        }
    }

    /// Reads each hub's log until `changes` of hall's changes in all, then for a second more: its changes and the
    /// notifications the rate limit held back.
    static func count(_ changes: Int, in hubs: [RunningHub]) async throws -> (changes: [Int], held: [Int]) {
        var (seen, held) = (Array(repeating: 0, count: hubs.count), Array(repeating: 0, count: hubs.count))
        let deadline = ContinuousClock.now + .seconds(15)
        var quietSince: ContinuousClock.Instant?
        while ContinuousClock.now < deadline {
            if seen.reduce(0, +) >= changes {
                if quietSince == nil { quietSince = .now }
                if ContinuousClock.now - quietSince! >= .seconds(1) { break }
            }
            for (index, hub) in hubs.enumerated() {
                guard
                    let line = try? await hub.log.next(
                        within: .milliseconds(100), "a line",
                        where: {
                            ($0.contains("sensor event") && $0.contains("sensor=hall") && $0.contains("event=changed"))
                                || $0.contains("notification suppressed by the rate limit")
                        })
                else { continue }
                if line.contains("sensor event") { seen[index] += 1 } else { held[index] += 1 }
            }
        }
        return (seen, held)
    }
}
