import Foundation
import HubCore
import HubRemote
import HubSupport
import HubTestKit
import Testing

/// A cluster's outbox on a real PostgreSQL 15: agents claiming at once never hold one row together, a claim is
/// taken over only after it ran out unrenewed or was released, and only its holder deletes a row.
@Suite(.timeLimit(.minutes(6)))  // with the wait for one of the two PostgreSQL servers a test process runs at once
struct PostgresOutboxTests {
    func outbox(_ server: PostgresServer, _ agent: String, visibility: Duration = .seconds(30)) -> PostgresOutbox {
        PostgresOutbox(
            server: server.settings(database: "outbox"), hub: "block-a", agent: agent, visibility: visibility,
            logger: testLogger)
    }

    func rows(_ count: Int, backend: String = "hook") -> [PostgresOutbox.Row] {
        (1...count).map { PostgresOutbox.Row(key: "e\($0)/\(backend)", backend: backend, body: "{\"n\":\($0)}") }
    }

    @Test func agentsClaimingAtOnceNeverHoldOneRowTogether() async throws {
        try await withPostgres { server in
            try await server.createDatabase("outbox")
            let (a, b) = (outbox(server, "hub-1"), outbox(server, "hub-2"))
            try await a.add(rows(300))
            try await a.add(rows(5, backend: "other"))
            // Both connected first: under load, b's first connection took longer than a's whole drain (CI, once).
            #expect(try await b.pending() == 305)
            // Two agents claim seven at a time, concurrently, until nothing is left; neither goes on past its first
            // claim before the other has made one.
            let started = Locked(0)
            async let first = Self.drain(a, started)
            async let second = Self.drain(b, started)
            let (x, y) = try await (first, second)
            #expect(Set(x).isDisjoint(with: y))
            #expect(Set(x + y) == Set(rows(300).map(\.key)) && x.count + y.count == 300)
            #expect(!x.isEmpty && !y.isEmpty, "both agents claimed some: \(x.count) and \(y.count)")
            // The other backend's rows were not claimed by agents asking for hook's.
            #expect(try await b.claim(limit: 10, backends: ["other"]).count == 5)
            await a.close()
            await b.close()
        }
    }

    /// Claims seven at a time until nothing is left; returns the keys. After its first claim it counts itself in
    /// `started` and waits (5 s at most) until another drain has too.
    static func drain(_ outbox: PostgresOutbox, _ started: Locked<Int>? = nil) async throws -> [String] {
        var keys: [String] = []
        while true {
            let claimed = try await outbox.claim(limit: 7, backends: ["hook"])
            if let started, keys.isEmpty {
                started.withLock { $0 += 1 }
                let deadline = ContinuousClock.now + .seconds(5)
                while started.withLock({ $0 }) < 2, ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(5))
                }
            }
            if claimed.isEmpty { return keys }
            keys += claimed.map(\.key)
        }
    }

    @Test func aClaimMovesOnlyWhenReleasedOrRunOut() async throws {
        try await withPostgres { server in
            try await server.createDatabase("outbox")
            let a = outbox(server, "hub-1", visibility: .seconds(2))
            let b = outbox(server, "hub-2", visibility: .seconds(2))
            try await a.add(rows(10))
            // A second add of the same keys (a step retried) changes nothing.
            try await b.add(rows(10))
            #expect(try await a.pending() == 10)
            let held = try await a.claim(limit: 6, backends: ["hook"])
            #expect(held.map(\.key) == rows(6).map(\.key), "oldest first")
            #expect(try await b.claim(limit: 10, backends: ["hook"]).count == 4)
            #expect(try await b.claim(limit: 10, backends: ["hook"]).isEmpty)
            // Only the holder deletes: b's delete of a's row does nothing.
            try await b.delete([held[0].key])
            try await a.delete(held.prefix(3).map(\.key))
            #expect(try await a.pending() == 7)
            // Released: b takes a's three at once.
            try await a.release()
            #expect(try await b.claim(limit: 10, backends: ["hook"]).count == 3)
            // b renews its seven for a while, and a gets none of them.
            for _ in 1...3 {
                try await Task.sleep(for: .milliseconds(700))
                #expect(try await b.renew() == 7)
                #expect(try await a.claim(limit: 10, backends: ["hook"]).isEmpty)
            }
            // b stops renewing (killed): after the visibility, a takes all seven, and b holds none.
            try await Task.sleep(for: .milliseconds(2_300))
            #expect(try await a.claim(limit: 10, backends: ["hook"]).count == 7)
            #expect(try await b.renew() == 0)
            await a.close()
            await b.close()
        }
    }
}
