import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A thread of its own that runs blocking background work in order, at a lower CPU priority than the rest of the
/// process (`nice` + 10 on Linux, for this thread only).
///
/// For work nobody waits on that takes milliseconds of CPU, like rewriting the registry with every sensor's status:
/// on a 2-core machine, at the same priority, it delays the statuses arriving meanwhile. Measured with the latency
/// bench (`LATENCY_YAML`, median of 3, state on tmpfs, 2026-11-26): p99 at 100 / 1k msg/s was 3.75 / 4.58 ms with
/// the registry flushed every second and 2.30 / 1.70 ms with it flushed once a minute.
///
/// The thread ends once this object is gone and its work is done.
public final class NicedThread: Sendable {
    private final class Work: @unchecked Sendable {
        let condition = NSCondition()
        var jobs: [@Sendable () -> Void] = []
        var finished = false
    }
    private let work = Work()

    public init(name: String, nice: Int32 = 10) {
        let work = work
        let thread = Thread {
            #if canImport(Glibc)
                // Linux applies PRIO_PROCESS with a thread id to that thread alone (setpriority(2), NOTES). The id is
                // read from /proc/thread-self ("PID/task/TID"): Swift's Glibc module has no gettid.
                if let link = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self"),
                    let id = link.split(separator: "/").last.flatMap({ id_t($0) })
                {
                    _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), id, nice)
                }
            #endif
            while true {
                work.condition.lock()
                while work.jobs.isEmpty && !work.finished { work.condition.wait() }
                if work.jobs.isEmpty {
                    work.condition.unlock()
                    return
                }
                let jobs = work.jobs
                work.jobs = []
                work.condition.unlock()
                for job in jobs { job() }
            }
        }
        thread.name = name
        thread.start()
    }

    deinit {
        work.condition.lock()
        work.finished = true
        work.condition.signal()
        work.condition.unlock()
    }

    /// Queues `body` behind the work already queued.
    public func async(_ body: @escaping @Sendable () -> Void) {
        work.condition.lock()
        work.jobs.append(body)
        work.condition.signal()
        work.condition.unlock()
    }

    /// Runs `body` on the thread and waits for it without holding one of Swift's cooperative threads.
    public func run<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            async { continuation.resume(returning: body()) }
        }
    }
}
