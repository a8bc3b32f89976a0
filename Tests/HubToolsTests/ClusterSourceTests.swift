import Foundation
import HubCore
import HubTestKit
import SDS011Simulator
import Testing

/// A source in a cluster is driven by one agent: two built hubd agents configured with the same SDS011 (a simulated
/// one on a pseudo-terminal), on a real PostgreSQL 15 and Mosquitto. Only the holder of `sds011:<name>` opens the
/// port; killed, the other takes it over within the lease and a renewal, and the readings go on.
@Suite(.timeLimit(.minutes(6)))  // with the wait for one of the two PostgreSQL servers a test process runs at once
struct ClusterSourceTests {
    @Test func oneAgentDrivesTheSDS011AndAnotherTakesItOverWhenItDies() async throws {
        try await withPostgres { server in
            try await server.createDatabase("cluster")
            try await withBroker { broker in
                let link = FileManager.default.temporaryDirectory.appendingPathComponent("ttySDS-\(UUID().uuidString)")
                    .path
                let simulator = try SDS011Simulator(linkPath: link) {
                    $0.pm25 = 10
                    $0.pm10 = 20
                }
                defer { simulator.stop() }
                let sds011 = """

                    sds011:
                      port: \(link)
                      interval: 1s
                      warm_up: 0s
                      samples: 1
                    """
                let first = try RunningHub(
                    configuration: ClusterDutyTests.configuration(server, agent: "hub-1") + sds011)
                let second = try RunningHub(
                    configuration: ClusterDutyTests.configuration(server, agent: "hub-2") + sds011)
                let set = try await first.hubctl.run(
                    ["broker", "set", "--host", broker.host, "--port", "\(broker.port)", "--config", first.configFile])
                #expect(set.status == 0, "\(set.standardError)")
                try await withListener(broker, subscribing: "sensorhub/sds011/#") { readings in
                    // The log is read from the start: the duty comes before the port is opened.
                    try first.start()
                    try await first.waitForLog("took a cluster duty", "duty=sds011:air quality", "agent=hub-1")
                    try await first.waitForLog("SDS011 ready")
                    for _ in 0..<3 { _ = try await readings.next(within: .seconds(10), "a reading") { _ in true } }
                    // The other agent, configured alike, leaves the port alone while hub-1 holds the duty: nothing
                    // about the SDS011 in its log from its start on.
                    try second.start()
                    let opened = try? await second.log.next(within: .seconds(4), "the SDS011 opened") {
                        $0.contains("SDS011 ready") || $0.contains("cannot open the SDS011")
                            || $0.contains("duty=sds011")
                    }
                    #expect(opened == nil, "\(opened ?? "")")

                    _ = await first.stop(SIGKILL)
                    let killed = ContinuousClock.now
                    try await second.waitForLog(
                        "took a cluster duty", "duty=sds011:air quality", "agent=hub-2", within: .seconds(12))
                    try await second.waitForLog("SDS011 ready", within: .seconds(5))
                    let moved = ContinuousClock.now - killed
                    // The stated bound, lease + renewal, with 3 s for a loaded machine.
                    #expect(moved < .seconds(5) + .seconds(5) / 3 + .seconds(3), "took \(moved)")
                    simulator.update { $0.pm25 = 33 }
                    _ = try await readings.next(within: .seconds(10), "a reading from hub-2") { message in
                        let json = try? JSONSerialization.jsonObject(with: Data(message.payload)) as? [String: Any]
                        return json?["pm25"] as? Double == 33
                    }
                }
                #expect(await second.stop() == 0)
            }
        }
    }
}
