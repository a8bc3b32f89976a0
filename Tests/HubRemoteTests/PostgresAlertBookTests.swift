import Foundation
import HubCore
import HubNotify
import HubRemote
import HubSupport
import HubTestKit
import Testing

/// A cluster's alert book in a real PostgreSQL 15 (migration 8): what the ingest queues in its step, what a keeper's
/// step takes and commits, and a keeper that lost the `alerts` lease committing nothing.
extension PostgresRegistryTests {
    @Test func aKeepersStepTakesTheQueueOnceAndAStaleKeeperCommitsNothing() async throws {
        try await withPostgres { server in
            try await server.createDatabase("book")
            let store = registry(server, "book")
            let book = PostgresAlertBook(
                server: server.settings(database: "book"), hub: "block-a", name: "test", logger: testLogger)
            try await store.update { document throws(RegistryError) in try document.addSensor(named: "door") }
            _ = try await server.psql(
                """
                INSERT INTO sensorhub_leases (cluster, duty, holder, epoch, expires)
                VALUES ('block-a', 'alerts', 'hub-1', 1, now() + interval '1 minute')
                """, database: "book")
            let fence = PostgresRegistry.Fence(cluster: "block-a", duty: "alerts", agent: "hub-1", epoch: 1)
            // Two steps of the ingest: their events are queued, in order, with nothing else asked of the book.
            for _ in 1...2 {
                _ = try await store.ingest(onTopics: ["door"], hub: "block-a", alerting: { $0 }) { document, _ in
                    Self.next(&document)
                }
            }
            // Nothing queued for an ingest whose events no alerting rule takes.
            _ = try await store.ingest(onTopics: ["door"], hub: "block-a", alerting: { _ in [] }) { document, _ in
                Self.next(&document)
            }
            let silence = Silence(
                id: "s1", matchers: [try Silence.Matcher(parsing: "sensor=door")], startsAt: .now,
                endsAt: Timestamp.now.adding(milliseconds: 3_600_000), createdBy: "test", comment: "")
            let asked = try await book.ask(.silence(silence))
            #expect(try await book.outcome(of: asked) == nil)
            #expect(try await book.saved().pending.count == 1)

            let seen = Locked<SharedAlertStep?>(nil)
            let more = try await book.step(fence: fence) { step in
                seen.withLock { $0 = step }
                var alerts = step.book
                var outcomes: [Int64: String] = [:]
                for (id, request) in step.requests { outcomes[id] = alerts.apply(request, now: .now) }
                return .init(book: alerts, notifications: [], outcomes: outcomes)
            }
            #expect(more == false)
            let step = try #require(seen.withLock { $0 })
            #expect(step.events.map(\.newStatus) == ["s1", "s2"] && step.unreadable == 0)
            #expect(step.requests.map(\.id) == [asked])
            #expect(try await book.outcome(of: asked) == "silence added")
            let saved = try await book.saved()
            #expect(saved.book.silences.map(\.id) == ["s1"] && saved.pending.isEmpty)
            #expect(try await book.load().silences.map(\.id) == ["s1"])

            // Taken once: the next step gets nothing, and the book as committed.
            _ = try await book.step(fence: fence) { step in
                #expect(step.events.isEmpty && step.requests.isEmpty)
                #expect(step.book.silences.map(\.id) == ["s1"])
                return .init(book: step.book, notifications: [], outcomes: [:])
            }
            #expect(try await book.load().silences.map(\.id) == ["s1"])

            // Another agent took the lease: the old keeper's step runs nothing and commits nothing; the queue waits.
            _ = try await store.ingest(onTopics: ["door"], hub: "block-a", alerting: { $0 }) { document, _ in
                Self.next(&document)
            }
            _ = try await server.psql(
                "UPDATE sensorhub_leases SET holder = 'hub-2', epoch = 2 WHERE duty = 'alerts'", database: "book")
            let ran = Locked(false)
            let stale = try await book.step(fence: fence) { _ in
                ran.withLock { $0 = true }
                return .init(book: AlertBook(), notifications: [], outcomes: [:])
            }
            #expect(stale == nil && !ran.withLock { $0 })
            let waiting = try await server.psql(
                "SELECT count(*) FROM sensorhub_alert_queue WHERE event IS NOT NULL", database: "book")
            #expect(waiting.trimmingCharacters(in: .whitespacesAndNewlines) == "1")

            // One key for the cluster, whoever asks.
            let other = PostgresAlertBook(
                server: server.settings(database: "book"), hub: "block-a", name: "test 2", logger: testLogger)
            let (first, second) = (try await book.key(), try await other.key())
            #expect(first == second)
            await book.close()
            await other.close()
            await store.close()
        }
    }
}
