import AsyncHTTPClient
import Foundation
import HubCore
import HubTestKit
import NIOCore
import Testing

/// With `store:`, the history is in the store's database: two built hubd agents of one cluster on a real
/// PostgreSQL 15 and Mosquitto, one taking a numeric sensor's readings and the other a sensor's status changes (each
/// holds its sensor's partition), and `hubctl history`, `hubctl events` (on a machine of their own) and either
/// agent's API answer with all of them. No agent keeps a `history.sqlite`.
@Suite(.timeLimit(.minutes(6)))  // with the wait for one of the two PostgreSQL servers a test process runs at once
struct StoreHistoryTests {
    @Test func everyAgentsReadingsAndEventsAreReadBackFromTheStore() async throws {
        try await withPostgres { server in
            try await server.createDatabase("cluster")
            try await withBroker { broker in
                let first = try RunningHub(configuration: ClusterDutyTests.configuration(server, agent: "hub-1"))
                let second = try RunningHub(configuration: ClusterDutyTests.configuration(server, agent: "hub-2"))
                let config = ["--config", first.configFile]
                let set = try await first.hubctl.run(
                    ["broker", "set", "--host", broker.host, "--port", "\(broker.port)"] + config)
                #expect(set.status == 0, "\(set.standardError)")
                for arguments in [
                    ["hall"],
                    [
                        "living room", "--kind", "numeric", "--topic", "climate/kitchen", "--value", "temperature",
                        "--unit", "°C",
                    ],
                ] {
                    let added = try await first.hubctl.run(["sensors", "add"] + arguments + config)
                    #expect(added.status == 0, "\(added.standardError)")
                }
                try await first.startAndWaitUntilReady()
                let address = try await second.startAndWaitForHTTP()

                // Partitions (ClusterPartitionsTests): climate/kitchen's is hub-1's, hall's hub-2's.
                let temperatures = (1...10).map { 20 + Double($0) / 4 }
                try await publish(
                    broker,
                    temperatures.map { ("climate/kitchen", Array(#"{"temperature":\#($0)}"#.utf8)) }
                        + (1...10).map { ("hall", Array("status \($0)".utf8)) })
                let events = try await ClusterDutyTests.count(
                    10, "sensor event", "sensor=hall", "event=changed", in: [first, second])
                #expect(events == [0, 10], "\(events)")

                // hubctl elsewhere: only the configuration, no state directory of either agent's.
                let elsewhere = try Hubctl()
                let otherConfig = elsewhere.state.file("hubd.yaml")
                try ClusterDutyTests.configuration(server, agent: "hub-3").write(
                    toFile: otherConfig, atomically: true, encoding: .utf8)
                try await eventually("every reading in the store's history", within: .seconds(15)) {
                    let json = try await elsewhere.run("history", "living room", "--json", "--config", otherConfig)
                    let answer = try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8))
                    let readings = (answer as? [String: Any])?["readings"] as? [[String: Any]] ?? []
                    return readings.compactMap { $0["value"] as? Double }.sorted() == temperatures
                }
                let daily = try await elsewhere.run(
                    "history", "living room", "--every", "day", "--since", "2d", "--config", otherConfig)
                #expect(daily.standardOutput.contains("20.25 / 21.38 / 22.5 °C"), "\(daily.standardOutput)")
                try await eventually("every event in the store's history") {
                    let csv = try await elsewhere.run("events", "hall", "--csv", "--config", otherConfig)
                    let changes = csv.standardOutput.split(separator: "\n").filter { $0.contains(",changed,") }
                    return Set(changes.compactMap { $0.split(separator: ",").last })
                        == Set((1...10).map { "status \($0)" })
                        && changes.count == 10
                }
                // Either agent's API reads the same.
                let response = try await HTTPClient.shared.execute(
                    authorized(HTTPClientRequest(url: "http://\(address)/api/v1/events?sensor=hall")),
                    timeout: .seconds(30))
                #expect(response.status.code == 200)
                let body = String(buffer: try await response.body.collect(upTo: 1 << 20))
                let listed = try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [[String: Any]] ?? []
                #expect(listed.filter { $0["event"] as? String == "changed" }.count == 10, "\(body)")
                // hubctl events --json writes what the API answers, object for object.
                let json = try await elsewhere.run("events", "hall", "--json", "--config", otherConfig)
                #expect(json.status == 0, "\(json.standardError)")
                #expect(json.standardOutput == body + "\n", "\(json.standardOutput)")
                #expect(listed.first.map { Set($0.keys) } == ["time", "sensor", "event", "from", "to", "detail"])
                let both = try await elsewhere.run("events", "hall", "--json", "--csv", "--config", otherConfig)
                #expect(both.status == 64 && both.standardError.contains("--csv and --json do not go together"))

                // Each agent says how its queue to the store's database is doing.
                try await eventually("hubctl status shows the history's queue") {
                    let status = try await first.hubctl.run("status", "--config", first.configFile)
                    return status.standardOutput.contains("History (store): connected")
                        && status.standardOutput.contains(", 0 queued")
                }
                for hub in [first, second] {
                    #expect(await hub.stop() == 0)
                    #expect(!FileManager.default.fileExists(atPath: hub.hubctl.state.file("history.sqlite")))
                }
                // The database down: hubctl says which, with the exit status for an unavailable service.
                await server.stop()
                let down = try await elsewhere.run("events", "--config", otherConfig)
                #expect(down.status == 69, "\(down.standardError)")
                #expect(down.standardError.contains("postgres://") && down.standardError.contains("/cluster"))
            }
        }
    }
}
