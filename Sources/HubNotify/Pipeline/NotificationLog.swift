import Foundation
import HubCore
import HubSupport
import Logging

/// Where the outbox keeps its lines, `{"add":{…notification…}}` and `{"done":"<key>"}`.
///
/// In hubd it is the journal's file (`Journal`, HubAgent): one log takes a burst's records, the notifications routed
/// from them and their done marks, and one `fsync` covers them all (issue 54). A router on its own (the tests, a
/// tool) keeps them in a file of their own, `OutboxFile`.
///
/// The outbox calls it on its own queue, or on the pipeline's executor holding that queue; a log never waits for
/// either. A write or an `fsync` that failed is the log's to mend: Linux reports a writeback error once and then takes
/// the pages for clean, so the log writes the pending notifications anew (`pending`, given at `open`) before its
/// next `sync` succeeds.
public protocol NotificationLog: Sendable {
    /// The file, for the logs and for `hubctl`.
    var path: String { get }
    /// The outbox's lines the log holds, oldest first; `pending` gives the lines of the notifications still pending,
    /// for whenever the log rewrites itself, or nil when they take as many bytes as it is given or more (a rewrite
    /// that would keep that much is not worth it, and they are not gathered to find out).
    func openNotifications(pending: @escaping @Sendable (_ within: Int) -> [UInt8]?) throws(StoreError) -> [Data]
    /// Appends whole lines, flushed to disk too when `sync`.
    func appendNotifications(_ bytes: [UInt8], sync: Bool) throws(StoreError)
    /// Waits, holding no thread, for the log's own next `fsync` when one is due anyway and will cover every line
    /// appended so far (the journal's, put off for `sensors.sync_delay`); false when none is, or it did not come in
    /// time: then the outbox calls `syncNotifications`.
    func awaitNotificationsFlushed() async -> Bool
    /// Flushes to disk every line appended; throws while a failed write or flush is not mended yet.
    func syncNotifications() throws(StoreError)
    /// Done marks are most of the outbox's lines: a log of its own rewrites itself with the pending ones, flushed,
    /// and says so; the journal compacts by its own size anyway.
    func compactNotifications() throws(StoreError) -> Bool
    /// No more lines come.
    func closeNotifications()
}

/// The outbox's lines in a file of their own, `outbox.jsonl` in the state directory: a router on its own, and the
/// file hubd used before its outbox went into the journal (the outbox reads it once, then removes it).
public final class OutboxFile: NotificationLog {
    public static let fileName = "outbox.jsonl"

    public let path: String
    private let directory: String
    private let logger: Logger?
    private let state = Locked(State())

    struct State {
        var fd: Int32 = -1
        var pending: (@Sendable (_ within: Int) -> [UInt8]?)?
        /// A write or `fsync` failed: the next `sync` rewrites the file from the pending notifications.
        var rewriteWanted = false
    }

    public init(directory: String, logger: Logger? = nil) {
        self.directory = directory
        self.logger = logger
        self.path = directory + "/" + Self.fileName
    }

    public func openNotifications(pending: @escaping @Sendable (_ within: Int) -> [UInt8]?) throws(StoreError) -> [Data]
    {
        let fd = try AppendFile.open(path, in: directory)
        state.withLock {
            if $0.fd >= 0 { Glibc.close($0.fd) }
            $0.fd = fd
            $0.pending = pending
        }
        return AppendFile.lines(AppendFile.contents(path)).map { Data($0) }
    }

    public func appendNotifications(_ bytes: [UInt8], sync: Bool) throws(StoreError) {
        var fd = state.withLock { $0.fd }
        defer { state.withLock { $0.fd = fd } }
        do throws(StoreError) {
            try AppendFile.append(bytes, reopening: &fd, path: path, in: directory, sync: sync)
        } catch {
            state.withLock { $0.rewriteWanted = true }
            throw error
        }
    }

    /// A file of its own flushes when the outbox asks.
    public func awaitNotificationsFlushed() async -> Bool { false }

    public func syncNotifications() throws(StoreError) {
        if state.withLock({ $0.rewriteWanted }) {
            try rewrite()
            return
        }
        do throws(StoreError) {
            // A rewrite that failed may have closed the descriptor: the file at the path holds the lines.
            var fd = state.withLock { $0.fd }
            if fd < 0 {
                fd = try AppendFile.open(path, in: directory)
                state.withLock { $0.fd = fd }
            }
            try AppendFile.sync(fd, path: path)
        } catch {
            state.withLock { $0.rewriteWanted = true }
            logger?.warning(
                "cannot flush the outbox; writing its pending notifications anew",
                metadata: ["path": "\(path)", "error": "\(error)"])
            try rewrite()
        }
    }

    public func compactNotifications() throws(StoreError) -> Bool {
        try rewrite()
        return true
    }

    public func closeNotifications() {
        state.withLock {
            if $0.fd >= 0 { Glibc.close($0.fd) }
            $0.fd = -1
        }
    }

    /// Replaces the file with the pending notifications' lines (temporary file, `fsync`, `rename`).
    private func rewrite() throws(StoreError) {
        let lines = state.withLock { $0.pending }?(.max) ?? []
        // Whatever happens, stop appending to the old descriptor: after the rename it is a deleted file, and
        // appends there would be lost. The next write opens whatever file is at the path.
        defer { closeNotifications() }
        try replaceFileAtomically(at: path, with: lines)
        state.withLock { $0.rewriteWanted = false }
    }
}
