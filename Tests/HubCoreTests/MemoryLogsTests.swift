import Foundation
import HubTestKit
import Logging
import Testing

@testable import HubCore

/// Low wear's logs in memory (`MemoryLogs`): moved there and back with what they hold, and followed through their
/// links.
@Suite struct MemoryLogsTests {
    @Test func aLogGoesIntoMemoryAndBackWithWhatItHolds() throws {
        let state = try TemporaryDirectory()
        let memory = try TemporaryDirectory()
        try "one\ntwo\n".write(toFile: state.file("x.log"), atomically: true, encoding: .utf8)
        try MemoryLogs.keep("x.log", in: memory.path, linkedFrom: state.path)
        #expect(MemoryLogs.target(of: state.file("x.log")) == memory.file("x.log"))
        #expect(try String(contentsOfFile: state.file("x.log"), encoding: .utf8) == "one\ntwo\n")
        // Again: nothing moves.
        try "three\n".write(toFile: memory.file("x.log"), atomically: false, encoding: .utf8)
        try MemoryLogs.keep("x.log", in: memory.path, linkedFrom: state.path)
        #expect(try String(contentsOfFile: memory.file("x.log"), encoding: .utf8) == "three\n")

        try MemoryLogs.restore("x.log", in: state.path)
        #expect(MemoryLogs.target(of: state.file("x.log")) == nil)
        #expect(try String(contentsOfFile: state.file("x.log"), encoding: .utf8) == "three\n")
        #expect(!FileManager.default.fileExists(atPath: memory.file("x.log")))

        // After a power cut the link points at nothing: restored, there is no log.
        try MemoryLogs.keep("x.log", in: memory.path, linkedFrom: state.path)
        try FileManager.default.removeItem(atPath: memory.file("x.log"))
        try MemoryLogs.restore("x.log", in: state.path)
        var info = stat()
        #expect(lstat(state.file("x.log"), &info) != 0)
    }

    @Test func theJournalMovesWhole() throws {
        let state = try TemporaryDirectory()
        let memory = try TemporaryDirectory()
        try "a\n".write(toFile: state.file("journal.jsonl"), atomically: true, encoding: .utf8)
        try MemoryLogs.move("journal.jsonl", from: state.path, to: memory.path)
        #expect(!FileManager.default.fileExists(atPath: state.file("journal.jsonl")))
        #expect(try String(contentsOfFile: memory.file("journal.jsonl"), encoding: .utf8) == "a\n")
        // Nothing to move: nothing happens.
        try MemoryLogs.move("journal.jsonl", from: state.path, to: memory.path)
        #expect(try String(contentsOfFile: memory.file("journal.jsonl"), encoding: .utf8) == "a\n")
    }

    /// Home Assistant's alert entities follow the alert book's files (`RegistryWatcher`): an append to a log kept in
    /// memory is seen through its link, though it happens in another directory.
    @Test func aLogInMemoryIsWatchedWhereItIs() async throws {
        let state = try TemporaryDirectory()
        let memory = try TemporaryDirectory()
        try "{}".write(toFile: state.file("book.json"), atomically: true, encoding: .utf8)
        try MemoryLogs.keep("book.log", in: memory.path, linkedFrom: state.path)
        FileManager.default.createFile(atPath: memory.file("book.log"), contents: nil)
        let changes = RegistryWatcher.changes(
            of: state.file("book.json"), appended: [state.file("book.log")], logger: Logger(label: "test"))
        // The watches are in place once `changes` returns.
        let handle = try #require(FileHandle(forWritingAtPath: memory.file("book.log")))
        defer { try? handle.close() }
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("a line\n".utf8))
        let seen = await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                var iterator = changes.makeAsyncIterator()
                return await iterator.next() != nil
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(5))
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
        #expect(seen, "no change seen in 5 s")
    }
}
