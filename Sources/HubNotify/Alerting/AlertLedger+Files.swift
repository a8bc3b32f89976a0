import Foundation
import HubCore

/// The alert book's two files: `alerts.json`, the book whole with the number of its generation, and
/// `alerts.changes`, a line per save since (`AlertBook.Change`, with the generation it extends). Every reader (hubd
/// at its start, `hubctl`, the API) reads the book with the lines of its generation made to it; lines of another
/// generation, left by a crash between a fold and the log's truncation, are older than the book and are left out.
extension AlertLedger {
    static let bookName = "alerts.json"
    static let logName = "alerts.changes"

    /// The book as saved in a directory, and what reading it found.
    struct Saved {
        var book: AlertBook
        var generation: Int
        /// The size of `alerts.json`.
        var bookBytes: Int
        /// Lines of the log made to the book, and lines that could not be read (a line torn by a crash).
        var lines: Int
        var damaged: Int
    }

    /// What can't be read: the book's file (it is kept aside and a book begun afresh).
    struct Unreadable: Error, CustomStringConvertible {
        var description: String
    }

    /// Reads the book in `directory`; nil when there is none. The book is read, then the log, and again when the
    /// book was replaced meanwhile (a fold): never the lines without the book they extend.
    static func read(directory: String) throws(Unreadable) -> Saved? {
        let path = "\(directory)/\(bookName)"
        for _ in 0..<100 {
            guard let (data, identity) = contents(of: path) else { return nil }
            let log = AppendFile.contents("\(directory)/\(logName)")
            guard identity == Self.identity(of: path) else { continue }
            let snapshot: Snapshot
            do {
                snapshot = try JSONDecoder().decode(Snapshot.self, from: data)
            } catch {
                throw Unreadable(description: "\(error)")
            }
            var saved = Saved(
                book: snapshot.book, generation: snapshot.generation, bookBytes: data.count, lines: 0, damaged: 0)
            let decoder = JSONDecoder()
            for line in AppendFile.lines(log) {
                guard let logged = try? decoder.decode(Logged.self, from: line) else {
                    saved.damaged += 1
                    continue
                }
                guard logged.generation == snapshot.generation else { continue }
                do {
                    try saved.book.apply(logged.change)
                } catch {
                    saved.damaged += 1
                    continue
                }
                saved.lines += 1
            }
            return saved
        }
        throw Unreadable(description: "\(path) was replaced a hundred times while it was read")
    }

    /// The file's bytes, and its identity as they were read.
    private static func contents(of path: String) -> (Data, [Int])? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        var status = stat()
        guard fstat(handle.fileDescriptor, &status) == 0, let data = try? handle.readToEnd() ?? Data() else {
            return nil
        }
        return (data, [Int(status.st_ino), Int(status.st_dev)])
    }

    private static func identity(of path: String) -> [Int]? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        return [Int(status.st_ino), Int(status.st_dev)]
    }

    /// `alerts.json`: the book, and its generation beside its parts (0 in a file an earlier version wrote).
    struct Snapshot: Codable {
        var book: AlertBook
        var generation: Int

        private enum CodingKeys: String, CodingKey { case generation }

        init(book: AlertBook, generation: Int) {
            (self.book, self.generation) = (book, generation)
        }

        init(from decoder: any Decoder) throws {
            book = try AlertBook(from: decoder)
            generation =
                try decoder.container(keyedBy: CodingKeys.self).decodeIfPresent(Int.self, forKey: .generation) ?? 0
        }

        func encode(to encoder: any Encoder) throws {
            try book.encode(to: encoder)
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(generation, forKey: .generation)
        }
    }

    /// A line of `alerts.changes`: what changed, and the generation of the book it changes.
    struct Logged: Codable {
        var change: AlertBook.Change
        var generation: Int

        private enum CodingKeys: String, CodingKey { case generation = "g" }

        init(change: AlertBook.Change, generation: Int) {
            (self.change, self.generation) = (change, generation)
        }

        init(from decoder: any Decoder) throws {
            change = try AlertBook.Change(from: decoder)
            generation = try decoder.container(keyedBy: CodingKeys.self).decode(Int.self, forKey: .generation)
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(generation, forKey: .generation)
            try change.encode(to: encoder)
        }
    }
}
