import Foundation
import HubCore
import HubSupport
import Logging

/// The alert book of a hub, kept in `alerts.json` in the state directory: read at start, written whole (atomically,
/// `fsync`ed) after each change and before the router says the events that made it are routed, so a crash or a
/// restart neither repeats nor forgets an alert, an acknowledgement or a silence.
final class AlertLedger: Sendable {
    let path: String
    private let logger: Logger
    private let state = Locked(State())

    private struct State {
        var book = AlertBook()
        /// What the file holds: nothing is written when the book did not change.
        var saved: [UInt8] = []
        /// The book's revision the file holds.
        var savedRevision = 0
        var errors = 0
        /// Whether the mark has been checked since this book was begun.
        var marked = false
        /// How long the last save that wrote took, encoding and writing (the router spaces saves by it).
        var lastWrite = Duration.zero
    }

    init(directory: String, logger: Logger) {
        self.path = "\(directory)/alerts.json"
        self.logger = logger
    }

    /// Where the book's epoch and its resets are noted, apart from the book: a book that is lost (deleted, or never
    /// written back after a bad disk) is noticed as lost, not taken for a hub that never alerted.
    var markPath: String { path + ".epoch" }

    /// What `alerts.json.epoch` holds: the epoch of the book last begun, and how many times one was begun again.
    struct Mark: Codable, Equatable {
        var epoch: String
        var resets: Int
    }

    /// Reads the file; a hub that never alerted has none. One that can't be read is kept aside (never over an
    /// earlier one) and one that went missing is noticed: either way the alerts start afresh under a new epoch
    /// (`AlertBook.epoch`), so no later message is taken for one already sent and no used link works again, and
    /// the reset is logged as an error and kept in the book (`hubctl status`, /metrics, the dashboard).
    func open(now: Timestamp = .now) {
        let mark = (FileManager.default.contents(atPath: markPath)).flatMap {
            try? JSONDecoder().decode(Mark.self, from: $0)
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            if let mark {
                // It was begun, and is gone.
                let reason = "\((path as NSString).lastPathComponent) was missing"
                begin(after: mark, reset: .init(at: now, reason: reason, keptAs: nil, count: mark.resets + 1))
                logger.error(
                    "the alert book is missing; starting a new one with no open alerts, no silences and no links",
                    metadata: ["path": "\(path)", "resets": "\(mark.resets + 1)", "epoch": "\(book.epoch)"])
            }
            return
        }
        do {
            let book = try JSONDecoder().decode(AlertBook.self, from: data)
            state.withLock {
                $0.book = book
                $0.saved = Array(data)
            }
            if mark == nil || mark?.epoch != book.epoch {
                note(Mark(epoch: book.epoch, resets: mark?.resets ?? book.reset?.count ?? 0))
            }
        } catch {
            let aside = keepAside(now: now)
            let reason = "\((path as NSString).lastPathComponent) could not be read: \(error)"
            let resets = (mark?.resets ?? 0) + 1
            begin(after: mark, reset: .init(at: now, reason: reason, keptAs: aside, count: resets))
            logger.error(
                "the alert book could not be read; starting a new one with no open alerts, no silences and no links",
                metadata: [
                    "path": "\(path)", "kept_as": "\(aside ?? "(could not be moved)")", "error": "\(error)",
                    "resets": "\(resets)", "epoch": "\(book.epoch)",
                ])
        }
    }

    /// Starts a new book, marked as a reset, and writes it (and its mark) at once.
    private func begin(after mark: Mark?, reset: AlertBook.Reset) {
        var book = AlertBook()
        // Never the lost book's epoch (a chance in 4 billion).
        while book.epoch == mark?.epoch { book = AlertBook() }
        book.markReset(reset)
        state.withLock {
            $0.book = book
            $0.saved = []
            $0.savedRevision = 0
        }
        save()
    }

    /// Moves the unreadable file to `alerts.json.unreadable-<time>` (a name not taken yet); its path, or nil.
    private func keepAside(now: Timestamp) -> String? {
        let stamp = now.iso8601.replacingOccurrences(of: ":", with: "")
        var aside = "\(path).unreadable-\(stamp)"
        var index = 1
        while FileManager.default.fileExists(atPath: aside) {
            index += 1
            aside = "\(path).unreadable-\(stamp)-\(index)"
        }
        guard rename(path, aside) == 0 else { return nil }
        return aside
    }

    private func note(_ mark: Mark) {
        do {
            try replaceFileAtomically(at: markPath, with: Array(try JSONEncoder().encode(mark)))
        } catch {
            logger.error("cannot write the alert book's mark", metadata: ["path": "\(markPath)", "error": "\(error)"])
        }
    }

    /// Runs `body` on the book.
    func update<T>(_ body: (inout AlertBook) -> T) -> T {
        state.withLock { body(&$0.book) }
    }

    var book: AlertBook { state.withLock { $0.book } }

    var errors: Int { state.withLock { $0.errors } }

    /// How long the last save that wrote the file took.
    var lastWrite: Duration { state.withLock { $0.lastWrite } }

    /// Writes the book when it changed; false (logged and counted) when it could not be.
    @discardableResult
    func save() -> Bool {
        // One save at a time (the router's and a button's): an older book must not land after a newer one.
        writing.withLock { _ in saveNow() }
    }

    private let writing = Locked(())

    private func saveNow() -> Bool {
        let started = ContinuousClock.now
        // Keys unsorted: sorting them was a third of the encoding (bench/alerts.sh, perf).
        let encoder = JSONEncoder()
        let (bytes, unchanged, revision) = state.withLock { state -> ([UInt8], Bool, Int) in
            // A hub that never alerted writes no file (and spends nothing on it per event); an unchanged book is not
            // even encoded.
            if state.saved.isEmpty && state.book.isEmpty { return ([], true, 0) }
            if state.book.revision == state.savedRevision && !state.saved.isEmpty { return ([], true, 0) }
            let bytes = (try? encoder.encode(state.book)).map(Array.init) ?? []
            return (bytes, bytes == state.saved, state.book.revision)
        }
        guard !unchanged, !bytes.isEmpty else {
            if !bytes.isEmpty { state.withLock { $0.savedRevision = revision } }
            return true
        }
        do {
            try replaceFileAtomically(at: path, with: bytes)
            let (epoch, resets, first) = state.withLock { state -> (String, Int, Bool) in
                defer { state.marked = true }
                state.saved = bytes
                state.savedRevision = revision
                state.lastWrite = .now - started
                return (state.book.epoch, state.book.reset?.count ?? 0, !state.marked)
            }
            if first {
                // Once a book is on disk, its loss is noticed.
                let mark = Mark(epoch: epoch, resets: resets)
                if (FileManager.default.contents(atPath: markPath)).flatMap({
                    try? JSONDecoder().decode(Mark.self, from: $0)
                }) != mark {
                    note(mark)
                }
            }
            return true
        } catch {
            state.withLock { $0.errors += 1 }
            logger.error("cannot write the alerts file", metadata: ["path": "\(path)", "error": "\(error)"])
            return false
        }
    }
}
