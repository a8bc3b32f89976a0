import Foundation
import HubCore
import HubTestKit
import Testing

/// The store on disk: crash-safe replacement, file modes, damaged files left alone, unknown keys kept.
@Suite struct DefaultsStoreTests {
    let directory: TemporaryDirectory
    let store: DefaultsStore

    init() throws {
        directory = try TemporaryDirectory(prefix: "store")
        store = DefaultsStore(directory: directory.file("state/sensorhub"))
    }

    private func mode(_ path: String) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) ?? -1
    }

    @Test func aMissingStoreIsAnEmptyRegistryAndIsNotCreatedByReading() throws {
        #expect(try store.read() == DefaultsDocument())
        #expect(!FileManager.default.fileExists(atPath: store.directory))
    }

    /// A settled file that was not replaced is not read again; every write is seen, even two within one clock tick
    /// (a file that young is always read again).
    @Test func anUnchangedFileIsNotReadAgain() async throws {
        let cache = CachedDefaults()
        #expect(try await cache.read(FileRegistry(store)) == DefaultsDocument())
        try store.update { document throws(RegistryError) in try document.addSensor(named: "kitchen") }
        let young = try #require(try store.read(ifChangedFrom: nil).identity)
        #expect(!young.isSettled)
        #expect(try store.read(ifChangedFrom: young).document?.sensor(named: "kitchen") != nil)
        // Written an hour ago: settled, so the same file is not read again.
        try FileManager.default.setAttributes(
            [.modificationDate: Date(timeIntervalSinceNow: -3600)], ofItemAtPath: store.path)
        let first = try store.read(ifChangedFrom: nil)
        let identity = try #require(first.identity)
        #expect(identity.isSettled && first.document?.sensor(named: "kitchen") != nil)
        #expect(try store.read(ifChangedFrom: identity).document == nil)
        #expect(try await cache.read(FileRegistry(store)).sensors.map(\.name) == ["kitchen"])
        for name in ["garage", "attic", "cellar"] {
            try store.update { document throws(RegistryError) in try document.addSensor(named: name) }
            #expect(try await cache.read(FileRegistry(store)).sensor(named: name) != nil)
        }
        #expect(try store.read(ifChangedFrom: identity).document?.sensors.count == 4)
        #expect(try await cache.read(FileRegistry(store)) == store.read())
        // Replaced by a file of the same size, within a tick of the clock: a file this young is read again.
        for status in ["open", "shut", "open", "shut"] {
            try store.update { document throws(RegistryError) in
                document.recordStatus(status, lastUpdated: Timestamp(millisecondsSince1970: 0), onTopic: "kitchen")
            }
            #expect(try await cache.read(FileRegistry(store)).sensor(named: "kitchen")?.status == status)
        }
        try FileManager.default.removeItem(atPath: store.path)
        #expect(try await cache.read(FileRegistry(store)) == DefaultsDocument())
    }

    /// hubd tells its own status flushes from other writers' changes by the identities a write gives: the file it
    /// wrote is the file there until someone else writes, and the next write says it read that one.
    @Test func aWriteNotesTheFileItReadAndTheFileItMade() throws {
        var noted: [(read: DefaultsStore.FileIdentity?, written: DefaultsStore.FileIdentity)] = []
        try store.update { document throws(RegistryError) in
            try document.addSensor(named: "a")
        } beforeReplacing: {
            noted.append(($0, $1))
        }
        let first = try #require(noted.last)
        #expect(first.read == nil && store.identity() == first.written)
        // Nothing changed: nothing written, nothing noted.
        try store.update { _ throws(RegistryError) in
        } beforeReplacing: {
            noted.append(($0, $1))
        }
        #expect(noted.count == 1)
        // Another writer (hubctl) replaces the file: the next write says it read that file, not its own.
        try store.update { document throws(RegistryError) in try document.addSensor(named: "b") }
        let other = try #require(store.identity())
        #expect(other != first.written)
        try store.update { document throws(RegistryError) in
            document.recordStatus("open", lastUpdated: .now, onTopic: "a")
        } beforeReplacing: {
            noted.append(($0, $1))
        }
        #expect(noted.last?.read == other && noted.last?.written == store.identity())
    }

    @Test func firstWriteCreatesTheDirectoryAndAPrivateFile() throws {
        try store.update { document throws(RegistryError) in try document.addSensor(named: "kitchen") }
        #expect(try mode(store.directory) == 0o700)
        #expect(try mode(store.path) == 0o600)
        #expect(try store.read().sensor(named: "kitchen") != nil)
        // Nothing but the document and its lock file is left behind.
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: store.directory).sorted()
                == ["defaults.json", "defaults.json.lock"])
    }

    @Test func aRefusedChangeWritesNothing() throws {
        try store.update { document throws(RegistryError) in try document.addSensor(named: "kitchen") }
        let before = try Data(contentsOf: URL(fileURLWithPath: store.path))
        #expect(throws: StoreError.registry(.duplicateName(new: "Kitchen", existing: "kitchen"))) {
            try store.update { document throws(RegistryError) in try document.addSensor(named: "Kitchen") }
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: store.path)) == before)
    }

    @Test(arguments: [
        "{\"schemaVersion\": 1, \"sensors\": [",
        "not json at all",
        "{\"schemaVersion\": 9}",
        "{\"schemaVersion\": 1, \"sensors\": [{\"name\": \"a\", \"topic\": \"a\", \"added\": \"2026-11-22T10:03:00Z\"}, {\"name\": \"A\", \"topic\": \"b\", \"added\": \"2026-11-22T10:03:00Z\"}]}",
    ])
    func aDamagedFileIsReportedAndLeftByteForByte(content: String) throws {
        try FileManager.default.createDirectory(atPath: store.directory, withIntermediateDirectories: true)
        try content.write(toFile: store.path, atomically: false, encoding: .utf8)
        let error = #expect(throws: StoreError.self) {
            try store.update { document throws(RegistryError) in try document.addSensor(named: "kitchen") }
        }
        guard case .invalidDocument(let path, let syntax)? = error else {
            Issue.record("expected invalidDocument, got \(String(describing: error))")
            return
        }
        #expect(path == store.path)
        #expect(syntax.line >= 1 && syntax.column >= 1)
        #expect(error?.description.hasPrefix("\(store.path) is not a valid defaults document: line ") == true)
        #expect(
            error?.description.hasSuffix(
                "It was left as it is: correct it by hand, or move it aside to start with an empty registry") == true)
        #expect(try String(contentsOfFile: store.path, encoding: .utf8) == content)
    }

    @Test func unknownKeysSurviveAChange() throws {
        try FileManager.default.createDirectory(atPath: store.directory, withIntermediateDirectories: true)
        let original = """
            {"schemaVersion": 1, "dashboard": {"theme": "dark"}, "sensors": [{"name": "a", "topic": "a", "status": "Waiting", "added": "2026-11-22T10:03:00.000Z", "kind": "status", "room": "attic"}], "broker": {"host": "h", "port": 1, "clientId": "c", "keepalive": 30}}
            """
        try original.write(toFile: store.path, atomically: false, encoding: .utf8)
        try store.update { document throws(RegistryError) in try document.addSensor(named: "b") }
        let written = try String(contentsOfFile: store.path, encoding: .utf8)
        for kept in [#""dashboard": {"theme": "dark"}"#, #""room": "attic""#, #""keepalive": 30"#] {
            #expect(written.contains(kept), "\(kept) was lost")
        }
    }

    @Test func temporaryFilesOfWritersThatDiedAreRemoved() throws {
        try store.update { document throws(RegistryError) in try document.addSensor(named: "a") }
        let stale = store.directory + "/.defaults.json.99999.12345.tmp"
        try "half a docu".write(toFile: stale, atomically: false, encoding: .utf8)
        try store.update { document throws(RegistryError) in try document.addSensor(named: "b") }
        #expect(!FileManager.default.fileExists(atPath: stale))
    }

    @Test func writersInOneProcessDoNotLoseEachOthersChanges() async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<4 {
                group.addTask {
                    for index in 0..<25 {
                        try store.update { document throws(RegistryError) in
                            try document.addSensor(named: "w\(writer) s\(index)")
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try store.read().sensors.count == 100)
    }

    @Test func aFileInTheWayOfTheDirectoryIsAClearError() throws {
        try FileManager.default.createDirectory(atPath: directory.file("state"), withIntermediateDirectories: true)
        try "".write(toFile: directory.file("state/sensorhub"), atomically: false, encoding: .utf8)
        let error = #expect(throws: StoreError.self) {
            try store.update { document throws(RegistryError) in try document.addSensor(named: "a") }
        }
        #expect(
            error?.description.contains("Not a directory") == true || error?.description.contains("File exists") == true
        )
    }
}
