import Foundation
import HubSupport
import HubTestKit
import Testing

@testable import HubRemote

/// `bounded`: the forwarder's backstop against a PostgresNIO query that never ends and ignores cancellation.
@Suite struct BoundedTests {
    /// Like such a query: done after `delay` whatever happens to the task that waits for it.
    static func stubborn(_ delay: Duration) async -> Int {
        await Task.detached { try? await Task.sleep(for: delay) }.value
        return 42
    }

    @Test func aQuickAnswerIsReturned() async throws {
        #expect(try await bounded(.seconds(10)) { 7 } == 7)
        await #expect(throws: RemoteConnectionClosed.self) {
            try await bounded(.seconds(10)) { () async throws -> Int in throw RemoteConnectionClosed() }
        }
    }

    @Test func aStuckAttemptTimesOutAndItsLateResultIsHandedOver() async throws {
        let late = Locked<Int?>(nil)
        let start = ContinuousClock.now
        await #expect(throws: RemoteTimeout.self) {
            try await bounded(.milliseconds(100), late: { value in late.withLock { $0 = value } }) {
                await Self.stubborn(.seconds(20))
            }
        }
        // Well before the attempt ends, even on a loaded machine (the whole suite on 2 cores).
        #expect(ContinuousClock.now - start < .seconds(15))
        #expect(late.withLock { $0 } == nil)
        try await eventually("the late result handed over", within: .seconds(40)) { late.withLock { $0 } == 42 }
    }

    @Test func cancellingTheCallerDoesNotWaitForTheAttempt() async throws {
        let waiting = Task { try await bounded(.seconds(60)) { await Self.stubborn(.seconds(20)) } }
        try await Task.sleep(for: .milliseconds(50))
        let start = ContinuousClock.now
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
        #expect(ContinuousClock.now - start < .seconds(15))
    }
}
