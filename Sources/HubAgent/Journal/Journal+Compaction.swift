import Foundation
import HubCore

// Compaction: the journal's file kept small once its records are in every consumer's hands.
extension Journal {
    /// Empties the file when every consumer has acknowledged everything in it, or rewrites it with what some
    /// consumer still needs; only once it is larger than `compactionThreshold`, unless `force`d.
    func compactIfWorthIt(force: Bool = false) {
        let (worth, keep, fd) = state.withLock { state -> (Bool, [UInt8]?, Int32) in
            // Records still pending are not in the file yet: the next commit appends them to whatever is there.
            guard state.size > (force ? 0 : Self.compactionThreshold) else {
                return (false, nil, state.fd)
            }
            // The packet ids of the messages committed are kept (those pending are not in the file yet either).
            if state.retained.isEmpty && state.deliveries.isEmpty { return (true, nil, state.fd) }
            // Rewriting most of the file gains nothing.
            guard state.retained.byteCount < state.size / 2 else { return (false, nil, state.fd) }
            var bytes: [UInt8] = []
            for (consumer, position) in state.acknowledged {
                bytes += JournalRecord.ackLine(consumer, through: position)
            }
            if !state.deliveries.isEmpty { bytes += Self.deliveriesLine(state.deliveries.inOrder) }
            for (_, line) in state.retained { bytes += line + [UInt8(ascii: "\n")] }
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
                }
            } else {
                guard fd >= 0, ftruncate(fd, 0) == 0, fsync(fd) == 0 else {
                    throw .system(path: path, action: "empty", errno: errno)
                }
                state.withLock {
                    $0.size = 0
                    $0.acknowledgementsWritten = [:]
                }
            }
            state.withLock { $0.statistics.compactions += 1 }
        } catch {
            state.withLock { $0.statistics.errors += 1 }
            logger.error("cannot compact the journal", metadata: ["path": "\(path)", "error": "\(error)"])
        }
    }
}
