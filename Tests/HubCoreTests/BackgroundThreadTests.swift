import Foundation
import HubSupport
import Testing

@Suite struct BackgroundThreadTests {
    /// The thread's nice value, read by the thread itself (`who` 0 is the calling thread on Linux).
    private static func ownNice() -> Int32 {
        errno = 0
        return getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
    }

    @Test func itsWorkRunsAtALowerPriorityAndNoOtherThreadsDoes() async throws {
        let caller = Self.ownNice()
        let background = await BackgroundThread.shared.run { Self.ownNice() }
        #expect(BackgroundThread.shared.runsLowered)
        #expect(background == min(19, caller + BackgroundThread.niceness))
        // The caller's thread, and a dispatch queue's, keep theirs: only the background thread was lowered.
        #expect(Self.ownNice() == caller)
        let dispatched = await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: Self.ownNice()) }
        }
        #expect(dispatched == caller)
        // The caller is resumed by a thread at the default priority: resumed by the lowered one, libdispatch could
        // start a worker thread from it, and that thread would inherit the nice value (and so would what it starts).
        #expect(BackgroundThread.shared.lastResumerNice == caller)
        // That no other thread of hubd is lowered is checked in a real hubd (BackgroundPriorityHubTests): here,
        // hundreds of tests run beside it in one process (CI once saw a dispatch worker at nice 10 here, 2026-11-29).
    }

    @Test func workRunsOneAtATimeAndErrorsComeBack() async throws {
        struct Refused: Error {}
        let order = LockedOrder()
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<50 {
                group.addTask { await BackgroundThread.shared.run { order.append(index) } }
            }
        }
        // Never two items at once, and every item ran once.
        #expect(order.sorted == Array(0..<50))
        #expect(order.concurrentMaximum == 1)
        await #expect(throws: Refused.self) {
            try await BackgroundThread.shared.run { () throws(Refused) -> Int in throw Refused() }
        }
    }
}

/// Items in the order they ran, and how many ran at once at most.
private final class LockedOrder: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [Int] = []
    private var running = 0
    private(set) var concurrentMaximum = 0

    func append(_ item: Int) {
        lock.lock()
        running += 1
        concurrentMaximum = max(concurrentMaximum, running)
        lock.unlock()
        usleep(200)
        lock.lock()
        items.append(item)
        running -= 1
        lock.unlock()
    }

    var sorted: [Int] {
        lock.lock()
        defer { lock.unlock() }
        return items.sorted()
    }
}
