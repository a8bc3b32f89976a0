import ArgumentParser
import Crypto
import HubCore
import HubHistory
import HubRemote
import Logging

/// Copies a history file's readings and events into PostgreSQL through `PostgresRemote` (every insert idempotent,
/// so a second run copies nothing twice), and reads the copy's digest back to compare.
struct HistoryCopy {
    let history: History
    /// The registry's sensor ids by name: the file keeps names, the database ids.
    let sensorIDs: [String: String]
    let logger: Logger
    /// Rows read from the file, and sent, at a time.
    var page = 5000

    func run(to settings: RemoteSettings) async throws -> (sent: HistoryDigest, readBack: HistoryDigest) {
        let remote: PostgresRemote
        do {
            remote = try await PostgresRemote.connect(settings, logger: logger)
        } catch {
            Failure.printError("cannot reach \(settings.server.url): \(PostgresRegistry.reason(error))")
            throw ExitCode(Failure.unavailable)
        }
        do {
            let result = try await copy(to: remote)
            await remote.close()
            return result
        } catch {
            // Closed before the error ends hubctl: PostgresNIO asserts on a connection dropped open.
            await remote.close()
            throw error
        }
    }

    private func copy(to remote: PostgresRemote) async throws -> (sent: HistoryDigest, readBack: HistoryDigest) {
        var digest = HistoryDigest()
        var readingsSince: Timestamp?
        var eventsSince: Timestamp?
        var ids = Set<String>()
        // The database keeps one reading a sensor an instant: so does the copy (the first, as the database would).
        var seen = Set<String>()
        try await copyPages(to: remote) { row throws(HistoryError) in
            try history.readings(afterRow: row, limit: page).map { ($0.row, $0.reading) }
        } as: { recorded in
            var recorded = recorded
            recorded.sensorID = sensorIDs[recorded.sensor] ?? ""
            let entry = RemoteEntry(recorded)
            guard let reading = entry.reading, seen.insert(entry.key).inserted else { return nil }
            ids.insert(reading.sensorID)
            readingsSince = min(readingsSince ?? recorded.reading.time, recorded.reading.time)
            digest.add(entry)
            return entry
        }
        try await copyPages(to: remote) { row throws(HistoryError) in
            try history.events(afterRow: row, limit: page).map { ($0.row, $0.event) }
        } as: { event in
            var event = event
            // Written before events had ids: one made from what the event says, the same on every run.
            if event.id.isEmpty { event.id = Self.derivedID(event) }
            eventsSince = min(eventsSince ?? event.time, event.time)
            let entry = RemoteEntry(event)
            digest.add(entry)
            return entry
        }
        let readBack = try await remote.digest(
            sensorIDs: Array(ids), readingsSince: readingsSince, eventsSince: eventsSince)
        return (digest, readBack)
    }

    /// Reads the file a page at a time, from its first row, and sends what `entry` makes of each row.
    private func copyPages<Row>(
        to remote: PostgresRemote, _ read: (_ after: Int64) throws(HistoryError) -> [(row: Int64, value: Row)],
        as entry: (Row) -> RemoteEntry?
    ) async throws {
        var row: Int64 = 0
        while true {
            let rows = try withHistoryErrors { () throws(HistoryError) in try read(row) }
            guard let last = rows.last else { return }
            row = last.row
            try await send(rows.compactMap { entry($0.value) }, remote)
        }
    }

    private func send(_ entries: [RemoteEntry], _ remote: PostgresRemote) async throws {
        do {
            try await remote.send(entries, limit: .seconds(120))
        } catch {
            Failure.printError("could not write the history: \(PostgresRegistry.reason(error))")
            throw ExitCode(Failure.ioError)
        }
    }

    /// `h` and 11 hex digits of the SHA-256 of the event's fields.
    static func derivedID(_ event: SensorEvent) -> String {
        let fields = [
            event.sensor, String(event.time.millisecondsSince1970), event.kind.rawValue, event.oldStatus,
            event.newStatus, event.value ?? "",
        ]
        let digest = SHA256.hash(data: Array(fields.joined(separator: "\u{1F}").utf8))
        return "h" + digest.prefix(6).map { String(format: "%02x", $0) }.joined().prefix(11)
    }
}
