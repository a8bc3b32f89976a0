import Foundation
import HubCore
import HubTestKit
import Mosquitto
import Testing

/// hubd with `remote:` against a real broker and a real PostgreSQL 15: a mobile particulate sensor's readings land
/// in the database with their positions, their counters reach `hubctl status`, and readings queued while the
/// database is down survive a SIGKILL of hubd and arrive once after the restart.
@Suite struct RemoteHubTests {
    /// A mobile sensor's payload `index` seconds after `start`, along a line of positions.
    func payload(_ index: Int, start: Timestamp) -> (topic: String, payload: [UInt8]) {
        let time = Timestamp(millisecondsSince1970: start.millisecondsSince1970 + Int64(index) * 1000).iso8601
        let lat = 1.3 + Double(index) * 0.001
        return ("walk", Array(#"{"pm25":\#(10 + index),"lat":\#(lat),"lon":103.8,"time":"\#(time)"}"#.utf8))
    }

    @Test func mobileReadingsLandInPostgreSQLAndSurviveAnOutageAndASIGKILL() async throws {
        try await withBroker { broker in
            try await withPostgres { server in
                let db = "hub"
                try await server.createDatabase(db)
                let hub = try RunningHub(
                    configuration: """
                        remote:
                          url: postgres://\(PostgresServer.user)@127.0.0.1:\(server.port)/\(db)
                          hub: e2e
                          interval: 100ms
                          password_file: remote-password
                          tls: disable
                          max_back_off: 1s
                        sessions:
                          - sensors: [walk]
                            gap: 1h
                        """)
                try PostgresServer.password.write(
                    toFile: hub.hubctl.state.file("remote-password"), atomically: true, encoding: .utf8)
                try await hub.prepare(broker)
                let add = try await hub.hubctl.run("sensors", "add", "walk", "--kind", "particulate", "--topic", "walk")
                #expect(add.status == 0)
                let address = try await hub.startAndWaitForHTTP()
                let start = Timestamp(millisecondsSince1970: Timestamp.now.millisecondsSince1970 - 600_000)
                try await publish(broker, (1...5).map { payload($0, start: start) })
                try await eventually("five readings in PostgreSQL", within: .seconds(30)) {
                    (try? await server.count("SELECT count(*) FROM readings", database: db)) == 5
                }
                let rows = try await server.psql(
                    "SELECT hub, sensor, pm25, lat, lon FROM readings ORDER BY time", database: db)
                #expect(rows.split(separator: "\n").first == "e2e|walk|11|1.301|103.8")
                #expect(rows.split(separator: "\n").last == "e2e|walk|15|1.305|103.8")
                if PostgresServer.hasPostGIS {
                    #expect(
                        try await server.count("SELECT count(*) FROM readings WHERE position IS NOT NULL", database: db)
                            == 5)
                }
                try await eventually("the counters in the status file") { hub.status?.counters.remote?.sent ?? 0 >= 5 }
                let status = try await hub.hubctl.run("status")
                #expect(status.standardOutput.contains("Remote store"))
                #expect(status.standardOutput.contains("connected, "))
                let statusJSON = try await hub.hubctl.run("status", "--json").standardOutput
                let answer = try JSONSerialization.jsonObject(with: Data(statusJSON.utf8)) as? [String: Any]
                let remote = answer?["remote"] as? [String: Any]
                #expect(remote?["connected"] as? Bool == true && remote?["sent"] as? Int ?? 0 >= 5, "\(statusJSON)")
                let metrics = try await NumericSensorTests().get("http://\(address)/metrics").body
                for name in [
                    "sensorhub_remote_sent_total ", "sensorhub_remote_queued ", "sensorhub_remote_connected 1",
                ] {
                    #expect(metrics.contains(name), "\(name) in \(metrics)")
                }

                // The database goes away; readings wait in hubd's queue on disk; hubd is killed.
                await server.stop()
                try await publish(broker, (6...10).map { payload($0, start: start) })
                // Five readings, and the events their bands caused.
                try await eventually("five readings queued", within: .seconds(20)) {
                    hub.status?.counters.remote?.queued ?? 0 >= 5 && hub.status?.counters.remote?.failures ?? 0 > 0
                }
                await hub.stop(SIGKILL)
                try await server.start()
                try await hub.startAndWaitUntilReady()
                try await eventually("all ten readings in PostgreSQL", within: .seconds(30)) {
                    try await server.count("SELECT count(*) FROM readings", database: db) == 10
                }
                let values = try await server.psql(
                    "SELECT string_agg(pm25::int::text, ',' ORDER BY time) FROM readings", database: db)
                #expect(values == "11,12,13,14,15,16,17,18,19,20")
                // One session, still open (the gap is an hour), across the outage and the SIGKILL: every reading in it.
                let session = try await server.psql(
                    "SELECT id, sensor, ended IS NULL FROM sessions", database: db)
                let id = try #require(session.split(separator: "|").first.map(String.init))
                #expect(session.hasSuffix("|walk|t"), "\(session)")
                #expect(
                    try await server.count("SELECT count(*) FROM readings WHERE session = '\(id)'", database: db) == 10)
                #expect(await hub.stop() == 0)
            }
        }
    }
}
