import Foundation
import HubCore
import HubTestKit
import Testing

/// `store: postgres://…`: the built hubd and hubctl on a real PostgreSQL 15 and a real Mosquitto. hubctl works the
/// same against it, from any machine; hubd follows every change as it is committed, and writes statuses back there.
@Suite(.timeLimit(.minutes(6)))  // with the wait for one of the two PostgreSQL servers a test process runs at once
struct PostgresStoreTests {
    static func configuration(_ server: PostgresServer, database: String) -> String {
        """
        store:
          url: postgres://\(PostgresServer.user)@\(server.host):\(server.port)/\(database)
          password: \(PostgresServer.password)
          flush_interval: 100ms
        """
    }

    @Test func hubdAndHubctlShareTheRegistryInTheDatabase() async throws {
        try await withPostgres { server in
            try await server.createDatabase("building")
            try await withBroker { broker in
                let yaml = Self.configuration(server, database: "building")
                let hub = try RunningHub(configuration: yaml)
                let config = ["--config", hub.configFile]
                let set = try await hub.hubctl.run(
                    ["broker", "set", "--host", broker.host, "--port", "\(broker.port)"] + config)
                #expect(set.status == 0, "\(set.standardError)")
                let added = try await hub.hubctl.run(["sensors", "add", "kitchen"] + config)
                #expect(added.status == 0, "\(added.standardError)")
                try await hub.startAndWaitUntilReady()

                // hubctl on another machine: a state directory of its own, the same database.
                let elsewhere = try Hubctl()
                let otherConfig = elsewhere.state.file("hubd.yaml")
                try yaml.write(toFile: otherConfig, atomically: true, encoding: .utf8)
                let hall = try await elsewhere.run(["sensors", "add", "Hall", "--config", otherConfig])
                #expect(hall.status == 0, "\(hall.standardError)")
                let duplicate = try await elsewhere.run(["sensors", "add", "KITCHEN", "--config", otherConfig])
                #expect(duplicate.status == 64 && duplicate.standardError.contains("kitchen"))
                // Announced by the database, followed by hubd at once.
                try await hub.waitForLog("followed the registry", "subscribed=1")
                try await publish(broker, "Hall", "open")
                try await hub.waitForLog("sensor event", "sensor=Hall", "to=open")
                try await eventually("the status is in the database, for every hubctl") {
                    let show = try await elsewhere.run(["sensors", "show", "hall", "--json", "--config", otherConfig])
                    return show.standardOutput.contains(#""status": "open""#)
                }
                #expect(!FileManager.default.fileExists(atPath: hub.hubctl.storePath), "no defaults.json is written")
                // Shell completion reads the names from the database too.
                let completion = try await elsewhere.run(
                    "---completion", "sensors", "remove", "--", "positional@0", "5", "1", "hubctl", "sensors", "remove",
                    "--config", otherConfig, "h")
                #expect(completion.standardOutput == "Hall\n", "\(completion.standardError)")
                #expect(await hub.stop() == 0)

                // The database down: hubctl says which, with its exit status for an unavailable service.
                await server.stop()
                let down = try await elsewhere.run(["sensors", "add", "porch", "--config", otherConfig])
                #expect(down.status == 69, "\(down.standardError)")
                #expect(
                    down.standardError.contains("cannot reach the registry at postgres://"), "\(down.standardError)")
            }
        }
    }
}
