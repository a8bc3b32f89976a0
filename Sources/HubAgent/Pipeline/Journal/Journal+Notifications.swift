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

    public func openNotifications(pending: @escaping @Sendable (_ within: Int) -> [UInt8]?) throws(StoreError) -> [Data]
    {
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

    /// How long the outbox's `sync` waits for the `fsync` a commit has put off (`sensors.sync_delay`, 10 s by default)
    /// before it makes one of its own: the longest delay there can be, and a second.
    static let notificationsWait = HubConfiguration.longestSyncDelay + .seconds(1)

    /// Ingest put off the `fsync` of the bursts these notifications came from: it comes within `sync_delay` and
    /// covers them too, so the outbox waits for it rather than making one of its own. At 100 msg/s that was every
    /// `fsync` the outbox made, one a second (`bench/profile.sh`: 0.08 fsyncs a notification, then 0.07).
    public func awaitNotificationsFlushed() async -> Bool {
        let (target, covered, due) = state.withLock { ($0.writesToFlush, $0.writesFlushed, $0.written > $0.committed) }
        if covered >= target { return true }
        guard due else { return false }
        return await withCheckedContinuation { continuation in
            let id = state.withLock { state -> UInt64? in
                if state.writesFlushed >= target { return nil }
                defer { state.nextWaiter += 1 }
                state.flushWaiters.append((state.nextWaiter, target, continuation))
                return state.nextWaiter
            }
            guard let id else { return continuation.resume(returning: true) }
            // Not covered by then (a failed `fsync`, a long `sync_delay`): the outbox flushes.
            DispatchQueue.global().asyncAfter(
                deadline: .now() + .seconds(Int(Self.notificationsWait.components.seconds))
            ) {
                let waiting = self.state.withLock { state -> CheckedContinuation<Bool, Never>? in
                    guard let index = state.flushWaiters.firstIndex(where: { $0.id == id }) else { return nil }
                    return state.flushWaiters.remove(at: index).continuation
                }
                waiting?.resume(returning: false)
            }
        }
    }

    public func syncNotifications() throws(StoreError) {
        let target = state.withLock { $0.writesToFlush }
        let mending = try holdingFile { () throws(StoreError) -> Bool in
            let (fd, flushedThrough, rewrite) = state.withLock { ($0.fd, $0.writesFlushed, $0.rewriteWanted) }
            if rewrite { return true }
            guard flushedThrough < target else { return false }
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
