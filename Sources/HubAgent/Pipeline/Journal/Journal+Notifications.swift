import Foundation
import HubCore
import HubNotify

/// The outbox's lines in the journal's file: one log for a burst's records, the notifications routed from them and
/// their done marks (issue 54). The router writes a batch's adds on the executor right after the journal wrote the
/// batch's records, so the `fsync` that makes the records durable makes their notifications durable too; the
/// outbox's own `sync` (a second after it routed) costs an `fsync` only when something was written since the last.
/// Compaction keeps the pending notifications (`compactIfWorthIt`).
extension Journal: NotificationLog {
    /// How the outbox's lines begin (`Outbox.line` and its done marks): the journal leaves them to the outbox.
    static let addPrefix = Array(#"{"add":"#.utf8)
    static let donePrefix = Array(#"{"done":"#.utf8)

    public func openNotifications(pending: @escaping @Sendable () -> [UInt8]) throws(StoreError) -> [Data] {
        state.withLock { state in
            state.pendingNotifications = pending
            defer { state.notificationLines = [] }
            return state.notificationLines
        }
    }

    public func appendNotifications(_ bytes: [UInt8], sync: Bool) throws(StoreError) {
        do throws(StoreError) {
            // Done marks are written without an `fsync`, and need none later either.
            try append(bytes, sync: sync, flushWanted: bytes.starts(with: Self.addPrefix))
        } catch {
            report(error)
            throw error
        }
    }

    public func syncNotifications() throws(StoreError) {
        let mending = try holdingFile { () throws(StoreError) -> Bool in
            let (fd, unflushed, rewrite) = state.withLock { ($0.fd, $0.unflushed, $0.rewriteWanted) }
            if rewrite { return true }
            guard unflushed else { return false }
            // A compaction closed the descriptor: the file at the path is flushed whole (its rename waited for it).
            guard fd >= 0 else { return false }
            do throws(StoreError) {
                try flush(fd)
                return false
            } catch {
                report(error)
                return true
            }
        }
        guard mending else { return }
        // On the executor, where compactions run; the outbox tries again a second later.
        queue.async { self.compactIfWorthIt(mend: true) }
        throw .system(path: path, action: "flush to disk (writing the file anew)", errno: EIO)
    }

    public func compactNotifications() throws(StoreError) -> Bool { false }

    /// The journal closes last, after the outbox (`Journal.run`).
    public func closeNotifications() {}
}
