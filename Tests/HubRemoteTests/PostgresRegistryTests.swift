import Foundation
import HubCore
import HubRemote
import HubSupport
import HubTestKit
import Testing

/// The registry in a real PostgreSQL 15: the same document and rules as the file, several writers at once, only the
/// touched rows written, and every change announced to whoever follows it, even across a lost connection.
@Suite(.timeLimit(.minutes(6)))  // with the wait for one of the two PostgreSQL servers a test process runs at once
struct PostgresRegistryTests {
    func registry(_ server: PostgresServer, _ database: String) -> PostgresRegistry {
        PostgresRegistry(server: server.settings(database: database), applicationName: "test", logger: testLogger)
    }

    /// The same changes, made to a file and to the database, give the same document.
    @Test func theDatabaseKeepsWhatTheFileKeeps() async throws {
        try await withPostgres { server in
            try await server.createDatabase("same")
            let database = registry(server, "same")
            let directory = try TemporaryDirectory(prefix: "registry")
            let file = FileRegistry(DefaultsStore(directory: directory.path))
            #expect(try await database.read() == DefaultsDocument())
            #expect(try await database.read(ifChangedFrom: nil).version == nil)
            for store in [file, database] as [any RegistryStore] {
                try await store.update { document throws(RegistryError) in
                    try document.addSensor(named: "Kitchen", topic: "home/kitchen")
                    try document.addSensor(named: "hall", kind: .numeric, silenceTimeout: .seconds(600))
                    try document.addSensor(named: "shed")
                    document.broker.host = "broker.lan"
                }
                try await store.update { document throws(RegistryError) in
                    try document.renameSensor("hall", to: "Hallway")
                    try document.removeSensor(named: "shed")
                    try document.addSensor(named: "attic")
                    document.recordStatus(
                        "open", lastUpdated: Timestamp(millisecondsSince1970: 1_795_000_000_000),
                        onTopic: "home/kitchen", sequence: 1)
                }
            }
            let fromFile = try await file.read()
            let fromDatabase = try await database.read()
            #expect(fromDatabase.sensors.map(\.name) == ["Kitchen", "Hallway", "attic"])
            #expect(fromDatabase.broker.host == "broker.lan")
            // The same sensors but for their random ids.
            func sameButIDs(_ a: Sensor, _ b: Sensor) -> Bool {
                a.name == b.name && a.topic == b.topic && a.status == b.status && a.kind == b.kind
                    && a.silenceTimeout == b.silenceTimeout && a.sequence == b.sequence
                    && a.lastUpdated == b.lastUpdated
            }
            #expect(fromFile.sensors.count == fromDatabase.sensors.count)
            #expect(zip(fromFile.sensors, fromDatabase.sensors).allSatisfy(sameButIDs))
            // The rules are the document's: a duplicate name, in any case, is refused and nothing is written.
            let error = await #expect(throws: StoreError.self) {
                try await database.update { document throws(RegistryError) in
                    try document.addSensor(named: "porch")
                    try document.addSensor(named: "KITCHEN")
                }
            }
            #expect(error?.isInvalidInput == true && "\(error!)".contains("Kitchen"))
            #expect(try await database.read().sensor(named: "porch") == nil)
            await database.close()
        }
    }

    /// Four writers at once, each with a connection of its own (four hubctl processes): every change is kept.
    @Test func concurrentWritersLoseNothing() async throws {
        try await withPostgres { server in
            try await server.createDatabase("busy")
            try await withThrowingTaskGroup(of: Void.self) { group in
                for writer in 0..<4 {
                    group.addTask {
                        let store = registry(server, "busy")
                        for index in 0..<25 {
                            try await store.update { document throws(RegistryError) in
                                try document.addSensor(named: "w\(writer) s\(index)")
                            }
                        }
                        await store.close()
                    }
                }
                try await group.waitForAll()
            }
            let store = registry(server, "busy")
            let document = try await store.read()
            #expect(document.sensors.count == 100 && Set(document.sensors.map(\.name)).count == 100)
            #expect(try await server.count("SELECT revision FROM sensorhub_registry", database: "busy") == 100)
            await store.close()
        }
    }

    /// A status write reads and writes its sensors' rows only, moves the statuses' revision and not the sensors', and
    /// an unchanged registry is not read again.
    @Test func statusesTouchOnlyTheirRows() async throws {
        try await withPostgres { server in
            try await server.createDatabase("statuses")
            let store = registry(server, "statuses")
            try await store.update { document throws(RegistryError) in
                for name in ["a", "b", "c"] { try document.addSensor(named: name) }
            }
            let (version, _) = try await store.read(ifChangedFrom: nil)
            let known = try #require(version)
            #expect(try await store.read(ifChangedFrom: known).document == nil)
            let before = try await server.psql(
                "SELECT string_agg(xmin::text, ',' ORDER BY position) FROM sensorhub_sensors", database: "statuses")
            let moved = Locked<(RegistryVersion?, RegistryVersion)?>(nil)
            let b = try #require(try await store.read().sensor(named: "b"))
            let opened = SensorStatusUpdate(topic: "b", sensorID: b.id, status: "open", lastUpdated: .now, sequence: 1)
            try await store.recordStatuses([opened]) { read, written in
                moved.withLock { $0 = (read, written) }
            }
            let after = try await server.psql(
                "SELECT string_agg(xmin::text, ',' ORDER BY position) FROM sensorhub_sensors", database: "statuses")
            let (beforeA, beforeB, beforeC) = Self.three(before)
            let (afterA, afterB, afterC) = Self.three(after)
            #expect(beforeA == afterA && beforeC == afterC && beforeB != afterB)
            let (read, written) = try #require(moved.withLock { $0 })
            #expect(read == known && written != known)
            #expect(written.revisions?.sensors == known.revisions?.sensors)
            let (changed, document) = try await store.read(ifChangedFrom: known)
            #expect(changed == written && document?.sensor(named: "b")?.status == "open")
            // A status for a sensor that is gone changes nothing, and writes nothing.
            var gone = opened
            gone.topic = "z"
            try await store.recordStatuses([gone]) { _, _ in
                Issue.record("nothing was written")
            }
            #expect(await store.version() == written)
            await store.close()
        }
    }

    /// Every change made elsewhere is announced; after the listener's connection is killed, it connects again and
    /// signals, so a change made meanwhile is not missed.
    @Test func changesAreAnnouncedEvenAcrossALostConnection() async throws {
        try await withPostgres { server in
            try await server.createDatabase("follow")
            let follower = registry(server, "follow")
            let writer = registry(server, "follow")
            try await writer.update { document throws(RegistryError) in try document.addSensor(named: "first") }
            let signals = Locked(0)
            let watching = Task {
                for await _ in follower.changes(logger: testLogger) { signals.withLock { $0 += 1 } }
            }
            defer { watching.cancel() }
            // One signal once listening.
            try await eventually("the follower listens") { signals.withLock { $0 } >= 1 }
            let listening = signals.withLock { $0 }
            try await writer.update { document throws(RegistryError) in try document.addSensor(named: "second") }
            try await eventually("the change is announced") { signals.withLock { $0 } > listening }
            // The listener's backend dies; a change is made before it is back.
            let killed = signals.withLock { $0 }
            let terminated = try await server.psql(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'test listener'",
                database: "follow")
            #expect(terminated == "t")
            try await writer.update { document throws(RegistryError) in try document.addSensor(named: "third") }
            try await eventually("the follower is back and says so", within: .seconds(20)) {
                signals.withLock { $0 } > killed
            }
            #expect(try await follower.read().sensors.map(\.name) == ["first", "second", "third"])
            // Statuses are not announced: nothing comes within half a second of a status write.
            let quiet = signals.withLock { $0 }
            let first = try #require(try await writer.read().sensor(named: "first"))
            try await writer.recordStatuses([
                SensorStatusUpdate(topic: "first", sensorID: first.id, status: "on", lastUpdated: .now, sequence: 1)
            ]) { _, _ in }
            try await Task.sleep(for: .milliseconds(500))
            #expect(signals.withLock { $0 } == quiet)
            try await writer.update { document throws(RegistryError) in try document.addSensor(named: "fourth") }
            try await eventually("the next change is announced") { signals.withLock { $0 } > quiet }
            #expect(signals.withLock { $0 } == quiet + 1)
            await writer.close()
            await follower.close()
        }
    }

    /// Two agents' ingest steps on one sensor at once: the row lock makes them take turns, so each starts from the
    /// other's last record (no update lost), and an event already in the table is not written, nor returned, again.
    @Test func ingestStepsOnOneSensorTakeTurns() async throws {
        try await withPostgres { server in
            try await server.createDatabase("turns")
            let agents = [registry(server, "turns"), registry(server, "turns")]
            let door = try await agents[0].update { document throws(RegistryError) in
                try document.addSensor(named: "door")
            }
            @Sendable func step(_ store: PostgresRegistry) async throws -> [SensorEvent] {
                try await store.ingest(onTopics: ["door"], hub: "block-a") { document, _ in
                    Self.next(&document)
                } ?? []
            }
            let written = try await withThrowingTaskGroup(of: Int.self) { group in
                for agent in agents {
                    group.addTask {
                        var count = 0
                        for _ in 0..<50 { count += try await step(agent).count }
                        return count
                    }
                }
                return try await group.reduce(0, +)
            }
            #expect(written == 100)
            #expect(try await agents[1].read().sensor(named: "door")?.sequence == 100)
            #expect(
                try await server.count("SELECT count(*) FROM events WHERE hub = 'block-a'", database: "turns") == 100)
            // The same event again (a message applied twice): the table has it, so it is not new.
            let again = try await agents[0].ingest(onTopics: ["door"], hub: "block-a") { _, _ in
                [
                    SensorEvent(
                        id: SensorEvent.id(sensor: door.id, sequence: 100), kind: .changed, sensor: "door",
                        topic: "door", oldStatus: "s99", newStatus: "s100", time: .now)
                ]
            }
            #expect(again?.isEmpty == true)
            // A session's messages are recorded with the step that applies them; the broker's same message again (same
            // packet id, same digest) is known to the next step, another that reuses the packet id is not.
            typealias Deliveries = PostgresRegistry.Deliveries
            let first = Deliveries(session: "sensorhub-hub-1", messages: [(7, "aa"), (8, "bb")])
            let none = try await agents[0].ingest(onTopics: ["door"], hub: "block-a", deliveries: first) { _, known in
                #expect(known.isEmpty)
                return []
            }
            #expect(none?.isEmpty == true)
            let redelivered = Deliveries(session: "sensorhub-hub-1", messages: [(7, "aa"), (8, "cc"), (9, "dd")])
            _ = try await agents[1].ingest(onTopics: ["door"], hub: "block-a", deliveries: redelivered) { _, known in
                #expect(known == [7])
                return []
            }
            // A later batch, then the broker sends both again (their pass was never acknowledged): both known.
            let following = Deliveries(session: "sensorhub-hub-1", messages: [(10, "ff")])
            _ = try await agents[0].ingest(onTopics: ["door"], hub: "block-a", deliveries: following) { _, _ in [] }
            let resent = Deliveries(session: "sensorhub-hub-1", messages: [(8, "cc"), (9, "dd"), (10, "ff")])
            _ = try await agents[1].ingest(onTopics: ["door"], hub: "block-a", deliveries: resent) { _, known in
                #expect(known == [8, 9, 10])
                return []
            }
            // Ids more than 4,096 from a batch's newest are forgotten: a packet id the broker reuses later is new.
            let next = Deliveries(session: "sensorhub-hub-1", messages: [(4_200, "ee")])
            _ = try await agents[0].ingest(onTopics: ["door"], hub: "block-a", deliveries: next) { _, _ in [] }
            let reused = Deliveries(session: "sensorhub-hub-1", messages: [(7, "aa")])
            _ = try await agents[0].ingest(onTopics: ["door"], hub: "block-a", deliveries: reused) { _, known in
                #expect(known.isEmpty)
                return []
            }
            let otherSession = Deliveries(session: "sensorhub-hub-2", messages: [(7, "aa")])
            _ = try await agents[1].ingest(onTopics: ["door"], hub: "block-a", deliveries: otherSession) { _, known in
                #expect(known.isEmpty)
                return []
            }
            // The broker had no session for the client (restarted without persistence): it hands out ids from 1
            // again, so the ids recorded before are forgotten, and a message with one of them is new.
            let fresh = Deliveries(session: "sensorhub-hub-1", messages: [(4_200, "ee")], sessionIsNew: true)
            _ = try await agents[0].ingest(onTopics: ["door"], hub: "block-a", deliveries: fresh) { _, known in
                #expect(known.isEmpty)
                return []
            }
            let remembered = try await server.count(
                "SELECT count(*) FROM sensorhub_deliveries WHERE session = 'sensorhub-hub-1'", database: "turns")
            #expect(remembered == 1, "only the new session's id is kept")
            for agent in agents { await agent.close() }
        }
    }

    /// The next status of the door: its sequence and one event.
    static func next(_ document: inout DefaultsDocument) -> [SensorEvent] {
        guard let sensor = document.sensor(onTopic: "door") else { return [] }
        let next = sensor.sequence + 1
        document.recordStatus("s\(next)", lastUpdated: .now, onTopic: "door", sequence: next)
        return [
            SensorEvent(
                id: SensorEvent.id(sensor: sensor.id, sequence: next), kind: .changed, sensor: "door",
                topic: "door", oldStatus: sensor.status, newStatus: "s\(next)", time: .now)
        ]
    }

    /// A step under a partition's lease commits while the agent holds the lease at its epoch, and commits nothing
    /// (the step is not even run) once another agent has taken it.
    @Test func aStepUnderALeaseAnotherAgentTookCommitsNothing() async throws {
        try await withPostgres { server in
            try await server.createDatabase("fence")
            let store = registry(server, "fence")
            try await store.update { document throws(RegistryError) in try document.addSensor(named: "door") }
            _ = try await server.psql(
                """
                INSERT INTO sensorhub_leases (cluster, duty, holder, epoch, expires)
                VALUES ('block-a', 'partition:03', 'hub-1', 4, now() + interval '1 minute')
                """, database: "fence")
            let fence = PostgresRegistry.Fence(cluster: "block-a", duty: "partition:03", agent: "hub-1", epoch: 4)
            let held = try await store.ingest(onTopics: ["door"], hub: "block-a", fence: fence) { document, _ in
                Self.next(&document)
            }
            #expect(held?.count == 1)
            _ = try await server.psql(
                "UPDATE sensorhub_leases SET holder = 'hub-2', epoch = 5 WHERE duty = 'partition:03'", database: "fence"
            )
            let ran = Locked(false)
            let lost = try await store.ingest(onTopics: ["door"], hub: "block-a", fence: fence) { document, _ in
                ran.withLock { $0 = true }
                return Self.next(&document)
            }
            #expect(lost == nil)
            #expect(!ran.withLock { $0 })
            #expect(try await store.read().sensor(named: "door")?.sequence == 1)
            // The same agent holding it again at a later epoch (given back) does not pass the old epoch either.
            _ = try await server.psql(
                "UPDATE sensorhub_leases SET holder = 'hub-1', epoch = 6 WHERE duty = 'partition:03'", database: "fence"
            )
            #expect(try await store.ingest(onTopics: ["door"], hub: "block-a", fence: fence) { _, _ in [] } == nil)
            await store.close()
        }
    }

    /// A database that answers with an error (a table dropped by hand) is not "unreachable": its own message is told.
    @Test func aRefusalIsNotAnOutage() async throws {
        try await withPostgres { server in
            try await server.createDatabase("broken")
            let store = registry(server, "broken")
            try await store.update { document throws(RegistryError) in try document.addSensor(named: "a") }
            _ = try await server.psql("DROP TABLE sensorhub_sensors", database: "broken")
            let error = await #expect(throws: StoreError.self) { try await store.read() }
            guard case .database(_, let reason)? = error else {
                Issue.record("not a refusal: \(String(describing: error))")
                return
            }
            #expect(reason.contains("sensorhub_sensors"), "\(reason)")
            await store.close()
        }
    }

    /// No database: a clear error naming it, at once, and nothing else happens.
    @Test func anUnreachableDatabaseIsAClearError() async throws {
        var settings = DatabaseSettings(host: "127.0.0.1", port: 1, user: "nobody", database: "none")
        settings.tls = .disable
        let store = PostgresRegistry(server: settings, applicationName: "test", logger: testLogger)
        let error = await #expect(throws: StoreError.self) { try await store.read() }
        let text = "\(error.map { "\($0)" } ?? "")"
        #expect(text.contains("cannot reach the registry at postgres://nobody@127.0.0.1:1/none"), "\(text)")
        #expect(await store.version() == nil)
    }

    static func three(_ text: String) -> (String, String, String) {
        let parts = text.split(separator: ",").map(String.init)
        return (parts[0], parts[1], parts[2])
    }
}
