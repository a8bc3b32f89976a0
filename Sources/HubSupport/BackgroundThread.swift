import Foundation

/// A thread of its own, at a lower CPU priority than the rest of the process (nice +10), for writes nothing waits
/// on: the registry's statuses and the history's events, which the journal holds until they are written, and the
/// history's readings, kept in memory until then as before (issue 38).
///
/// Once a second they fold a status log into the registry or commit a thousand rows; on two cores that took a core
/// from the notifications for milliseconds at a time, and it showed in their p99 at 1,000 msg/s. Here the scheduler
/// gives them what the notifications leave (a nice +10 thread weighs a tenth of a default one): the median p99 of nine
/// bursts went from 3.00 to 1.78 ms, 1.87 to 1.36 ms on tmpfs (`bench/results/latency-background-2026-11-29.md`). A
/// thread of its own because a thread's nice can't be lowered again without privileges: a dispatch queue's threads
/// serve everyone.
///
/// A thread inherits the nice value of the thread that creates it, and libdispatch creates its worker threads from
/// whichever thread enqueues work when none is idle. So the lowered thread never resumes a caller itself (that
/// enqueues the caller's task): a relay thread at the default priority does, and both are started by a caller.
package final class BackgroundThread: Sendable {
    /// The process's one background thread, started at its first use.
    package static let shared = BackgroundThread(name: "hub-background")

    /// How much lower its priority is: the nice value it adds.
    package static let niceness: Int32 = 10

    /// Where the work runs, lowered.
    private let worker: SerialThread
    /// Where each caller is resumed, at the process's priority.
    private let relay: SerialThread

    init(name: String) {
        relay = SerialThread(name: name + "-relay", niceness: 0, onward: nil)
        worker = SerialThread(name: name, niceness: Self.niceness, onward: relay)
    }

    /// Whether the work runs at its lower priority (false before it starts, or where the system refused).
    package var runsLowered: Bool { worker.lowered }

    /// The nice value of the thread that resumed the last caller (the relay's; tests check it is not lowered).
    package var lastResumerNice: Int32 { relay.lastRunNice }

    /// Runs `body` on the thread, in turn with the rest of its work, and waits for it.
    package func run<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            // Started here, by a thread at the process's priority: started by the worker, the relay would be lowered.
            relay.start()
            // The worker hands the resumption on only once it has let go of `body` and what it holds (a database
            // handle, say): a caller that drops its own reference then frees it, as it would have without this thread.
            worker.submit {
                let result = body()
                return { continuation.resume(returning: result) }
            }
        }
    }

    /// `run`, for work that throws.
    package func run<T: Sendable, Failure: Error>(_ body: @escaping @Sendable () throws(Failure) -> T)
        async throws(Failure) -> T
    {
        try await run { Result(catching: body) }.get()
    }
}

/// One thread that runs closures in turn, started by the first `start` or `submit`, at `niceness` above the
/// priority it would have had (0: as it is). What a closure returns runs next on `onward`.
final class SerialThread: @unchecked Sendable {
    typealias Item = @Sendable () -> (@Sendable () -> Void)?

    private let condition = NSCondition()
    private var work: [Item] = []
    private let onward: SerialThread?
    private var started = false
    private var isLowered = false
    /// `Int32.min` until it has run a closure: a relay bypassed shows as never having resumed anyone.
    private var nice: Int32 = .min
    private let name: String
    private let niceness: Int32

    init(name: String, niceness: Int32, onward: SerialThread?) {
        self.name = name
        self.niceness = niceness
        self.onward = onward
    }

    /// Whether its nice value was raised as asked.
    var lowered: Bool { condition.withLock { isLowered } }

    /// The thread's nice value while it ran its last closure (`Int32.min` before its first).
    var lastRunNice: Int32 { condition.withLock { nice } }

    func start() {
        let start = condition.withLock {
            defer { started = true }
            return !started
        }
        if start { Thread { [self] in loop() }.start() }
    }

    /// Runs `item`, lets go of it, then runs what it returned on `onward`.
    func submit(_ item: @escaping Item) {
        condition.withLock {
            work.append(item)
            condition.signal()
        }
        start()
    }

    private func loop() {
        // Named from inside: set before the start, the name never reached the system (`top -H`, /proc's comm).
        Thread.current.name = name
        // On Linux the nice value is a thread's own, and `who` 0 names the calling thread. Should it fail, the work
        // runs at the priority it would have had on a dispatch queue, and `lowered` says so.
        let which = __priority_which_t(PRIO_PROCESS.rawValue)
        errno = 0
        let current = getpriority(which, 0)
        if niceness > 0, errno == 0, setpriority(which, 0, min(19, current + niceness)) == 0 {
            condition.withLock { isLowered = true }
        }
        while true {
            condition.lock()
            while work.isEmpty { condition.wait() }
            var next: Item? = work.removeFirst()
            condition.unlock()
            errno = 0
            let now = getpriority(which, 0)
            condition.withLock { nice = now }
            let then = next?()
            next = nil
            if let then {
                onward?.submit {
                    then()
                    return nil
                }
            }
        }
    }
}
