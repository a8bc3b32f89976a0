import Foundation
import HubCore
import HubSupport
import Logging
import ServiceLifecycle

/// Writes back what hubd learnt: the statuses the journal has made durable since the last flush, recorded in the
/// registry every flush interval (`RegistryStore.recordStatuses`: the file's status log, under its lock, so a
/// `hubctl` change made meanwhile stays), flushed to disk every `syncInterval` (or `syncAfter` statuses) and only
/// then acknowledged to the journal, which holds them meanwhile. The flush interval (`store.flush_interval`) is
/// 5 minutes by default, as long as `syncInterval`, so each flush is `fsync`ed: hubd's readers take the live statuses,
/// and `hubctl` asks hubd to write them first (`WriteRequest`, `writeNow`). And the status file `hubctl status`
/// reads, every 5 s, changed or not (written within a second of a change, it was a home's third-largest writer:
/// 118 MB a day asked, `bench/home.sh`; and a change no longer wakes the writer: with no file sooner than 5 s after
/// the last, that wake was a second timer every 5 s to no end, `bench/timers.sh`). Both once more when hubd stops,
/// after every other service but the journal: the last statuses are written.
final class StoreWriter: Service, JournalConsumer, Sendable {
    /// The name it acknowledges the journal's records under.
    static let consumerName = "store"

    private let store: any RegistryStore
    private let journal: Journal
    /// The newest durable status of each sensor not written yet, by topic, and the journal position they reach.
    private let backlog = Locked<(updates: [String: SensorStatusUpdate], through: Int)>(([:], 0))
    private let stateDirectory: String
    private let flushInterval: Duration
    private let snapshot: HubSnapshot.Source
    private let errors: ErrorRecorder
    private let logger: Logger
    /// Where the status file is written while hubd runs, the state directory's a link to it (`AgentStatus.link`):
    /// systemd's `RuntimeDirectory`, a tmpfs. Nil: in the state directory.
    private let runtimeDirectory: String?
    /// Registry writes since start (the snapshot reads it).
    private let writes: Locked<Int>
    /// The registry version whose sensors the subscriptions service follows: a flush of that version writes only
    /// statuses, so the version it makes is followed too, and the subscriptions service, woken by it, need not read
    /// it back.
    private let followedVersion: Locked<RegistryVersion?>
    /// Where the status file is written: it blocks (fsync), and must not do so on a cooperative thread (measured, when
    /// the registry was written here too: a 230 ms p99 at 1k msg/s in one run out of two, 2.5 ms without).
    private let files = DispatchQueue(label: "sensorhub.files")
    /// Whether it writes statuses to the store (not in a cluster: they are committed there before the journal).
    private let recordsStatuses: Bool
    /// Rung when statuses wait in the backlog: a flush follows a flush interval later.
    private let backlogBell = Doorbell()
    /// Rung when statuses are written and not flushed: a flush follows a `syncInterval` later, whether or not more
    /// statuses come (a flush otherwise runs only when the backlog rings).
    private let unsyncedBell = Doorbell()
    /// The statuses written since the last `fsync`: how many, through which journal position, and when that was.
    private let unsynced = Locked<(count: Int, through: Int, since: ContinuousClock.Instant)>((0, 0, .now))
    /// One flush at a time (the writer's own and `writeNow`'s): an older status must not land after a newer one.
    private let flushing = AsyncLock()

    /// How long statuses written to the status log may wait for its `fsync` (`defaultSyncInterval`).
    private let syncInterval: Duration
    /// Flushed every second, a home's log took 47 `fsync`s a minute, each writing its last page again
    /// (`bench/home.sh`: 37 MB a day asked, and a 4 KiB page an `fsync`); written every 10 s (the journal's put-off
    /// `fsync` hands them over so) and flushed every 30 s, 31 MB of pages; both every 30 s, 19 MB. Every 5 minutes
    /// (`store.flush_interval`'s default too): on a Pi's ext4 each `fsync` of a file that grew costs the card
    /// 12–22 KiB of the filesystem's own journal besides the file's pages (`bench/fsync-cost.py`). The journal holds
    /// them until then, as it holds an hour of records for the history anyway, so a power cut loses none.
    static let defaultSyncInterval = Duration.seconds(300)
    /// Or how many: the journal can't drop what they came from meanwhile (at 1,000 statuses a second, 3 MB).
    static let syncAfter = 10_000

    init(
        store: any RegistryStore, journal: Journal, writes: Locked<Int>,
        followedVersion: Locked<RegistryVersion?>,
        stateDirectory: String, flushInterval: Duration,
        snapshot: @escaping HubSnapshot.Source,
        errors: ErrorRecorder, logger: Logger, recordsStatuses: Bool = true,
        syncInterval: Duration = defaultSyncInterval, runtimeDirectory: String? = nil
    ) {
        self.syncInterval = syncInterval
        self.runtimeDirectory = runtimeDirectory
        self.recordsStatuses = recordsStatuses
        self.store = store
        self.journal = journal
        self.writes = writes
        self.followedVersion = followedVersion
        self.stateDirectory = stateDirectory
        self.flushInterval = flushInterval
        self.snapshot = snapshot
        self.errors = errors
        self.logger = logger
    }

    func accept(_ records: [JournalRecord], through position: Int) {
        // In a cluster the statuses are committed before they are journaled: nothing to write, and the journal may
        // drop them (with no other consumer it would keep every record).
        guard recordsStatuses else { return journal.acknowledge(Self.consumerName, through: position) }
        backlog.withLock { backlog in
            for record in records { backlog.updates[record.topic] = record.statusUpdate }
            backlog.through = max(backlog.through, position)
        }
        backlogBell.ring()
    }

    func run() async {
        let statusDirectory = await files.run { self.linkStatusFile() }
        await cancelWhenGracefulShutdown {
            await withTaskGroup(of: Void.self) { group in
                // A flush appends its sensors' lines to the status log; now and then one folds the log into the
                // document, which reads and writes the whole registry: 2.9 s of wall time at 100,000 sensors in the
                // middle of a burst of their statuses on a 2-core machine. Resting ten times as long as a flush took
                // keeps the writer within about a tenth of a core even then; nothing waits for it, and the journal
                // holds every status meanwhile.
                group.addTask {
                    await whenRung(self.backlogBell, every: self.flushInterval, resting: 10) { await self.flush() }
                }
                // The last statuses before a quiet spell are flushed (and the journal lets go of them) a `syncInterval`
                // after they were written, not with the next status; nothing wakes an idle hub for it.
                group.addTask {
                    await whenRung(self.unsyncedBell, every: self.syncInterval) { self.backlogBell.ring() }
                }
                group.addTask {
                    // The first at once (hubctl status has no file yet).
                    var written = ContinuousClock.now - Self.statusInterval
                    while !Task.isCancelled {
                        try? await Task.sleep(until: written + Self.statusInterval)
                        await self.files.run { self.writeStatus(in: statusDirectory) }
                        written = .now
                    }
                }
            }
        }
        // Every other service but the journal has stopped: whatever arrived until the client closed is here now.
        await flush(last: true)
        do {
            try await store.foldStatusesInMemory()
        } catch {
            errors.record(
                "could not fold the status log kept in memory into the registry (a reboot loses it): \(error)")
        }
        // The last in the state directory, over the link: `hubctl status` says when hubd was last seen, after a reboot
        // too.
        await files.run { self.writeStatus(in: self.stateDirectory) }
        logger.info("stopped")
    }

    /// Writes the statuses made durable so far into the registry now (`hubctl` is about to read it: `WriteRequest`),
    /// flushed to disk when that is due anyway.
    func writeNow() async { await flush() }

    /// Merges the statuses made durable since the last flush into the store; a sensor removed meanwhile is skipped.
    /// Flushed to disk, and acknowledged to the journal, when `syncInterval` would pass before the next flush, once
    /// `syncAfter` statuses wait, and at the `last` flush.
    private func flush(last: Bool = false) async {
        await flushing.withLock { await flushNow(last: last) }
    }

    private func flushNow(last: Bool) async {
        let (updates, through) = backlog.withLock { backlog in
            defer { backlog.updates = [:] }
            return (backlog.updates, backlog.through)
        }
        let (count, since) = unsynced.withLock { ($0.count, $0.since) }
        let durable =
            last || count + updates.count >= Self.syncAfter
            || ContinuousClock.now - since + flushInterval > syncInterval
        guard !updates.isEmpty else {
            guard durable, count > 0 else { return }
            do {
                try await store.syncStatuses()
                acknowledgeSynced(through: unsynced.withLock { $0.through })
            } catch {
                errors.record("could not flush statuses to the registry: \(error)")
            }
            return
        }
        let size = Locked(0)
        do {
            try await store.recordStatuses(Array(updates.values), durable: durable) { [followedVersion] read, written in
                // A version another writer made meanwhile stays unfollowed: the subscriptions service reads that one.
                followedVersion.withLock { if let read, $0?.hasSameSensors(as: read) == true { $0 = written } }
                if written.rewritesDocument(read) { size.withLock { $0 = written.byteCount } }
            }
            // When the registry was read and written whole (the status log folded in): tens of megabytes at 100,000
            // sensors, freed now.
            if size.withLock({ $0 }) >= FreedMemory.worthReleasingAfter { FreedMemory.release() }
            writes.withLock { $0 += 1 }
            if durable {
                acknowledgeSynced(through: through)
            } else {
                unsynced.withLock {
                    $0.count += updates.count
                    $0.through = max($0.through, through)
                }
                unsyncedBell.ring()
            }
        } catch {
            // The next flush tries again, unless a newer status of the sensor has arrived meanwhile.
            backlog.withLock { backlog in backlog.updates.merge(updates) { newer, _ in newer } }
            backlogBell.ring()
            errors.record("could not write statuses to the registry: \(error)")
        }
    }

    /// Every status written so far is on disk: the journal may drop them.
    private func acknowledgeSynced(through: Int) {
        unsynced.withLock { $0 = (0, 0, .now) }
        journal.acknowledge(Self.consumerName, through: through)
    }

    /// The status file's heartbeat when nothing moves (`hubctl status` takes a file older than
    /// `AgentStatus.staleAfter` for a hub that is gone), and the shortest time between two.
    static let statusInterval = Duration.seconds(5)

    /// Where the status file goes while hubd runs: the runtime directory when there is one and the link to it could
    /// be made (logged when not), else the state directory. The link comes after the first file: `hubctl status`
    /// never finds it pointing at nothing while hubd runs.
    private func linkStatusFile() -> String {
        guard let runtimeDirectory else { return stateDirectory }
        do {
            try snapshot(false).agentStatus.write(to: runtimeDirectory)
            try AgentStatus.link(from: stateDirectory, to: runtimeDirectory)
            return runtimeDirectory
        } catch {
            logger.warning(
                "the status file stays in the state directory: no link to the runtime directory",
                metadata: ["runtime_directory": "\(runtimeDirectory)", "error": "\(error)"])
            return stateDirectory
        }
    }

    private func writeStatus(in directory: String) {
        do {
            try snapshot(false).agentStatus.write(to: directory)
        } catch {
            logger.debug("could not write the status file", metadata: ["error": "\(error)"])
        }
    }
}
