import Foundation
import HubCore
import HubSupport
import HubTestKit
import Testing

/// The registry's status log (`defaults.statuses`): what hubd records of N sensors is N appended lines, not a
/// rewrite of `defaults.json`; every reader sees it; any other change, or a log grown past the document, folds it in.
@Suite struct StatusLogTests {
    let directory: TemporaryDirectory
    let store: DefaultsStore

    init() throws {
        directory = try TemporaryDirectory(prefix: "statuslog")
        store = DefaultsStore(directory: directory.file("state"))
        try store.update { document throws(RegistryError) in
            for name in ["door", "window", "cellar"] { try document.addSensor(named: name) }
        }
    }

    private func update(_ name: String, _ status: String, sequence: Int, at millisecond: Int64 = 1)
        throws -> SensorStatusUpdate
    {
        let sensor = try #require(try store.read().sensor(named: name))
        return SensorStatusUpdate(
            topic: sensor.topic, sensorID: sensor.id, status: status,
            lastUpdated: Timestamp(millisecondsSince1970: millisecond), sequence: sequence,
            attributes: SensorAttributes([.init(name: "battery", value: .number(87))]))
    }

    private func bytes(_ path: String) -> [UInt8] {
        FileManager.default.contents(atPath: path).map { [UInt8]($0) } ?? []
    }

    private func inode(_ path: String) -> UInt64 {
        var status = stat()
        return stat(path, &status) == 0 ? UInt64(status.st_ino) : 0
    }

    @Test func recordingAppendsALineASensorAndLeavesTheDocumentAlone() async throws {
        // Written an hour ago: a reader that knows this document does not read it again, unless the log grew.
        try FileManager.default.setAttributes(
            [.modificationDate: Date(timeIntervalSinceNow: -3600)], ofItemAtPath: store.path)
        let document = bytes(store.path)
        let (known, _) = try store.read(ifChangedFrom: nil)
        #expect(try known?.isSettled == true && store.read(ifChangedFrom: known).document == nil)
        let registry = FileRegistry(store)
        let version = try #require(await registry.version())
        let updates = [try update("door", "open", sequence: 1), try update("window", "shut", sequence: 1)]
        let moved = Locked<(DefaultsStore.FileIdentity?, DefaultsStore.FileIdentity)?>(nil)
        try store.record(updates) { read, written in moved.withLock { $0 = (read, written) } }
        #expect(bytes(store.path) == document, "defaults.json is not rewritten")
        let log = bytes(store.statusLogPath)
        #expect(log.count(where: { $0 == UInt8(ascii: "\n") }) == 2 && log.count < 2 * 200)
        let read = try store.read()
        #expect(read.sensor(named: "door")?.status == "open" && read.sensor(named: "window")?.status == "shut")
        #expect(read.sensor(named: "door")?.attributes == updates[0].attributes)
        #expect(read.sensor(named: "cellar")?.status == Sensor.waiting)
        #expect(read.revision == 0, "what was read is what is stored")
        // Readers that cache by identity (the HTTP API) see the append; hubd is told the identity it made.
        let (after, changed) = try store.read(ifChangedFrom: known)
        #expect(changed?.sensor(named: "door")?.status == "open")
        let (before, written) = try #require(moved.withLock { $0 })
        #expect(before == known && written == after && written != known)
        #expect(try store.read(ifChangedFrom: after).document == nil)
        // The same through the store hubd's registry writer uses.
        try await registry.recordStatuses([try update("cellar", "dry", sequence: 1)]) { _, _ in }
        #expect(bytes(store.path) == document)
        #expect(try store.read().sensor(named: "cellar")?.status == "dry")
        // The sensors are the same: hubd's subscriptions need not read them again. A fold makes a new document.
        let appended = try #require(await registry.version())
        #expect(appended != version && appended.hasSameSensors(as: version))
        try store.update { document throws(RegistryError) in try document.addSensor(named: "attic") }
        let folded = try #require(await registry.version())
        #expect(!folded.hasSameSensors(as: appended))
    }

    /// Every member comes back as it went, in both forms a session takes (the journal reads its lines the same way).
    @Test func everyMemberSurvivesTheLog() throws {
        var door = try update("door", "offline", sequence: 4)
        door.alerts = ["battery low"]
        door.statusBeforeOffline = "open"
        door.session = OpenSession(id: "\(door.sensorID)-3", started: Timestamp(millisecondsSince1970: 5))
        var window = try update("window", "shut", sequence: 2)
        window.session = OpenSession(
            id: "\(window.sensorID)-1", started: Timestamp(millisecondsSince1970: 7),
            last: Timestamp(millisecondsSince1970: 9), explicit: true)
        try store.record([door, window]) { _, _ in }
        let read = try store.read()
        for (name, sent) in [("door", door), ("window", window)] {
            let sensor = try #require(read.sensor(named: name))
            #expect(sensor.status == sent.status && sensor.lastUpdated == sent.lastUpdated)
            #expect(sensor.sequence == sent.sequence && sensor.attributes == sent.attributes)
            #expect(sensor.alerts == sent.alerts && sensor.statusBeforeOffline == sent.statusBeforeOffline)
            #expect(sensor.session == sent.session)
        }
    }

    @Test func anyOtherChangeFoldsTheLogIntoTheDocumentAndRemovesIt() throws {
        try store.record([try update("door", "open", sequence: 1)]) { _, _ in }
        try store.update { document throws(RegistryError) in try document.addSensor(named: "attic") }
        #expect(!FileManager.default.fileExists(atPath: store.statusLogPath))
        let decoded = try DefaultsDocument.decode(bytes(store.path))
        #expect(decoded.sensor(named: "door")?.status == "open", "the status is in defaults.json itself")
        #expect(try store.read().sensors.map(\.name) == ["door", "window", "cellar", "attic"])
        // A change that changes nothing writes nothing, and leaves the log.
        try store.record([try update("window", "shut", sequence: 1)]) { _, _ in }
        let document = bytes(store.path)
        try store.update { document throws(RegistryError) in _ = document.sensor(named: "door") }
        #expect(bytes(store.path) == document && !bytes(store.statusLogPath).isEmpty)
    }

    /// Readers take no lock: one reading while hubd appends and hubctl folds (as the HTTP API does) always gets a
    /// whole registry. (With the log emptied in place, a reader that had read part of it went on into the next
    /// log's lines, and saw a damaged line: CI, 2026-11-28.)
    @Test func readersNeverSeeHalfOfAFold() throws {
        let stop = Locked(false)
        let reads = Locked((count: 0, failure: String?.none))
        let done = DispatchSemaphore(value: 0)
        let store = store
        // A thread of its own: the writes below block theirs.
        Thread.detachNewThread {
            defer { done.signal() }
            while !stop.withLock({ $0 }) {
                do {
                    let document = try store.read()
                    if document.sensor(named: "door") == nil { reads.withLock { $0.failure = "no door" } }
                    reads.withLock { $0.count += 1 }
                } catch {
                    reads.withLock { $0.failure = "\(error)" }
                    return
                }
            }
        }
        for sequence in 1...300 {
            try store.record([try update("door", "s\(sequence)", sequence: sequence)]) { _, _ in }
            if sequence % 5 == 0 {
                try store.update { document throws(RegistryError) in
                    if document.sensor(named: "attic") == nil {
                        try document.addSensor(named: "attic")
                    } else {
                        _ = try document.removeSensor(named: "attic")
                    }
                }
            }
        }
        stop.withLock { $0 = true }
        done.wait()
        let (count, failure) = reads.withLock { $0 }
        #expect(failure == nil)
        #expect(count > 10, "\(count) reads")
        #expect(try store.read().sensor(named: "door")?.status == "s300")
    }

    /// A crash while a line was written leaves it without its newline: left out, and the next append starts a line
    /// of its own.
    @Test func aTornLastLineIsLeftOut() throws {
        try store.record([try update("door", "open", sequence: 1)]) { _, _ in }
        let torn = try update("window", "shut", sequence: 1)
        let handle = try #require(FileHandle(forWritingAtPath: store.statusLogPath))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(#"{"topic":"window","sensor":"\#(torn.sensorID)","stat"#.utf8))
        try handle.close()
        #expect(try store.read().sensor(named: "door")?.status == "open")
        #expect(try store.read().sensor(named: "window")?.status == Sensor.waiting)
        try store.record([try update("cellar", "dry", sequence: 1)]) { _, _ in }
        let read = try store.read()
        #expect(read.sensor(named: "cellar")?.status == "dry" && read.sensor(named: "door")?.status == "open")
    }

    /// A complete line that is not an update is damage: every reader says where, and the files are left as they are.
    @Test func aDamagedLineIsAnErrorNamingTheLogAndTheLine() throws {
        try store.record([try update("door", "open", sequence: 1)]) { _, _ in }
        let handle = try #require(FileHandle(forWritingAtPath: store.statusLogPath))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("{\"topic\": \"door\"}\n".utf8))
        try handle.close()
        let log = bytes(store.statusLogPath)
        #expect {
            try store.read()
        } throws: { error in
            "\(error)".contains(store.statusLogPath) && "\(error)".contains("line 2")
                && "\(error)".contains("topic, sensor, status and seq")
        }
        #expect(throws: StoreError.self) {
            try store.update { document throws(RegistryError) in try document.addSensor(named: "attic") }
        }
        #expect(bytes(store.statusLogPath) == log)
    }

    /// Replaying updates the document holds already (a fold that died before it emptied the log), or older ones,
    /// changes nothing: the stale line is replayed over the newer status folded in after it.
    @Test func replayingWhatTheDocumentHoldsChangesNothing() throws {
        try store.record([try update("door", "open", sequence: 1, at: 10)]) { _, _ in }
        let stale = bytes(store.statusLogPath)
        try store.update { document throws(RegistryError) in try document.addSensor(named: "attic") }
        try Data(stale).write(to: URL(fileURLWithPath: store.statusLogPath))
        var read = try store.read()
        #expect(read.sensor(named: "door")?.status == "open" && read.sensor(named: "door")?.sequence == 1)
        // A newer status folded in, then an older line: the newer stays.
        try store.record([try update("door", "shut", sequence: 2, at: 20)]) { _, _ in }
        try store.update { document throws(RegistryError) in try document.removeSensor(named: "attic") }
        try Data(stale).write(to: URL(fileURLWithPath: store.statusLogPath))
        read = try store.read()
        #expect(read.sensor(named: "door")?.status == "shut")
        // An update for a sensor removed since changes nothing either.
        let cellar = try update("cellar", "wet", sequence: 1)
        try store.update { document throws(RegistryError) in try document.removeSensor(named: "cellar") }
        try store.update { document throws(RegistryError) in try document.addSensor(named: "cellar") }
        try store.record([cellar]) { _, _ in }
        #expect(try store.read().sensor(named: "cellar")?.status == Sensor.waiting)
    }

    /// The log never grows past a quarter of the document (or 256 KiB): the append that would make it is folded in
    /// instead, so for each byte logged at most four of the document are written again.
    @Test func aLogThatWouldOutgrowTheDocumentIsFoldedIn() throws {
        let names = try store.read().sensors
        var (rewrites, logged) = (0, 0)
        var lastInode = inode(store.path)
        // About 110 bytes a line, 33 KB a call: about 2 MiB in all.
        for sequence in 1...60 {
            let updates = (0..<100).flatMap { index in
                names.map {
                    SensorStatusUpdate(
                        topic: $0.topic, sensorID: $0.id, status: "s\(sequence)-\(index)",
                        lastUpdated: Timestamp(millisecondsSince1970: Int64(sequence * 1000 + index)),
                        sequence: sequence)
                }
            }
            let before = bytes(store.statusLogPath).count
            try store.record(updates) { _, _ in }
            let after = bytes(store.statusLogPath).count
            #expect(after <= 1 << 18)
            if inode(store.path) != lastInode {
                rewrites += 1
                lastInode = inode(store.path)
                #expect(after == 0)
            } else {
                logged += after - before
            }
        }
        #expect(logged > 1 << 20 && rewrites >= 2 && rewrites <= logged / (1 << 18) + 1, "\(logged) B, \(rewrites)")
        #expect(try store.read().sensor(named: "door")?.status == "s60-99")
    }
}
