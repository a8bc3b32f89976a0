import Foundation
import HubCore
import HubSupport
import Logging

/// The alert book of a hub, kept in memory and in the state directory, read at start: saved before alert messages
/// go, when a person acted, and before the router says the events that made it are routed, so a crash or a restart
/// neither repeats nor forgets an alert, an acknowledgement or a silence. hubd's readers follow the book in memory
/// (`changes()`, `LiveAlerts`).
///
/// A save appends what changed since the last one (`AlertBook.Change`) as a line of `alerts.changes`, `fsync`ed
/// unless the save need not be durable (`save(durable:)`, for `hubctl`'s reading);
/// when the log would outgrow the book (and 256 KiB), the book is written whole instead, atomically, as
/// `alerts.json` of the next generation, and the log emptied (`AlertLedger+Files`). Written whole each time, a
/// home's book (20 sensors, 4 messages a second, `bench/home.sh`) took 431 MB a day, 7.7 KB a save; a power cut's
/// 10,000 groups 150 ms of encoding a save (`ONLY=storm bench/alerts.sh`).
final class AlertLedger: Sendable {
    let path: String
    let directory: String
    private let logger: Logger
    private let state = Locked(State())

    private struct State {
        var book = AlertBook()
        /// The book as the files hold it: what the next save writes the change from. Nil: no file yet (a hub that
        /// never alerted writes none).
        var saved: AlertBook?
        /// The book's revision the files hold.
        var savedRevision = 0
        /// The generation of `alerts.json`, which the log's lines extend.
        var generation = 0
        /// The log, open for appending (-1: not open), and how long it is.
        var log: Int32 = -1
        var logBytes = 0
        /// How long `alerts.json` is: the log is folded in when it would grow longer.
        var bookBytes = 0
        /// The next save writes the book whole, changed or not: an append failed (what the log holds is not known),
        /// or the log read at start is to be folded in (no line is ever appended after one a crash tore).
        var mustFold = false
        /// Lines were appended to the log without `fsync` (`save(durable: false)`): the next durable save flushes it,
        /// changed or not.
        var unsynced = false
        var errors = 0
        /// Whether the mark has been checked since this book was begun.
        var marked = false
        /// How long the last save that wrote took, encoding and writing (the router spaces saves by it).
        var lastWrite = Duration.zero
        /// Whether `open` has read the files: until then the book in memory is not the hub's.
        var opened = false
    }

    /// Told each time the book in memory changes (`changes()`), by the order they asked.
    private let followers = Locked<(next: Int, streams: [Int: AsyncStream<Void>.Continuation])>((0, [:]))

    /// Below this, the log is not folded in however small the book: a fold writes the book whole, and a home's
    /// saves are about 1 KB. 256 KiB unless a test says otherwise.
    let logLimit: Int
    /// Low wear (`state.low_wear`): the log is in memory (`MemoryLogs`), so what must outlast a power cut (`lasting`:
    /// what a person did) is written as the book whole.
    let logInMemory: Bool

    /// In low wear the log, in memory, is folded in at 4 MiB: a home's doors fill it in about an hour.
    init(directory: String, logger: Logger, logLimit: Int? = nil, logInMemory: Bool = false) {
        self.directory = directory
        self.logLimit = logLimit ?? (logInMemory ? 1 << 22 : 1 << 18)
        self.logInMemory = logInMemory
        self.path = "\(directory)/\(Self.bookName)"
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
        defer {
            state.withLock { $0.opened = true }
            announce()
        }
        let mark = readMark()
        let saved: Saved?
        do {
            saved = try Self.read(directory: directory)
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
            return
        }
        guard let saved else {
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
        if saved.damaged > 0 {
            logger.warning(
                "lines of the alert book's log could not be read and were left out (a save a crash cut short)",
                metadata: ["path": "\(directory)/\(Self.logName)", "lines": "\(saved.damaged)"])
        }
        state.withLock {
            $0.book = saved.book
            $0.saved = saved.book
            $0.generation = saved.generation
            $0.bookBytes = saved.bookBytes
            $0.mustFold = saved.lines + saved.damaged > 0
        }
        if saved.lines + saved.damaged > 0 { save() }
        if mark == nil || mark?.epoch != saved.book.epoch {
            note(Mark(epoch: saved.book.epoch, resets: mark?.resets ?? saved.book.reset?.count ?? 0))
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
            $0.saved = nil
            $0.savedRevision = 0
        }
        // The log's lines extend the book that was lost: emptied first, so that none can be taken for a line of the
        // new book, whose generation number may be theirs.
        truncate(logPath, 0)
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

    private func readMark() -> Mark? {
        FileManager.default.contents(atPath: markPath).flatMap { try? JSONDecoder().decode(Mark.self, from: $0) }
    }

    private func note(_ mark: Mark) {
        do {
            try replaceFileAtomically(at: markPath, with: Array(try JSONEncoder().encode(mark)))
        } catch {
            logger.error("cannot write the alert book's mark", metadata: ["path": "\(markPath)", "error": "\(error)"])
        }
    }

    /// Runs `body` on the book; those following its changes are told when it changed it.
    func update<T>(_ body: (inout AlertBook) -> T) -> T {
        let (result, changed) = state.withLock { state in
            let before = state.book.revision
            let result = body(&state.book)
            return (result, state.book.revision != before)
        }
        if changed { announce() }
        return result
    }

    var book: AlertBook { state.withLock { $0.book } }

    /// The book's revision in memory (without copying the book).
    var revision: Int { state.withLock { $0.book.revision } }

    /// The book in memory, once `open` has read the files (nil before: the files are what there is).
    var openBook: AlertBook? { state.withLock { $0.opened ? $0.book : nil } }

    /// A signal each time the book in memory changes (an event taken, a request applied, a tick), the latest
    /// kept while the follower is busy: what Home Assistant's alert entities follow (the API's change feed looks at
    /// `revision`), where they watched the files, which are written only when the book must be durable.
    func changes() -> AsyncStream<Void> {
        let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let id = followers.withLock { followers in
            defer { followers.next += 1 }
            followers.streams[followers.next] = continuation
            return followers.next
        }
        continuation.onTermination = { [followers] _ in followers.withLock { _ = $0.streams.removeValue(forKey: id) } }
        return stream
    }

    private func announce() {
        for continuation in followers.withLock({ Array($0.streams.values) }) { continuation.yield() }
    }

    var errors: Int { state.withLock { $0.errors } }

    /// How long the last save that wrote the file took.
    var lastWrite: Duration { state.withLock { $0.lastWrite } }

    /// Writes what changed in the book since the last save; false (logged and counted) when it could not be.
    /// `durable`: on disk when it returns (`fsync`), with every line written before without it. Not durable (for
    /// `hubctl`, which asked hubd to write the book before reading its files: `WriteRequest`), a crash may take the
    /// line: the journal keeps the events that made it until a durable save (`NotificationRouter+Progress`).
    /// `lasting`: what a person did (an acknowledgement, a silence), which in low wear is written to the disk at
    /// once, the book whole, where the log in memory would lose it to a power cut.
    @discardableResult
    func save(durable: Bool = true, lasting: Bool = false) -> Bool {
        // One save at a time (the router's and a button's): an older book must not land after a newer one.
        writing.withLock { _ in saveNow(durable: durable, whole: lasting && logInMemory) }
    }

    private let writing = Locked(())

    /// What the files hold, as a save plans what to write.
    private struct Files {
        var generation: Int
        var logBytes: Int
        var bookBytes: Int
    }

    /// What a save writes: a line for the log, or the book whole.
    private enum Write {
        case line([UInt8])
        case book([UInt8], generation: Int)
    }

    private func saveNow(durable: Bool, whole: Bool) -> Bool {
        let started = ContinuousClock.now
        // What the save starts from, taken under the lock; the comparing and the encoding are done outside it, so
        // the router's next event does not wait for them (a storm's whole book is 150 ms of JSON). Only a save
        // (one at a time, `writing`) changes `saved`, the generation and the sizes.
        let taken = state.withLock { state -> (book: AlertBook, saved: AlertBook?, Files)? in
            // A hub that never alerted writes no file (and spends nothing on it per event); an unchanged book is not
            // even compared, unless what the files hold must be written again (`mustFold`).
            if state.saved == nil && state.book.isEmpty && state.book.reset == nil { return nil }
            if !state.mustFold, !whole, state.book.revision == state.savedRevision, state.saved != nil { return nil }
            return (
                state.book, state.mustFold || whole ? nil : state.saved,
                Files(generation: state.generation, logBytes: state.logBytes, bookBytes: state.bookBytes)
            )
        }
        guard let (book, saved, files) = taken else { return durable ? syncLog() : true }
        let write: Write?
        do {
            write = try plan(book, from: saved, files)
        } catch {
            state.withLock { $0.errors += 1 }
            logger.error("cannot encode the alert book", metadata: ["path": "\(path)", "error": "\(error)"])
            return false
        }
        guard let write else {
            state.withLock { $0.savedRevision = book.revision }
            return durable ? syncLog() : true
        }
        do {
            switch write {
            case .line(let line):
                let (fd, created) = try logDescriptor()
                do {
                    try AppendFile.append(line, to: fd, path: logPath, sync: durable)
                } catch {
                    state.withLock { $0.mustFold = true }
                    throw error
                }
                if created { try syncDirectory(directory) }
                state.withLock { state in
                    state.logBytes += line.count
                    state.unsynced = !durable
                }
            case .book(let bytes, let generation):
                try replaceFileAtomically(at: path, with: bytes)
                // The log's lines are of the last generation now: readers leave them out. They are cut off (should
                // that fail, they stay left out).
                state.withLock { state in
                    (state.generation, state.bookBytes, state.mustFold) = (generation, bytes.count, false)
                    _ = state.log < 0 ? truncate(logPath, 0) : ftruncate(state.log, 0)
                    state.logBytes = 0
                    // Lines written without `fsync` are in the book now, which is.
                    state.unsynced = false
                }
            }
        } catch {
            state.withLock { $0.errors += 1 }
            logger.error("cannot write the alert book", metadata: ["path": "\(path)", "error": "\(error)"])
            return false
        }
        let (epoch, resets, first) = state.withLock { state -> (String, Int, Bool) in
            defer { state.marked = true }
            state.saved = book
            state.savedRevision = book.revision
            state.lastWrite = .now - started
            return (book.epoch, book.reset?.count ?? 0, !state.marked)
        }
        if first {
            // Once a book is on disk, its loss is noticed.
            let mark = Mark(epoch: epoch, resets: resets)
            if readMark() != mark { note(mark) }
        }
        return true
    }

    /// What saving `book` writes: the change from `saved` as a line, when there is one and the log has room for it,
    /// else the book whole as the next generation; nil when nothing changed.
    private func plan(_ book: AlertBook, from saved: AlertBook?, _ files: Files) throws -> Write? {
        // Keys unsorted: sorting them was a third of the encoding (bench/alerts.sh, perf).
        let encoder = JSONEncoder()
        encoder.outputFormatting = .withoutEscapingSlashes
        if let saved {
            let change = AlertBook.Change(from: saved, to: book)
            if change.isEmpty { return nil }
            let line = Array(try encoder.encode(Logged(change: change, generation: files.generation))) + [0x0A]
            if files.logBytes + line.count <= max(logLimit, files.bookBytes) { return .line(line) }
        }
        let whole = try encoder.encode(Snapshot(book: book, generation: files.generation + 1))
        return .book(Array(whole), generation: files.generation + 1)
    }

    var logPath: String { "\(directory)/\(Self.logName)" }

    /// Flushes the lines appended without `fsync`, if any; false (logged and counted) when it fails, and the next
    /// save then writes the book whole (what the log holds on disk is not known).
    private func syncLog() -> Bool {
        let fd = state.withLock { $0.unsynced ? $0.log : -1 }
        guard fd >= 0 else { return true }
        do {
            try AppendFile.sync(fd, path: logPath)
        } catch {
            state.withLock { state in
                state.errors += 1
                state.mustFold = true
            }
            logger.error("cannot write the alert book", metadata: ["path": "\(logPath)", "error": "\(error)"])
            return false
        }
        state.withLock { $0.unsynced = false }
        return true
    }

    /// The log's descriptor, opened the first time (and whether that created the file).
    private func logDescriptor() throws(StoreError) -> (Int32, created: Bool) {
        if let open = state.withLock({ $0.log >= 0 ? $0.log : nil }) { return (open, false) }
        let existed = access(logPath, F_OK) == 0
        let fd = try AppendFile.open(logPath, in: directory)
        var info = stat()
        let size = fstat(fd, &info) == 0 ? Int(info.st_size) : 0
        state.withLock { ($0.log, $0.logBytes) = (fd, size) }
        return (fd, !existed)
    }
}
