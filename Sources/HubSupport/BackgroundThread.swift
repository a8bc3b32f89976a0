import Foundation

/// A thread of its own, at a lower CPU priority than the rest of the process (nice +10), for writes nothing waits
/// on because what they write is safe elsewhere meanwhile: the registry's statuses and the history, which the journal
/// holds until they are written (issue 38).
///
/// Once a second they fold a status log into the registry or commit a thousand rows; on two cores that took a core
/// from the notifications for milliseconds at a time, and it showed in their p99 at 1,000 msg/s. Here the scheduler
/// gives them what the notifications leave (a nice +10 thread weighs a tenth of a default one): the median p99 of nine
/// bursts went from 3.00 to 1.78 ms, 1.87 to 1.36 ms on tmpfs (`bench/results/latency-background-2026-11-29.md`). A
/// thread of its own because a thread's nice can't be lowered again without privileges: a dispatch queue's threads
/// serve everyone.
package final class BackgroundThread: @unchecked Sendable {
    /// The process's one background thread, started at its first use.
    package static let shared = BackgroundThread(name: "hub-background")

    /// How much lower its priority is: the nice value it adds.
    package static let niceness: Int32 = 10

    private let condition = NSCondition()
    private var work: [@Sendable () -> Void] = []
    private var started = false
    private var lowered = false
    private let name: String

    init(name: String) {
        self.name = name
    }

    /// Whether the thread runs at its lower priority (false before it starts, or where the system refused).
    package var runsLowered: Bool {
        condition.lock()
        defer { condition.unlock() }
        return lowered
    }

    /// Runs `body` on the thread, in turn with the rest of its work, and waits for it.
    package func run<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            submit { continuation.resume(returning: body()) }
        }
    }

    /// `run`, for work that throws.
    package func run<T: Sendable, Failure: Error>(_ body: @escaping @Sendable () throws(Failure) -> T)
        async throws(Failure) -> T
    {
        let result: Result<T, Failure> = await run { () -> Result<T, Failure> in
            do throws(Failure) {
                return .success(try body())
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    private func submit(_ item: @escaping @Sendable () -> Void) {
        condition.lock()
        work.append(item)
        let start = !started
        started = true
        condition.signal()
        condition.unlock()
        if start { Thread { [self] in loop() }.start() }
    }

    private func loop() {
        // Named from inside: set before the start, the name never reached the system (`top -H`, /proc's comm).
        Thread.current.name = name
        // On Linux the nice value is a thread's own, and `who` 0 names the calling thread. Should it fail, the work
        // runs at the priority it had on a dispatch queue, and `runsLowered` says so.
        let me: id_t = 0
        errno = 0
        let current = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), me)
        if errno == 0, setpriority(__priority_which_t(PRIO_PROCESS.rawValue), me, min(19, current + Self.niceness)) == 0
        {
            condition.lock()
            lowered = true
            condition.unlock()
        }
        while true {
            condition.lock()
            while work.isEmpty { condition.wait() }
            let batch = work
            work = []
            condition.unlock()
            for item in batch { item() }
        }
    }
}
