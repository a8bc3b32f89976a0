import Foundation
import HubCore
import HubRemote
import HubTestKit
import Testing

/// Leases and heartbeats on a real PostgreSQL 15: one holder a duty, a lease that runs out moves with a new epoch,
/// a graceful leave hands everything on at once, and every agent is listed with what it holds.
@Suite(.timeLimit(.minutes(6)))  // with the wait for one of the two PostgreSQL servers a test process runs at once
struct ClusterDatabaseTests {
    /// A duty another agent holds.
    static let none: Int64? = nil

    func agent(_ server: PostgresServer, _ name: String) -> ClusterDatabase {
        var settings = ClusterSettings(group: "block-a", agent: name)
        settings.lease = .seconds(5)
        return ClusterDatabase(server: server.settings(database: "cluster"), settings: settings, logger: testLogger)
    }

    @Test func oneHolderADutyAndTakeoverAfterExpiry() async throws {
        try await withPostgres { server in
            try await server.createDatabase("cluster")
            let (a, b) = (agent(server, "hub-1"), agent(server, "hub-2"))
            let started = Timestamp.now
            let first = try await a.renew(wanted: ["silence", "homeassistant"], started: started)
            #expect(first == ["silence": 1, "homeassistant": 1])
            let refused = try await b.renew(wanted: ["silence"], started: started)
            #expect(refused == ["silence": Self.none])
            // A second process under hub-1's name is refused, and holds nothing; its leaving takes nothing away.
            let twin = agent(server, "hub-1")
            await #expect(throws: AgentNameInUse.self) { try await twin.renew(wanted: ["silence"], started: started) }
            try await twin.leave()
            let stillHeld = try await server.psql(
                "SELECT expires > now() FROM sensorhub_leases WHERE duty = 'silence'", database: "cluster")
            #expect(stillHeld == "t")
            // Renewed by its holder: the same epoch.
            #expect(
                try await a.renew(wanted: ["silence"], started: started)
                    == ["silence": 1])
            // hub-1's lease runs out (as when it stops renewing): hub-2 takes it, a new epoch.
            _ = try await server.psql(
                "UPDATE sensorhub_leases SET expires = now() - interval '1 second' WHERE duty = 'silence'",
                database: "cluster")
            #expect(try await b.renew(wanted: ["silence"], started: started) == ["silence": 2])
            #expect(
                try await a.renew(wanted: ["silence"], started: started)
                    == ["silence": Self.none])
            let agents = try await b.agents()
            #expect(agents.map(\.name) == ["hub-1", "hub-2"] && agents.allSatisfy(\.alive))
            // What each holds, as of its last renewal (not the one before).
            #expect(agents[0].duties == ["homeassistant"] && agents[0].version == SensorHubVersion.current)
            #expect(agents[1].duties == ["silence"])
            // hub-2 leaves: hub-1 takes silence at its next renewal, without waiting for the lease.
            try await b.leave()
            #expect(try await a.renew(wanted: ["silence"], started: started) == ["silence": 3])
            let after = try await a.agents()
            #expect(after.first { $0.name == "hub-2" }?.alive == false)
            await a.close()
        }
    }
}
