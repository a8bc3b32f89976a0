import Foundation
import HubCore
import HubSupport
import HubTestKit
import Logging
import Testing

@testable import HubNotify

/// The alert book saved by what changed (`AlertLedger`, `AlertBook.Change`): a save appends a line with the entries
/// that changed; the book is written whole only when the log would outgrow it; whatever a reader or a restart finds
/// on disk (a fold cut short, a line torn by a crash) reads as the book last saved.
@Suite struct AlertLedgerTests {
    static func event(_ sensor: String, _ sequence: Int, _ status: String) -> SensorEvent {
        SensorEvent(
            id: SensorEvent.id(sensor: sensor, sequence: sequence), kind: .changed, sensor: sensor, topic: sensor,
            oldStatus: "closed", newStatus: status,
            time: Timestamp(millisecondsSince1970: Int64(1_800_000_000 + sequence) * 1000))
    }

    static func alert(_ sensor: String, _ sequence: Int) -> AlertBook.Alert {
        let event = event(sensor, sequence, "open")
        return AlertBook.Alert(
            id: "door/\(sensor)/open", rule: "door", sensor: sensor, kind: "open", group: "door|\(sensor)",
            firing: sequence % 3 != 0, event: event, opened: event.time)
    }

    /// A change to the book of every kind it keeps, made at random.
    static func change(_ book: inout AlertBook, step: Int, using random: inout some RandomNumberGenerator) {
        let sensor = "s\(Int.random(in: 0..<40, using: &random))"
        let group = "g\(Int.random(in: 0..<5, using: &random))"
        switch Int.random(in: 0..<12, using: &random) {
        case 0, 1: book.alerts["door/\(sensor)/open"] = alert(sensor, step)
        case 2: book.alerts["door/\(sensor)/open"] = nil
        case 3:
            book.taken[sensor] = .init(
                sequence: step, at: Timestamp(millisecondsSince1970: Int64(1_800_000_000 + step) * 1000))
        case 4: book.recent[Int64(1_800_000_000 + step % 120)] = step
        case 5:
            book.links["h\(step % 50)"] = .init(
                alerts: ["door/\(sensor)/open"], expires: Timestamp(millisecondsSince1970: Int64(1_800_086_400) * 1000),
                used: nil)
        case 6:
            if book.offline.contains(sensor) { book.offline.remove(sensor) } else { book.offline.insert(sensor) }
        case 8, 9:
            // A member joins at the end (as an outage's wills do: saved as the members that joined).
            book.groups[group, default: AlertBook.Group(key: group, rule: "door")].members.append("door/\(sensor)/open")
        case 10:
            // One leaves from the front, or the group's time moves: saved whole.
            if book.groups[group]?.members.isEmpty == false { book.groups[group]?.members.removeFirst() }
            book.groups[group]?.due = Timestamp(millisecondsSince1970: Int64(1_800_000_000 + step) * 1000)
        case 11: book.groups[group] = nil
        default: book.counters.messages += 1
        }
        book.revision += 1
    }

    /// The book as a reader finds it on disk equals the ledger's after every save, through folds and reopenings.
    @Test func whatIsOnDiskIsTheBookAfterEverySave() throws {
        let directory = try TemporaryDirectory()
        var random = SplitMix64(seed: 54)
        // A log of 4 KiB at most (beside a book as long): folded in every few dozen saves.
        var ledger = AlertLedger(directory: directory.path, logger: Logger(label: "test"), logLimit: 4096)
        ledger.open()
        var folds = 0
        var lastGeneration = 0
        for step in 1...2000 {
            ledger.update { Self.change(&$0, step: step, using: &random) }
            #expect(ledger.save())
            // No file until the book holds something (a hub that never alerted writes none).
            guard let saved = try AlertLedger.read(directory: directory.path) else {
                #expect(ledger.book.isEmpty, "step \(step)")
                continue
            }
            #expect(AlertBook.Change(from: saved.book, to: ledger.book).isEmpty, "step \(step)")
            if saved.generation != lastGeneration {
                folds += 1
                lastGeneration = saved.generation
            }
            if step % 400 == 0 {
                // A restart: the new ledger reads what the last one saved, and folds its log in.
                let before = ledger.book
                ledger = AlertLedger(directory: directory.path, logger: Logger(label: "test"), logLimit: 4096)
                ledger.open()
                #expect(AlertBook.Change(from: ledger.book, to: before).isEmpty)
                #expect(AppendFile.contents(directory.file(AlertLedger.logName)).isEmpty)
                // That fold is not one of those counted below.
                lastGeneration = try #require(try AlertLedger.read(directory: directory.path)).generation
            }
        }
        // 2,000 saves: some whole books (the log outgrew 4 KiB or the book), most of them lines.
        #expect(folds >= 10 && folds < 400, "\(folds) folds")
    }

    /// A save writes what changed: a line with the one alert, not the book; `alerts.json` is left as it is.
    @Test func aSaveAppendsWhatChangedAndLeavesTheBookFile() throws {
        let directory = try TemporaryDirectory()
        let ledger = AlertLedger(directory: directory.path, logger: Logger(label: "test"))
        ledger.open()
        ledger.update { book in
            for index in 0..<200 { book.alerts["door/s\(index)/open"] = Self.alert("s\(index)", index) }
            book.revision += 1
        }
        #expect(ledger.save())
        let file = directory.file(AlertLedger.bookName)
        let whole = try Data(contentsOf: URL(fileURLWithPath: file))
        var before = stat()
        #expect(stat(file, &before) == 0)
        ledger.update { book in
            book.alerts["door/s7/open"]?.acknowledged = .init(by: "ana", at: .now, via: "web")
            book.revision += 1
        }
        #expect(ledger.save())
        let log = String(decoding: AppendFile.contents(directory.file(AlertLedger.logName)), as: UTF8.self)
        #expect(log.hasSuffix("\n") && log.split(separator: "\n").count == 1)
        #expect(log.contains("\"door/s7/open\"") && !log.contains("door/s8/open"), "\(log)")
        #expect(log.utf8.count * 50 < whole.count, "a line of \(log.utf8.count) bytes beside a book of \(whole.count)")
        var after = stat()
        #expect(stat(file, &after) == 0 && after.st_ino == before.st_ino && after.st_size == before.st_size)
        #expect(try SavedAlerts(directory: directory.path).book.alerts["door/s7/open"]?.acknowledged?.by == "ana")
        // Nothing changed: nothing written.
        ledger.update { $0.revision += 1 }
        #expect(ledger.save())
        #expect(AppendFile.contents(directory.file(AlertLedger.logName)).count == log.utf8.count)
    }

    /// An alert the book had that changes is written as a merge patch of its JSON: a door's alert firing again
    /// writes its new event and times, not its rule, group and the rest again. A patch that can't be made (its alert
    /// is not in the book the line extends) leaves its line out, as a torn one is.
    @Test func aChangedAlertIsWrittenAsItsPatch() throws {
        let directory = try TemporaryDirectory()
        let ledger = AlertLedger(directory: directory.path, logger: Logger(label: "test"))
        ledger.open()
        var alert = Self.alert("front", 1)
        alert.told = ["phone", "hook"]
        alert.labels = ["room": "hall"]
        ledger.update { book in
            book.alerts[alert.id] = alert
            book.revision += 1
        }
        #expect(ledger.save())
        let whole = try JSONEncoder().encode(alert).count
        let logPath = directory.file(AlertLedger.logName)
        for step in 2...6 {
            ledger.update { book in
                book.alerts[alert.id]?.firing = step % 2 == 0
                book.alerts[alert.id]?.event = Self.event("front", step, step % 2 == 0 ? "open" : "closed")
                book.alerts[alert.id]?.resolved = step % 2 == 0 ? nil : Self.event("front", step, "closed").time
                book.revision += 1
            }
            #expect(ledger.save())
            let line = try #require(AppendFile.lines(AppendFile.contents(logPath)).last)
            let text = String(decoding: line, as: UTF8.self)
            #expect(text.contains("\"patched\"") && !text.contains("\"hall\"") && !text.contains("\"rule\""), "\(text)")
            #expect(line.count * 2 < whole, "a line of \(line.count) bytes for an alert of \(whole)")
            let read = try #require(try AlertLedger.read(directory: directory.path))
            #expect(read.damaged == 0 && read.book.alerts == ledger.book.alerts, "step \(step)")
        }
        // A patch to an alert the book lacks: that line is left out, the others are read.
        var stray = AlertLedger.Logged(
            change: .init(), generation: try #require(try AlertLedger.read(directory: directory.path)).generation)
        stray.change.patched["door/nowhere/open"] = .object([.init(key: "firing", value: .bool(false))])
        let handle = try #require(FileHandle(forWritingAtPath: logPath))
        try handle.seekToEnd()
        try handle.write(contentsOf: try JSONEncoder().encode(stray) + Data("\n".utf8))
        try handle.close()
        let read = try #require(try AlertLedger.read(directory: directory.path))
        #expect(read.damaged == 1 && read.lines == 5 && read.book.alerts == ledger.book.alerts)
    }

    /// A crash between a fold and the log's truncation leaves lines of the last generation: readers leave them
    /// out. A line torn by a crash is left out, logged, and folded in at the next start; no line follows it.
    @Test func linesOfAnotherGenerationAndATornLineAreLeftOut() throws {
        let directory = try TemporaryDirectory()
        let ledger = AlertLedger(directory: directory.path, logger: Logger(label: "test"))
        ledger.open()
        ledger.update { book in
            book.alerts["door/a/open"] = Self.alert("a", 1)
            book.revision += 1
        }
        #expect(ledger.save())
        ledger.update { book in
            book.alerts["door/b/open"] = Self.alert("b", 2)
            book.revision += 1
        }
        #expect(ledger.save())
        let logPath = directory.file(AlertLedger.logName)
        let line = AppendFile.contents(logPath)
        #expect(try #require(try AlertLedger.read(directory: directory.path)).lines == 1)
        // The book folded (generation 2) and the crash came before the log was cut: the old line stays.
        let generation = try #require(try AlertLedger.read(directory: directory.path)).generation
        var stale = try JSONDecoder().decode(AlertLedger.Logged.self, from: line)
        stale.change.alerts["door/b/open"] = .some(nil)
        stale.change.alerts["door/c/open"] = .some(Self.alert("c", 3))
        let book = AlertLedger.Snapshot(book: ledger.book, generation: generation + 1)
        try JSONEncoder().encode(book).write(to: URL(fileURLWithPath: directory.file(AlertLedger.bookName)))
        try (JSONEncoder().encode(stale) + Data("\n".utf8)).write(to: URL(fileURLWithPath: logPath))
        var read = try #require(try AlertLedger.read(directory: directory.path))
        #expect(read.lines == 0 && Set(read.book.alerts.keys) == ["door/a/open", "door/b/open"])
        // A torn line of this generation: left out, and the next start folds the log in.
        var torn = AlertLedger.Logged(change: .init(), generation: generation + 1)
        torn.change.alerts["door/d/open"] = .some(Self.alert("d", 4))
        let tornBytes = try JSONEncoder().encode(torn)
        let handle = try #require(FileHandle(forWritingAtPath: logPath))
        try handle.seekToEnd()
        try handle.write(contentsOf: tornBytes.prefix(tornBytes.count / 2))
        try handle.close()
        read = try #require(try AlertLedger.read(directory: directory.path))
        #expect(read.damaged == 1 && Set(read.book.alerts.keys) == ["door/a/open", "door/b/open"])
        let log = LogRecorder()
        let reopened = AlertLedger(directory: directory.path, logger: Logger(label: "test") { _ in log.handler() })
        reopened.open()
        #expect(log.all.contains { $0.level == .warning && $0.metadata["lines"] == "1" })
        #expect(AppendFile.contents(logPath).isEmpty)
        #expect(Set(reopened.book.alerts.keys) == ["door/a/open", "door/b/open"])
        read = try #require(try AlertLedger.read(directory: directory.path))
        #expect(read.generation == generation + 2 && read.damaged == 0)
    }

    /// A book written whole by the version before (no generation, every part given) reads as it was.
    @Test func aBookAnEarlierVersionWroteReadsAsItWas() throws {
        let directory = try TemporaryDirectory()
        let earlier = """
            {"alerts":{},"groups":{},"silences":[],"offline":["mains"],"quiet":{},"quietBackends":{},\
            "taken":{"door":{"sequence":4,"at":"2026-12-06T10:00:00Z"}},"links":{},"counters":{"flapped":2,\
            "heldAndClosed":0,"silenced":0,"messages":7,"outages":1,"replayed":0},"epoch":"0badcafe",\
            "announcements":[],"recent":[1765015200,3]}
            """
        try Data(earlier.utf8).write(to: URL(fileURLWithPath: directory.file(AlertLedger.bookName)))
        let saved = try #require(try AlertLedger.read(directory: directory.path))
        #expect(saved.generation == 0 && saved.book.epoch == "0badcafe" && saved.book.offline == ["mains"])
        #expect(saved.book.taken["door"]?.sequence == 4 && saved.book.counters.messages == 7)
        #expect(saved.book.recent == [1_765_015_200: 3])
    }
}
