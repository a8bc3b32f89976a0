import Foundation
import HubCore
import HubRemote
import HubTestKit
import Testing

/// Numbers, not a timed test: runs only with `REMOTE_BENCH=1` (`REMOTE_BENCH=1 scripts/run-tests --filter
/// RemoteBenchmark`) and prints how fast readings go into the queue on disk and from there into PostgreSQL.
@Suite struct RemoteBenchmark {
    @Test(.enabled(if: ProcessInfo.processInfo.environment["REMOTE_BENCH"] == "1"))
    func queueAndDrainRates() async throws {
        try await withPostgres { server in
            try await server.createDatabase("bench")
            let count = 20_000
            let entries = (0..<count).map { Make.mobile($0, session: "0123456789ab-1") }
            for (batch, postgis) in [(100, true), (500, true), (2_000, true), (500, false)] {
                try await server.psql(
                    "DROP TABLE IF EXISTS readings, events, sessions, hubs, sensorhub_migrations; DROP EXTENSION IF EXISTS postgis",
                    database: "bench")
                var remote = settings(server, database: "bench", postgis: postgis)
                remote.batch = batch
                let directory = try TemporaryDirectory(prefix: "remote-bench")
                let forwarder = try await makeForwarder(remote, directory: directory)
                let clock = ContinuousClock()
                let queued = try await clock.measure {
                    // As hubd's writer does: one append (one fsync) per interval's worth, here 1,000 at a time.
                    for start in stride(from: 0, to: count, by: 1_000) {
                        try await forwarder.queue.append(Array(entries[start..<min(start + 1_000, count)]))
                    }
                }
                let drained = await clock.measure { await forwarder.run(untilEmpty: true) }
                let rows = try await server.count("SELECT count(*) FROM readings", database: "bench")
                #expect(rows == count)
                let perSecond = { (duration: Duration) in
                    Int(
                        Double(count)
                            / (Double(duration.components.attoseconds) / 1e18 + Double(duration.components.seconds)))
                }
                print(
                    "remote bench: \(count) readings, batch \(batch): queued (fsync per 1,000) in \(queued), "
                        + "\(perSecond(queued))/s; drained into PostgreSQL (PostGIS \(postgis && PostgresServer.hasPostGIS)) "
                        + "in \(drained), \(perSecond(drained))/s")
            }
        }
    }
}
