import Foundation
import HubCore
import HubTestKit
import Testing

/// A rule's `rate_limit` in a cluster is the cluster's: two built hubd agents on a real PostgreSQL 15 and Mosquitto
/// each take part of a sensor's ten changes, and a rule allowing one notification an hour sends one, the other nine
/// held back, whichever agent committed them. Without the shared limit each agent would let its first through.
@Suite(.timeLimit(.minutes(2)))
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
                let hubs = try ["hub-1", "hub-2"].map {
                    try RunningHub(configuration: ClusterDutyTests.configuration(server, agent: $0) + notifiers)
                }
                let config = ["--config", hubs[0].configFile]
                let set = try await hubs[0].hubctl.run(
                    ["broker", "set", "--host", broker.host, "--port", "\(broker.port)"] + config)
                #expect(set.status == 0, "\(set.standardError)")
                let added = try await hubs[0].hubctl.run(["sensors", "add", "hall"] + config)
                #expect(added.status == 0, "\(added.standardError)")
                for hub in hubs { try await hub.startAndWaitUntilReady() }

                for index in 1...10 { try await publish(broker, "hall", "status \(index)") }
                let events = try await ClusterDutyTests.count(10, "sensor event", "sensor=hall", in: hubs)
                #expect(events.reduce(0, +) == 10 && events.allSatisfy { $0 > 0 }, "\(events)")
                // Both agents' counts of what the limit held back (their status files, written every 5 s).
                try await eventually("nine held back", within: .seconds(15)) {
                    hubs.map { $0.status?.notifications?.suppressed ?? 0 }.reduce(0, +) == 9
                }
                let sent = receiver.requests.filter { $0.path == "/events" }
                #expect(sent.count == 1, "\(sent.count) notifications sent")
                for hub in hubs { #expect(await hub.stop() == 0) }
                await receiver.stop()
            }
        }
    }
}
