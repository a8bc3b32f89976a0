import Foundation
import HubCore
import HubRemote
import HubTestKit
import Testing

/// The remote store against a real PostgreSQL 15 started by the test (`PostgresServer`), checked with `psql`:
/// the schema and its migrations, with and without PostGIS, both modes, an outage, two hubs in one database.
@Suite struct PostgresRemoteTests {
    static let (all, plain) = PostgresRemote.schemaVersions
    static func list(_ versions: Set<Int>) -> String { versions.sorted().map(String.init).joined(separator: ",") }

    @Test func theSchemaIsMadeOnceAndMigratingAgainChangesNothing() async throws {
        try await withPostgres { server in
            try await server.createDatabase("plain")
            let plain = settings(server, database: "plain", postgis: false)
            let first = try await PostgresRemote.connect(plain, logger: testLogger)
            #expect(first.versions == Self.plain && !first.usesPostGIS)
            await first.close()
            let second = try await PostgresRemote.connect(plain, logger: testLogger)
            #expect(second.versions == Self.plain)
            await second.close()
            #expect(
                try await server.psql(
                    "SELECT string_agg(version::text, ',' ORDER BY version) FROM sensorhub_migrations",
                    database: "plain") == Self.list(Self.plain))
            let columns = try await server.psql(
                "SELECT string_agg(column_name, ',' ORDER BY ordinal_position) FROM information_schema.columns "
                    + "WHERE table_name = 'readings'", database: "plain")
            #expect(columns == "hub,sensor_id,sensor,time,session,pm25,pm10,value,unit,lat,lon,alt,accuracy")
            #expect(try await server.psql("SELECT name FROM hubs", database: "plain") == "home")
            #expect(
                try await server.count("SELECT count(*) FROM pg_extension WHERE extname = 'postgis'", database: "plain")
                    == 0)
        }
    }

    /// PostGIS is installed here by scripts/install-deps (postgresql-15-postgis-3); without it the test says so.
    @Test(.enabled(if: PostgresServer.hasPostGIS, "postgresql-15-postgis-3 is not installed"))
    func withPostGISReadingsGetAGeographyWithAnIndex() async throws {
        try await withPostgres { server in
            try await server.createDatabase("gis")
            // A database migrated without PostGIS gets it later, when the extension is there.
            let plain = try await PostgresRemote.connect(
                settings(server, database: "gis", postgis: false), logger: testLogger)
            await plain.close()
            let remote = try await PostgresRemote.connect(settings(server, database: "gis"), logger: testLogger)
            #expect(remote.versions == Self.all && remote.usesPostGIS)
            try await remote.send([Make.mobile(1, session: "s"), Make.fixed(1)])
            await remote.close()
            let again = try await PostgresRemote.connect(settings(server, database: "gis"), logger: testLogger)
            #expect(again.versions == Self.all)
            await again.close()
            #expect(
                try await server.psql(
                    "SELECT string_agg(version::text, ',' ORDER BY version) FROM sensorhub_migrations", database: "gis")
                    == Self.list(Self.all))
            let point = try await server.psql(
                "SELECT round(ST_Y(position::geometry)::numeric, 4), round(ST_X(position::geometry)::numeric, 4) "
                    + "FROM readings WHERE position IS NOT NULL", database: "gis")
            #expect(point == "1.3001|103.8000")
            #expect(
                try await server.count("SELECT count(*) FROM readings WHERE position IS NULL", database: "gis") == 1)
            let index = try await server.psql(
                "SELECT indexdef FROM pg_indexes WHERE indexname = 'readings_position'", database: "gis")
            #expect(index.contains("USING gist (\"position\")") || index.contains("USING gist (position)"))
            // Within 50 m of the first reading: a spatial query the index serves.
            let near = try await server.count(
                "SELECT count(*) FROM readings WHERE ST_DWithin(position, ST_MakePoint(103.8, 1.3001)::geography, 50)",
                database: "gis")
            #expect(near == 1)
        }
    }

    @Test func streamModeSendsEverythingOnceEvenWhenSentAgain() async throws {
        try await withPostgres { server in
            try await server.createDatabase("stream")
            let directory = try TemporaryDirectory(prefix: "remote")
            let forwarder = try await makeForwarder(settings(server, database: "stream"), directory: directory)
            let session = "0123456789ab-1"
            let entries =
                [Make.session(start: true, sequence: 1, session: session, at: 0)]
                + (1...5).map { Make.mobile($0, session: session) } + [Make.fixed(1), Make.change(2, to: "open")]
            try await forwarder.queue.append(entries)
            await forwarder.run(untilEmpty: true)
            #expect(forwarder.statistics.sent == entries.count && forwarder.statistics.queued == 0)
            let db = "stream"
            #expect(
                try await server.count("SELECT count(*) FROM readings WHERE session = '\(session)'", database: db) == 5)
            #expect(try await server.count("SELECT count(*) FROM readings WHERE session IS NULL", database: db) == 1)
            #expect(try await server.count("SELECT count(*) FROM events", database: db) == 2)
            #expect(
                try await server.psql("SELECT sensor_id, sensor, ended IS NULL FROM sessions", database: db)
                    == "0123456789ab|walk|t")
            let first = try await server.psql(
                "SELECT pm25, pm10, lat, lon, alt, accuracy, (extract(epoch FROM time) * 1000)::bigint FROM readings "
                    + "WHERE session IS NOT NULL ORDER BY time LIMIT 1", database: db)
            #expect(first == "11|20|1.3001|103.8|15|4.5|\(Make.base + 1000)")
            #expect(
                try await server.psql("SELECT value, unit FROM readings WHERE session IS NULL", database: db) == "21|°C"
            )
            #expect(
                try await server.psql("SELECT id, kind, old, new FROM events WHERE kind = 'changed'", database: db)
                    == "d00d00d00d00-2|changed|closed|open")

            // The same batch again, as after a crash before the done mark: nothing new.
            let remote = try await PostgresRemote.connect(settings(server, database: db), logger: testLogger)
            try await remote.send(entries)
            await remote.close()
            #expect(try await server.count("SELECT count(*) FROM readings", database: db) == 6)
            #expect(try await server.count("SELECT count(*) FROM events", database: db) == 2)
            #expect(try await server.count("SELECT count(*) FROM sessions", database: db) == 1)
        }
    }

    @Test func recordModeSendsASessionWhenItEnds() async throws {
        try await withPostgres { server in
            try await server.createDatabase("record")
            let db = "record"
            let directory = try TemporaryDirectory(prefix: "remote")
            let forwarder = try await makeForwarder(settings(server, database: db, mode: .record), directory: directory)
            let session = "0123456789ab-1"
            let start = Make.session(start: true, sequence: 1, session: session, at: 0)
            try await forwarder.queue.append(
                [Make.mobile(1, session: session), start, Make.fixed(1)]
                    + (2...40).map { Make.mobile($0, session: session) } + [Make.change(2, to: "open")])
            await forwarder.run(untilEmpty: true)
            // Nothing of the open session; the fixed sensor and the door went.
            #expect(
                try await server.count("SELECT count(*) FROM readings WHERE session IS NOT NULL", database: db) == 0)
            #expect(try await server.count("SELECT count(*) FROM sessions", database: db) == 0)
            #expect(try await server.count("SELECT count(*) FROM readings", database: db) == 1)
            #expect(try await server.count("SELECT count(*) FROM events", database: db) == 1)
            #expect(forwarder.statistics.held == 41)

            try await forwarder.queue.append([Make.session(start: false, sequence: 3, session: session, at: 41)])
            await forwarder.run(untilEmpty: true)
            #expect(forwarder.statistics.queued == 0)
            #expect(
                try await server.count("SELECT count(*) FROM readings WHERE session = '\(session)'", database: db) == 40
            )
            #expect(
                try await server.psql(
                    "SELECT (extract(epoch FROM ended - started))::int FROM sessions WHERE id = '\(session)'",
                    database: db)
                    == "41")
            // In the order they came: the table's physical order is the insertion order here (no updates).
            let order = try await server.psql(
                "SELECT string_agg(pm25::int::text, ',' ORDER BY ctid) FROM readings WHERE session IS NOT NULL",
                database: db)
            #expect(order == (1...40).map { "\(10 + $0)" }.joined(separator: ","))
        }
    }

    @Test func aWrongPasswordSaysSo() async throws {
        try await withPostgres { server in
            var wrong = settings(server, database: "postgres")
            wrong.server.password = "not the password"
            let error = await #expect(throws: (any Error).self) {
                try await PostgresRemote.connect(wrong, logger: testLogger)
            }
            let described = RemoteForwarder.describe(try #require(error))
            #expect(described.contains("28P01"), "\(described)")
        }
    }

    @Test func twoHubsShareOneDatabase() async throws {
        try await withPostgres { server in
            try await server.createDatabase("shared")
            let db = "shared"
            for hub in ["home", "office"] {
                let directory = try TemporaryDirectory(prefix: "remote")
                let forwarder = try await makeForwarder(settings(server, database: db, hub: hub), directory: directory)
                // The same sensor id, times and event ids at both: each hub's rows are its own.
                try await forwarder.queue.append([Make.fixed(1), Make.fixed(2), Make.change(1, to: "open")])
                await forwarder.run(untilEmpty: true)
                #expect(forwarder.statistics.sent == 3)
            }
            #expect(
                try await server.psql("SELECT string_agg(name, ',' ORDER BY name) FROM hubs", database: db)
                    == "home,office")
            #expect(
                try await server.psql(
                    "SELECT string_agg(hub || ':' || n, ',' ORDER BY hub) FROM "
                        + "(SELECT hub, count(*) AS n FROM readings GROUP BY hub) AS r", database: db)
                    == "home:2,office:2")
            #expect(try await server.count("SELECT count(*) FROM events", database: db) == 2)
            #expect(try await server.count("SELECT count(*) FROM sensorhub_migrations", database: db) >= 1)
        }
    }
}
