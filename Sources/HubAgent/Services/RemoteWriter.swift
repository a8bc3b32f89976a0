import Foundation
import HubCore
import HubRemote
import HubSupport
import Logging
import ServiceLifecycle

/// Sends readings, sessions and events to a PostgreSQL database: `remote:`'s, or with `store:` the store's, where the
/// history then is (`name` `history`). What arrives (readings from ingest, events from the journal) is written to
/// the durable queue every `interval`, flushed to disk, and only then acknowledged to the journal; the forwarder sends
/// the queue to the database meanwhile, and what it can't send waits on disk, across restarts.
final class RemoteWriter: Service, JournalConsumer, ReadingSink, Sendable {
    /// The name it acknowledges the journal's records under, and its queue's files are named after.
    let name: String
    let forwarder: RemoteForwarder
    /// The store's history's: prunes it daily.
    private let pruner: HistoryPruner?
    private let journal: Journal
    private let errors: ErrorRecorder
    private let logger: Logger
    private let pending = Locked(Pending())

    struct Pending {
        var entries: [RemoteEntry] = []
        /// The journal position the events reach.
        var through = 0
    }

    init(
        name: String = "remote", settings: RemoteSettings, stateDirectory: String, journal: Journal,
        pruner: HistoryPruner? = nil, errors: ErrorRecorder, logger: Logger
    ) {
        self.name = name
        self.pruner = pruner
        let queue = RemoteQueue(directory: stateDirectory, mode: settings.mode, name: name, logger: logger)
        self.forwarder = RemoteForwarder(settings: settings, queue: queue, logger: logger)
        self.journal = journal
        self.errors = errors
        self.logger = logger
    }

    func accept(_ records: [JournalRecord], through position: Int) {
        pending.withLock { pending in
            for record in records { pending.entries += record.events.map(RemoteEntry.init) }
            pending.through = max(pending.through, position)
        }
    }

    func accept(_ reading: RecordedReading) {
        pending.withLock { $0.entries.append(RemoteEntry(reading)) }
    }

    func run() async {
        do {
            let waiting = try await forwarder.queue.open()
            if waiting > 0 {
                logger.info(
                    "the remote queue holds entries from before",
                    metadata: ["waiting": "\(waiting)", "path": "\(forwarder.queue.path)"])
            }
        } catch {
            errors.record("the remote queue can't be opened; nothing is sent to the remote store: \(error)")
            // A service that returns early would stop hubd: the rest of the hub runs on without the remote.
            try? await gracefulShutdown()
            return
        }
        await cancelWhenGracefulShutdown {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await every(self.forwarder.settings.interval) { await self.flush() } }
                group.addTask { await self.forwarder.run() }
                if let pruner = self.pruner { group.addTask { await pruner.run() } }
            }
        }
        // Ingest has stopped: the last readings and events go to the queue, which the next start sends.
        await flush()
        await forwarder.queue.close()
    }

    /// Makes what arrived durable in the queue, then acknowledges it to the journal and wakes the forwarder.
    private func flush() async {
        let (entries, through) = pending.withLock { pending in
            defer { pending.entries = [] }
            return (pending.entries, pending.through)
        }
        guard !entries.isEmpty || through > 0 else { return }
        do {
            if try await forwarder.queue.append(entries) > 0 { forwarder.wake() }
            journal.acknowledge(name, through: through)
        } catch {
            // Kept for the next flush: the journal still has the events, and the readings are here.
            pending.withLock { $0.entries.insert(contentsOf: entries, at: 0) }
            errors.record("could not write \(entries.count) entries to the remote queue: \(error)")
        }
    }
}
