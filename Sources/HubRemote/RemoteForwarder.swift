import Foundation
import HubCore
import HubSupport
import Logging

/// Sends what the queue holds to the remote database, oldest first, one transaction per batch, and marks it done
/// once committed; a batch that fails is sent again, whole, so a session's order holds.
///
/// While the database can't be reached the queue grows on disk and attempts back off (1 s, doubling, at most
/// `max_back_off`); one warning says the outage started and one notice, with counts, that it ended.
public final class RemoteForwarder: Sendable {
    public let settings: RemoteSettings
    public let queue: RemoteQueue
    private let logger: Logger
    private let doorbell = Doorbell()
    private let counters = Locked(Counters())

    struct Counters {
        var sent = 0
        var rejected = 0
        var failures = 0
        var connected = false
        var postgis = false
        var lastError: String?
    }

    public init(settings: RemoteSettings, queue: RemoteQueue, logger: Logger) {
        self.settings = settings
        self.queue = queue
        self.logger = logger
    }

    /// Says there is something new in the queue.
    public func wake() { doorbell.ring() }

    /// What it did since start, for `hubctl status` and `/metrics`.
    public var statistics: AgentStatus.RemoteCounters {
        var result = AgentStatus.RemoteCounters()
        let counted = counters.withLock { $0 }
        result.queued = queue.count
        result.held = queue.heldCount
        result.unreadable = queue.unreadableLines
        result.sent = counted.sent
        result.rejected = counted.rejected
        result.failures = counted.failures
        result.connected = counted.connected
        result.postgis = counted.postgis
        result.lastError = counted.lastError
        return result
    }

    /// The wait before attempt `failures + 1` after that many failures in a row: 1 s doubling, capped.
    public static func backOff(afterFailures failures: Int, maximum: Duration) -> Duration {
        guard failures > 0 else { return .zero }
        let seconds = 1 << min(failures - 1, 20)
        return min(.seconds(seconds), maximum)
    }

    /// Sends until cancelled; with `untilEmpty`, returns as soon as nothing that may go now is left (a test's
    /// drain, or a last try at shutdown) or an attempt fails.
    public func run(untilEmpty: Bool = false) async {
        var remote: PostgresRemote?
        var failuresInRow = 0
        var outageStarted: ContinuousClock.Instant?
        // A running hub connects at once, so a wrong address or password shows at start, not with the first reading.
        var connectFirst = !untilEmpty
        // Halved while the server refuses batches, to find the entry it refuses; back to `batch` after a success.
        var limit = settings.batch
        var refusalsOfOne = 0
        defer { counters.withLock { $0.connected = false } }
        while !Task.isCancelled {
            let batch = queue.nextBatch(limit: limit)
            if batch.isEmpty && !connectFirst {
                if untilEmpty { break }
                await doorbell.wait(until: .now + settings.interval)
                continue
            }
            do {
                if remote == nil {
                    let (settings, logger) = (settings, logger)
                    let connected = try await bounded(.seconds(60), late: { await $0.close() }) {
                        try await PostgresRemote.connect(settings, logger: logger)
                    }
                    remote = connected
                    counters.withLock {
                        $0.connected = true
                        $0.postgis = connected.usesPostGIS
                    }
                    logger.info(
                        "connected to the remote store",
                        metadata: [
                            "url": "\(settings.server.url)", "hub": "\(settings.hub)",
                            "postgis": "\(connected.usesPostGIS)",
                            "waiting": "\(queue.count)",
                        ])
                }
                connectFirst = false
                if !batch.isEmpty {
                    try await remote!.send(batch)
                    await queue.markDone(batch.map(\.key))
                    counters.withLock { $0.sent += batch.count }
                    limit = settings.batch
                    refusalsOfOne = 0
                }
                if let started = outageStarted {
                    logger.notice(
                        "the remote store takes readings again",
                        metadata: [
                            "failed_attempts": "\(failuresInRow)", "down_for": "\(ContinuousClock.now - started)",
                            "waiting": "\(queue.count)",
                        ])
                    outageStarted = nil
                }
                failuresInRow = 0
            } catch {
                if Task.isCancelled { break }
                if let connection = remote, !connection.isClosed, PostgresRemote.isRefusal(error) {
                    // The server refuses something in this batch: smaller batches until the one entry is found,
                    // which is set aside after three refusals, so that it does not hold up everything behind it.
                    counters.withLock {
                        $0.failures += 1
                        $0.lastError = Self.describe(error)
                    }
                    if batch.count > 1 {
                        limit = max(1, batch.count / 2)
                        continue
                    }
                    refusalsOfOne += 1
                    if refusalsOfOne >= 3, let entry = batch.first {
                        await setAside(entry, error: error)
                        refusalsOfOne = 0
                        limit = settings.batch
                        continue
                    }
                }
                await remote?.close()
                remote = nil
                failuresInRow += 1
                let message = Self.describe(error)
                counters.withLock {
                    $0.failures += 1
                    $0.connected = false
                    $0.lastError = message
                }
                if outageStarted == nil {
                    outageStarted = .now
                    logger.warning(
                        "sending to the remote store failed; readings and events wait in the queue, and it is tried again",
                        metadata: ["url": "\(settings.server.url)", "error": "\(message)", "waiting": "\(queue.count)"])
                }
                if untilEmpty { break }
                try? await Task.sleep(for: Self.backOff(afterFailures: failuresInRow, maximum: settings.maximumBackOff))
            }
        }
        await remote?.close()
    }

    /// Keeps an entry the database refused three times in `remote-rejected.jsonl` beside the queue, and takes it
    /// out of the queue.
    private func setAside(_ entry: RemoteEntry, error: any Error) async {
        let message = Self.describe(error)
        logger.error(
            "the remote store refused an entry three times; it is set aside in \(queue.rejectedFileName)",
            metadata: ["key": "\(entry.key)", "error": "\(message)"])
        await queue.setAside(entry, reason: message)
        counters.withLock { $0.rejected += 1 }
    }

    /// What went wrong, in a line: PostgresNIO's errors hide the server's message from `description`.
    public static func describe(_ error: any Error) -> String {
        var text = String(reflecting: error)
        if text.count > 500 { text = String(text.prefix(500)) + "…" }
        return text
    }
}
