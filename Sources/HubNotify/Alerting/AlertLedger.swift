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
    }

    init(directory: String, logger: Logger) {
        self.path = "\(directory)/alerts.json"
        self.logger = logger
    }

    /// Reads the file; a hub that never alerted has none. One that can't be read is moved aside and logged: the
    /// alerts start afresh rather than hubd not starting.
    func open() {
        guard let data = FileManager.default.contents(atPath: path) else { return }
        do {
            let book = try JSONDecoder().decode(AlertBook.self, from: data)
            state.withLock {
                $0.book = book
                $0.saved = Array(data)
            }
        } catch {
            let aside = path + ".unreadable"
            _ = try? FileManager.default.removeItem(atPath: aside)
            _ = try? FileManager.default.moveItem(atPath: path, toPath: aside)
            logger.error(
                "the alerts file could not be read; starting with no open alerts",
                metadata: ["path": "\(path)", "moved_to": "\(aside)", "error": "\(error)"])
        }
    }

    /// Runs `body` on the book.
    func update<T>(_ body: (inout AlertBook) -> T) -> T {
        state.withLock { body(&$0.book) }
    }

    var book: AlertBook { state.withLock { $0.book } }

    var errors: Int { state.withLock { $0.errors } }

    /// Writes the book when it changed; false (logged and counted) when it could not be.
    @discardableResult
    func save() -> Bool {
        // One save at a time (the router's and a button's): an older book must not land after a newer one.
        writing.withLock { _ in saveNow() }
    }

    private let writing = Locked(())

    private func saveNow() -> Bool {
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
            state.withLock {
                $0.saved = bytes
                $0.savedRevision = revision
            }
            return true
        } catch {
            state.withLock { $0.errors += 1 }
            logger.error("cannot write the alerts file", metadata: ["path": "\(path)", "error": "\(error)"])
            return false
        }
    }
}
