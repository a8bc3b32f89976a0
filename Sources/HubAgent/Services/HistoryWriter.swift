import Foundation
import HubCore
import HubHistory
import HubSupport
import Logging
import ServiceLifecycle

/// Keeps readings and events in the history (SQLite): both come from the journal's records (particulate sensors' and
/// numeric sensors' readings with the status they came with), written in one transaction every
/// `history.commit_interval` (then acknowledged to the journal), when `hubctl` asks, and once more when hubd stops;
/// what is older than `history.retention` is pruned daily. What the journal hands over again after a crash is one
/// row: an event the file has (by id) is not written again, and a reading is taken only from a record past the
/// journal position the file holds (written with the rows; the journal numbers its records after it).
///
/// The interval is the SD card's: SQLite writes every page a commit touches whole, and a reading or an event touches
/// a leaf of each index by sensor, so on a week-old history a home's commits a second apart wrote 2.7 GB a day to
/// the write-ahead log, a minute apart 427 MB, and five minutes apart (without `events_by_id`) 141 MB
/// (`bench/home.sh`; `bench/history-commits.sh` by interval).
final class HistoryWriter: Service, JournalConsumer, HeldHistory, Sendable {
    /// The name it acknowledges the journal's records under.
    static let consumerName = "history"

    private let history: History
    private let commitInterval: Duration
    /// One write at a time (the interval's, the API's, the last): each acknowledges the journal through what it took,
    /// which must not run ahead of a write still going.
    private let writing = AsyncLock()
    private let pruner: HistoryPruner
    private let errors: ErrorRecorder
    private let logger: Logger
    private let journal: Journal
    private let pending = Locked(Pending())
    /// The journal position the file's rows reach as hubd started: a record up to it that the journal hands over
    /// again has its reading in the file already.
    private let written: Int
    /// Rung when readings or events wait: written a commit interval later.
    private let pendingBell = Doorbell()
    /// Rung when `mostPending` rows wait: written at once.
    private let fullBell = Doorbell()
    /// The rows that wait at most before a commit, whatever the interval (`defaultMostPending`).
    private let mostPending: Int
    /// A home's minute is a few hundred rows; a building's 10,000 messages a second would otherwise hold 600,000 rows
    /// in memory, and as many records in the journal, for a minute.
    static let defaultMostPending = 10_000

    struct Pending {
        var readings: [RecordedReading] = []
        var events: [SensorEvent] = []
        /// The journal position the events reach.
        var through = 0
    }

    /// Before the journal takes a record: it numbers them after the position the file holds.
    init(
        history: History, journal: Journal, commitInterval: Duration, retention: @escaping @Sendable () -> Duration,
        errors: ErrorRecorder, logger: Logger, mostPending: Int = defaultMostPending
    ) {
        self.mostPending = mostPending
        do {
            written = try history.journalPosition()
        } catch {
            // Unreadable here means unwritable too: the writes' errors say so.
            errors.record("could not read the history's journal position: \(error)")
            written = 0
        }
        journal.continueNumbering(after: written)
        self.journal = journal
        self.history = history
        self.commitInterval = commitInterval
        pruner = HistoryPruner(retention: retention, delete: history.prune, errors: errors, logger: logger)
        self.errors = errors
        self.logger = logger
    }

    /// Opens the history in `directory`; `nil` when it can't be opened (recorded; the hub runs on).
    static func open(_ directory: String, errors: ErrorRecorder) -> History? {
        do {
            return try History(directory: directory)
        } catch {
            errors.record("the history can't be opened; readings and events are not kept: \(error)")
            return nil
        }
    }

    /// Gives each particulate sensor of `document` its last 24 hours from `history`, so rolling means and alert
    /// state survive a restart.
    static func seed(_ tracker: inout SensorTracker, from history: any HistoryReader, for document: DefaultsDocument)
        async
    {
        let since = Timestamp(millisecondsSince1970: Timestamp.now.millisecondsSince1970 - 86_400_000)
        for sensor in document.sensors where sensor.kind == .particulate {
            guard let readings = try? await history.readings(of: sensor.name, since: since).compactMap(\.particulate),
                !readings.isEmpty
            else { continue }
            tracker.seed(topic: sensor.topic, readings: readings)
        }
    }

    func accept(_ records: [JournalRecord], through position: Int) {
        let full = pending.withLock { pending in
            for record in records {
                pending.events += record.events
                if let reading = record.reading, record.position > written { pending.readings.append(reading) }
            }
            pending.through = max(pending.through, position)
            return pending.readings.count + pending.events.count >= mostPending
        }
        pendingBell.ring()
        if full { fullBell.ring() }
    }

    func run() async {
        await cancelWhenGracefulShutdown {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await whenRung(self.pendingBell, every: self.commitInterval) { await self.write() } }
                group.addTask { await whenRung(self.fullBell, every: .zero) { await self.write() } }
                group.addTask { await self.pruner.run() }
            }
        }
        // Ingest has stopped: the last readings and events are here.
        await write()
    }

    /// Runs `read` with the rows held for the next commit, the events the journal holds for its put-off `fsync`
    /// (`sensors.sync_delay`) with them, no commit starting meanwhile: hubd's readers (the API, the dashboard) read
    /// the file and these (`HeldHistoryReader`), and commit nothing.
    func withHeld<Value: Sendable>(_ read: (HeldRows) async throws(HistoryError) -> Value)
        async throws(HistoryError) -> Value
    {
        await journal.flushed()
        do {
            return try await writing.withLock {
                let rows = pending.withLock { HeldRows(readings: $0.readings, events: $0.events) }
                return try await read(rows)
            }
        } catch let error as HistoryError {
            throw error
        } catch {
            throw .database(path: history.path, "\(error)")
        }
    }

    /// Writes what waits now (a reader in hubd is about to read the file), the events the journal holds for its
    /// put-off `fsync` (`sensors.sync_delay`) with them: a reader sees what hubd has seen.
    func writePending() async {
        await journal.flushed()
        guard pending.withLock({ !$0.readings.isEmpty || !$0.events.isEmpty }) else { return }
        await write()
    }

    private func write() async {
        await writing.withLock { await writeNow() }
    }

    private func writeNow() async {
        let (readings, events, through) = pending.withLock { pending in
            defer {
                pending.readings = []
                pending.events = []
            }
            return (pending.readings, pending.events, pending.through)
        }
        do {
            try await history.record(readings: readings, events: events, through: through > 0 ? through : nil)
            journal.acknowledge(Self.consumerName, through: through)
        } catch {
            errors.record(
                "could not write \(readings.count) readings and \(events.count) events to the history: \(error)")
        }
    }
}

/// Deletes what is older than `history.retention` from a history (the file, or the store's database), daily.
struct HistoryPruner: Sendable {
    /// Read at each prune: SIGHUP can change it.
    let retention: @Sendable () -> Duration
    let delete: @Sendable (Timestamp) async throws(HistoryError) -> Int
    let errors: ErrorRecorder
    let logger: Logger

    func run() async {
        await every(.seconds(86_400)) { await prune() }
    }

    func prune() async {
        let retention = Int64(retention().components.seconds * 1000)
        do {
            let removed = try await delete(
                Timestamp(millisecondsSince1970: Timestamp.now.millisecondsSince1970 - retention))
            if removed > 0 { logger.info("pruned the history", metadata: ["rows": "\(removed)"]) }
        } catch {
            errors.record("could not prune the history: \(error)")
        }
    }
}
