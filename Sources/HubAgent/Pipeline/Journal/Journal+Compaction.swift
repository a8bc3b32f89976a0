import Foundation
import HubCore

// Compaction: the journal's file kept small once its records are in every consumer's hands and its notifications
// delivered.
extension Journal {
    /// A rewrite keeps at most 1/8 of the file, below four times `compactionThreshold`, and half of it above. The
    /// history acknowledges its records once a commit (hourly, or at 10,000 rows): a home's file passes the
    /// threshold with minutes of records it still needs, and kept by half, each rewrite copied them, a third of the
    /// journal's bytes (`bench/home.sh` with five-minute commits: 683 KB written in a window that held a rewrite,
    /// 392 KB in one that did not). Waiting for the history's next commit (a few seconds of records left then)
    /// costs the file a few megabytes at most (10,000 records).
    /// (Asked for, `force`: half, whatever the size.)
    static func keptShare(of size: Int, force: Bool) -> Int { force || size > 4 * compactionThreshold ? 2 : 8 }

    /// Empties the file when every consumer has acknowledged everything in it and no notification is pending, or
    /// rewrites it with what some consumer still needs and the pending notifications; only once it is larger than
    /// `compactionThreshold`, unless `force`d. `mend`: an `fsync` failed, and the file is written anew whatever it
    /// holds. On the pipeline's executor, holding the file: a record is in `retained` once its write returns there,
    /// and the outbox's adds are written there too, so none is in the old file only.
    func compactIfWorthIt(force: Bool = false, mend: Bool = false) {
        file.lock()
        defer { file.unlock() }
        // Records still pending are not in the file yet: the next commit appends them to whatever is there. Asked
        // first, before the outbox's lines are gathered: most calls (one after each `fsync`) find the file small, and
        // a backend that is down can leave thousands of notifications pending.
        guard mend || state.withLock({ $0.size > (force ? 0 : Self.compactionThreshold) }) else { return }
        // The outbox's pending lines are gathered only when they could leave a rewrite worth it (below).
        let (within, pending, read) = state.withLock { state in
            let most = state.size / Self.keptShare(of: state.size, force: force)
            let within = mend ? Int.max : max(1, most - state.retained.byteCount)
            return (within, state.pendingNotifications, state.notificationLines)
        }
        let notifications: [UInt8]
        if let pending {
            guard let lines = pending(within) else { return }
            notifications = lines
        } else {
            // Not opened by the outbox yet: its lines as they were read.
            notifications = read.reduce(into: []) { $0 += Array($1) + [UInt8(ascii: "\n")] }
        }
        let (worth, keep, fd) = state.withLock { state -> (Bool, [UInt8]?, Int32) in
            // The packet ids of the messages committed are kept (those pending are not in the file yet either).
            if state.retained.isEmpty && state.deliveries.isEmpty && notifications.isEmpty && !mend {
                return (true, nil, state.fd)
            }
            // Rewriting most of the file gains nothing, and rewriting a good part of it waits for the consumers.
            let most = state.size / Self.keptShare(of: state.size, force: force)
            guard mend || state.retained.byteCount + notifications.count < most else {
                return (false, nil, state.fd)
            }
            var bytes: [UInt8] = []
            for (consumer, position) in state.acknowledged {
                bytes += JournalRecord.ackLine(consumer, through: position)
            }
            if !state.deliveries.isEmpty { bytes += Self.deliveriesLine(state.deliveries.inOrder) }
            for (_, line) in state.retained { bytes += line + [UInt8(ascii: "\n")] }
            bytes += notifications
            return (true, bytes, state.fd)
        }
        guard worth else { return }
        do throws(StoreError) {
            if let keep {
                try replaceFileAtomically(at: path, with: keep)
                state.withLock {
                    if $0.fd >= 0 { Glibc.close($0.fd) }
                    $0.fd = -1
                    $0.size = keep.count
                    $0.reserved = 0
                    $0.acknowledgementsWritten = $0.acknowledged
                }
            } else {
                guard fd >= 0, ftruncate(fd, 0) == 0, fsync(fd) == 0 else {
                    throw .system(path: path, action: "empty", errno: errno)
                }
                state.withLock {
                    $0.size = 0
                    $0.reserved = 0
                    $0.acknowledgementsWritten = [:]
                }
            }
            // Everything the file holds was flushed before its rename (or it is empty).
            let covering = state.withLock { state in
                state.statistics.compactions += 1
                state.rewriteWanted = false
                return state.writesToFlush
            }
            noteFlushed(through: covering)
        } catch {
            state.withLock { $0.statistics.errors += 1 }
            logger.error("cannot compact the journal", metadata: ["path": "\(path)", "error": "\(error)"])
        }
    }
}
