import Foundation
import HubCore
import HubHistory
import HubTestKit
import Testing

/// `hubctl store migrate`: a registry and a history made by the built hubctl and the history's own writer, copied
/// into a real PostgreSQL 15, checked by reading back, and copied again without a second copy.
@Suite(.timeLimit(.minutes(6)))  // with the wait for one of the two PostgreSQL servers a test process runs at once
struct StoreMigrateTests {
    @Test func theRegistryAndTheHistoryAreCopiedAndChecked() async throws {
        try await withPostgres { server in
            try await server.createDatabase("moved")
            let hubctl = try Hubctl()
            for arguments in [["kitchen"], ["cellar", "--kind", "numeric"], ["air", "--kind", "particulate"]] {
                let added = try await hubctl.run(["sensors", "add"] + arguments)
                #expect(added.status == 0, "\(added.standardError)")
            }
            let cellar = try #require(try DefaultsStore(directory: hubctl.state.path).read().sensor(named: "cellar"))
            // A history: numeric and particulate readings (one twice at the same instant), events with and
            // without ids (written before events had them).
            let history = try History(directory: hubctl.state.path)
            let start: Int64 = 1_795_000_000_000
            var readings = (0..<300).map { index in
                RecordedReading(
                    sensor: "cellar",
                    reading: .numeric(
                        12 + Double(index) / 10, unit: nil,
                        time: Timestamp(millisecondsSince1970: start + Int64(index) * 60_000)))
            }
            readings += (0..<200).map { index in
                RecordedReading(
                    sensor: "air",
                    reading: .particulate(
                        ParticulateReading(
                            pm25: Double(index % 40), pm10: Double(index % 60),
                            time: Timestamp(millisecondsSince1970: start + Int64(index) * 60_000))))
            }
            readings.append(readings[0])
            let events = [
                SensorEvent(
                    id: SensorEvent.id(sensor: cellar.id, sequence: 1), kind: .changed, sensor: "kitchen",
                    topic: "kitchen", oldStatus: "Waiting", newStatus: "open",
                    time: Timestamp(millisecondsSince1970: start)),
                SensorEvent(
                    id: "", kind: .changed, sensor: "kitchen", topic: "kitchen", oldStatus: "open",
                    newStatus: "closed", time: Timestamp(millisecondsSince1970: start + 1000)),
            ]
            try await history.record(readings: readings, events: events)
            let passwordFile = hubctl.state.file("db.pass")
            try "\(PostgresServer.password)\n".write(toFile: passwordFile, atomically: true, encoding: .utf8)
            let url = "postgres://\(PostgresServer.user)@\(server.host):\(server.port)/moved"
            let migrate = ["store", "migrate", "--to", url, "--password-file", passwordFile, "--hub", "block-a"]

            let first = try await hubctl.run(migrate)
            #expect(first.status == 0, "\(first.standardOutput)\(first.standardError)")
            #expect(first.standardOutput.contains("Registry: 3 sensors, sha256 "), "\(first.standardOutput)")
            #expect(first.standardOutput.contains("read back: 3 sensors, sha256 "))
            #expect(first.standardOutput.contains("History: readings 500 ("), "\(first.standardOutput)")
            #expect(first.standardOutput.contains("events 2 ("))
            #expect(
                try await server.count("SELECT count(*) FROM readings WHERE hub = 'block-a'", database: "moved") == 500)
            #expect(try await server.count("SELECT count(*) FROM events WHERE hub = 'block-a'", database: "moved") == 2)
            #expect(
                try await server.count(
                    "SELECT count(*) FROM readings WHERE sensor_id = '\(cellar.id)'", database: "moved") == 300)

            // Again: nothing twice, the same checksums.
            let again = try await hubctl.run(migrate)
            #expect(again.status == 0, "\(again.standardError)")
            #expect(again.standardOutput.contains("the database has these 3 sensors already"))
            #expect(try await server.count("SELECT count(*) FROM readings", database: "moved") == 500)
            #expect(Self.checksums(first.standardOutput) == Self.checksums(again.standardOutput))

            // hubd's configuration names the database: hubctl reads the same sensors there.
            let configuration = hubctl.state.file("hubd.yaml")
            try "store: {url: '\(url)', password_file: '\(passwordFile)'}\n".write(
                toFile: configuration, atomically: true, encoding: .utf8)
            let listed = try await hubctl.run("sensors", "list", "--json", "--config", configuration)
            #expect(listed.status == 0, "\(listed.standardError)")
            for name in ["kitchen", "cellar", "air"] { #expect(listed.standardOutput.contains(#""name": "\#(name)""#)) }

            // A registry that differs is not overwritten unless asked.
            _ = try await hubctl.run("sensors", "add", "porch")
            let refused = try await hubctl.run(migrate)
            #expect(refused.status == 64 && refused.standardError.contains("--replace"), "\(refused.standardError)")
            let replaced = try await hubctl.run(migrate + ["--replace"])
            #expect(replaced.status == 0 && replaced.standardOutput.contains("Registry: 4 sensors"))

            // A database whose registry has only broker settings of its own is not empty either.
            try await server.createDatabase("configured")
            let other = hubctl.state.file("other.yaml")
            let otherURL = "postgres://\(PostgresServer.user)@\(server.host):\(server.port)/configured"
            try "store: {url: '\(otherURL)', password_file: '\(passwordFile)'}\n".write(
                toFile: other, atomically: true, encoding: .utf8)
            let set = try await hubctl.run("broker", "set", "--host", "broker.lan", "--config", other)
            #expect(set.status == 0, "\(set.standardError)")
            let kept = try await hubctl.run(
                ["store", "migrate", "--to", otherURL, "--password-file", passwordFile, "--hub", "block-a"])
            #expect(kept.status == 64 && kept.standardError.contains("broker settings"), "\(kept.standardError)")
        }
    }

    /// The sha256 and digest values printed, in order.
    static func checksums(_ output: String) -> [String] {
        output.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "(" || $0 == ")" || $0 == "," })
            .map(String.init).filter { $0.count == 16 && $0.allSatisfy(\.isHexDigit) }
    }
}
