import Foundation
import HubCore
import HubSupport

// A commit, on the pipeline's executor: the write, the consumers that take written records, and the `fsync` that
// one commit may put off for the next ones (`Journal`'s group commit).
extension Journal {
    /// Writes what is pending and hands it to the consumers that take written records; then, unless `syncing` is
    /// false and every record written came with a held acknowledgement, flushes everything written to disk
    /// (`sync`). Returns whether everything appended is durable.
    @discardableResult
    func commit(syncing: Bool = true) -> Bool {
        let (batch, delivered, anew, appended, oldest, unheld) = state.withLock { state in
            defer {
                state.pendingUnheld = false
                state.committingDeliveries = state.pendingDeliveries
                state.committingAnew = state.pendingAnew
                state.pending = []
                state.pendingDeliveries = []
                state.pendingAnew = false
                state.oldestPending = nil
                state.commitScheduled = false
            }
            return (
                state.pending, state.pendingDeliveries, state.pendingAnew, state.appended, state.oldestPending,
                state.pendingUnheld
            )
        }
        if !batch.isEmpty || !delivered.isEmpty {
            var bytes: [UInt8] = []
            bytes.reserveCapacity(batch.count * 300 + delivered.count * 24)
            var lines: [(position: Int, line: [UInt8])] = []
            lines.reserveCapacity(batch.count)
            for record in batch {
                let line = record.line
                bytes += line
                bytes.append(UInt8(ascii: "\n"))
                lines.append((record.position, line))
            }
            // After the records: a crash that tore the write leaves no id of a message whose change is missing.
            if !delivered.isEmpty || anew { bytes += Self.deliveriesLine(delivered, anew: anew) }
            bytes += acknowledgementLines()
            let written = write(bytes, sync: false)
            // In the file: a SIGKILL loses none of it, and a message the broker sends again is known by its id.
            state.withLock { state in
                if anew { state.deliveries.forgetAll() }
                for (packet, digest) in delivered { state.deliveries.record(packet: packet, digest: digest) }
                state.committingDeliveries = []
                state.committingAnew = false
                for (position, line) in lines { state.retained.append(position, line) }
                if !batch.isEmpty { state.unsynced.append((batch, unheld)) }
                state.written = appended
                if !written { state.writeFailed = true }
                if let oldest { state.oldestUnsynced = min(state.oldestUnsynced ?? oldest, oldest) }
            }
            // The router takes the batch now, before the `fsync`: a notification does not wait for the disk (its p99
            // here is 1.6 ms). A SIGKILL can't lose what is written; a power cut before the `fsync` can lose the
            // records, but then no PUBACK left either, so the broker sends the messages again and they become the
            // same events, with the same ids, that receivers already have. Acknowledgements to the broker still wait
            // for the `fsync`. Not for a batch with records nothing would send again (`unheld`): those wait for it.
            if !unheld, let through = batch.last?.position {
                for (_, consumer) in state.withLock({ $0.consumers }) where consumer.takesWrittenRecords {
                    consumer.accept(batch, through: through)
                }
            }
        }
        guard syncing || unheld else { return false }
        sync()
        return true
    }

    /// Flushes everything written to disk (one `fsync` for every batch since the last), then runs what waited for
    /// it and hands the batches to the consumers that take durable records only.
    func sync() {
        let taken = state.withLock {
            state -> ([(records: [JournalRecord], unheld: Bool)], Int, Bool, ContinuousClock.Instant?)? in
            guard state.written > state.committed else { return nil }
            defer {
                state.unsynced = []
                state.writeFailed = false
                state.oldestUnsynced = nil
            }
            return (state.unsynced, state.written, state.writeFailed, state.oldestUnsynced)
        }
        guard let (batches, written, failed, oldest) = taken else { return }
        let durable = !failed && flushToDisk()
        let waited = oldest.map { .now - $0 } ?? .zero
        let (consumers, ready) = state.withLock { state in
            if let through = batches.last?.records.last?.position { state.durable = through }
            state.committed = written
            var ready: [@Sendable () -> Void] = []
            while let first = state.waiting.first, first.append <= written {
                ready.append(state.waiting.removeFirst().action)
            }
            state.statistics.records += batches.reduce(0) { $0 + $1.records.count }
            if durable { state.statistics.commits += 1 }
            state.statistics.longestWait = max(state.statistics.longestWait, waited.seconds)
            return (state.consumers, ready)
        }
        for action in ready { action() }
        // Not durable (the disk is full, say): handed on all the same; a notification late is better than none.
        for (batch, unheld) in batches {
            guard let through = batch.last?.position else { continue }
            for (_, consumer) in consumers where unheld || !consumer.takesWrittenRecords {
                consumer.accept(batch, through: through)
            }
        }
        compactIfWorthIt()
    }

    /// Acknowledgements not in the file yet, as lines.
    func acknowledgementLines() -> [UInt8] {
        state.withLock { state in
            var bytes: [UInt8] = []
            for (consumer, position) in state.acknowledged where position > state.acknowledgementsWritten[consumer] ?? 0
            {
                bytes += JournalRecord.ackLine(consumer, through: position)
                state.acknowledgementsWritten[consumer] = position
            }
            return bytes
        }
    }

    /// Appends `bytes`; false (logged and counted) when that failed. `flushWanted` false: lines whose loss costs
    /// nothing but a repeat (acknowledgements), which leave the outbox's `sync` nothing to flush.
    @discardableResult
    func write(_ bytes: [UInt8], sync: Bool, flushWanted: Bool = true) -> Bool {
        // After `close`, what is left to write (an acknowledgement) goes nowhere.
        if state.withLock({ $0.closed }) { return bytes.isEmpty }
        do throws(StoreError) {
            try append(bytes, sync: sync, flushWanted: flushWanted)
            return true
        } catch {
            report(error)
            return false
        }
    }

    /// Appends `bytes` (whole lines), holding the file.
    func append(_ bytes: [UInt8], sync: Bool, flushWanted: Bool) throws(StoreError) {
        guard !bytes.isEmpty else { return }
        try holdingFile { () throws(StoreError) in
            var fd = state.withLock { $0.fd }
            if fd < 0 {
                guard !state.withLock({ $0.closed }) else {
                    throw .system(path: path, action: "write (closed)", errno: EBADF)
                }
                fd = try AppendFile.open(path, in: directory)
                state.withLock { $0.fd = fd }
            }
            let (size, reserved) = state.withLock { state in
                if flushWanted { state.writesToFlush += 1 }
                return (state.size, state.reserved)
            }
            let reserving = AppendFile.reserve(fd, size: size, appending: bytes.count, reserved: reserved)
            if reserving != reserved { state.withLock { $0.reserved = reserving } }
            try AppendFile.append(bytes, to: fd, path: path, sync: false)
            state.withLock { $0.size += bytes.count }
            if sync { try flush(fd) }
        }
    }

    /// Flushes what was written to disk; false (logged and counted) when that failed.
    func flushToDisk() -> Bool {
        do throws(StoreError) {
            try holdingFile { () throws(StoreError) in
                let fd = state.withLock { $0.fd }
                guard fd >= 0 else { throw .system(path: path, action: "flush to disk (closed)", errno: EBADF) }
                try flush(fd)
            }
            return true
        } catch {
            report(error)
            return false
        }
    }

    /// Runs `body` holding the file (`file`).
    func holdingFile<T>(_ body: () throws(StoreError) -> T) throws(StoreError) -> T {
        file.lock()
        defer { file.unlock() }
        return try body()
    }

    /// Holding the file: `fsync`s `fd`. One that fails has the file written anew before the outbox's next `sync`
    /// succeeds (Linux reports a writeback error once, and then takes the pages for clean).
    func flush(_ fd: Int32) throws(StoreError) {
        // Holding the file: no write comes in while the `fsync` runs.
        let covering = state.withLock { state in
            state.flushes += 1
            return state.writesToFlush
        }
        do throws(StoreError) {
            try AppendFile.sync(fd, path: path)
        } catch {
            state.withLock { $0.rewriteWanted = true }
            throw error
        }
        noteFlushed(through: covering)
    }

    /// Everything written up to the `covering`th write is on disk: tells the outbox if it waits for that
    /// (`awaitNotificationsFlushed`).
    func noteFlushed(through covering: Int) {
        let ready = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
            // An earlier `fsync` failed: what it was to flush may be lost, whatever this one did, until the file is
            // written anew (`compactIfWorthIt(mend:)`).
            guard !state.rewriteWanted else { return [] }
            state.writesFlushed = max(state.writesFlushed, covering)
            guard !state.flushWaiters.isEmpty else { return [] }
            let ready = state.flushWaiters.filter { $0.target <= covering }.map(\.continuation)
            state.flushWaiters.removeAll { $0.target <= covering }
            return ready
        }
        for continuation in ready { continuation.resume(returning: true) }
    }

    func report(_ error: StoreError) {
        state.withLock { $0.statistics.errors += 1 }
        if let report = failures.withLock({ $0.note() }) {
            logger.error(
                "cannot write the journal: what arrives now is durable only once it is in the registry and outbox",
                metadata: ["path": "\(path)", "error": "\(error)", "failures_since_last_report": "\(report)"])
        }
    }
}
