import Foundation
import HubSupport
import Mosquitto

/// A child process started with `posix_spawn`, with the signal mask emptied and common signals set to default.
///
/// Foundation's `Process` hands the child the spawning thread's signal mask; spawned from a Swift concurrency or
/// Dispatch thread that blocks SIGTERM and SIGCHLD, so the child would ignore `stop()` and a shell's `wait` would
/// hang. (The test process also ignores SIGPIPE, which libmosquitto sets; children get the default back.)
public final class ChildProcess: Sendable {
    public let pid: pid_t
    public let executable: String
    private let status = Locked<Status>(Status())

    private struct Status {
        var exitStatus: Int32?
        var reaping = false
        var continuations: [UUID: CheckedContinuation<Int32?, Never>] = [:]
    }

    /// Starts `executable`; `standardInput`, `standardOutput` and `standardError` are descriptors to give it
    /// (the parent keeps its own copies), `nil` meaning /dev/null.
    public init(
        _ executable: String,
        _ arguments: [String],
        environment: [String: String]? = nil,
        standardInput: Int32? = nil,
        standardOutput: Int32? = nil,
        standardError: Int32? = nil
    ) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (fd, target) in [(standardInput, Int32(0)), (standardOutput, 1), (standardError, 2)] {
            if let fd {
                posix_spawn_file_actions_adddup2(&actions, fd, target)
            } else {
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0)
            }
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGPIPE, SIGTERM, SIGINT, SIGHUP, SIGCHLD, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM] {
            sigaddset(&defaults, signal)
        }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let environment = environment ?? ProcessInfo.processInfo.environment
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { envp.forEach { free($0) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        guard rc == 0 else {
            throw TestKitError("cannot start \(executable): \(String(cString: strerror(rc)))")
        }
        self.pid = pid
        self.executable = executable
    }

    /// A test that fails half-way must not leave its children running.
    deinit {
        let running = status.withLock { $0.exitStatus == nil && !$0.reaping }
        if running {
            kill(pid, SIGKILL)
            let pid = self.pid
            Thread.detachNewThread {
                var raw: Int32 = 0
                while waitpid(pid, &raw, 0) < 0 && errno == EINTR {}
            }
        }
    }

    /// Sends `signal` unless the process was already reaped.
    public func send(_ signal: Int32) {
        status.withLock { state in
            if state.exitStatus == nil { kill(pid, signal) }
        }
    }

    /// The exit status once the process has ended (128 + n when killed by signal n); `nil` while it runs.
    public var exitStatus: Int32? { status.withLock { $0.exitStatus } }

    /// Waits for the process to end and returns its exit status; reaps it exactly once, off the cooperative pool.
    @discardableResult
    public func wait() async -> Int32 {
        // Without a deadline the result is never nil.
        await wait(timeout: nil)!
    }

    /// Waits at most `timeout` for the process to end; `nil` if it still runs then.
    public func wait(timeout: Duration?) async -> Int32? {
        let id = UUID()
        return await withCheckedContinuation { (continuation: CheckedContinuation<Int32?, Never>) in
            let startReaper = status.withLock { state -> Bool in
                if let exitStatus = state.exitStatus {
                    continuation.resume(returning: exitStatus)
                    return false
                }
                state.continuations[id] = continuation
                defer { state.reaping = true }
                return !state.reaping
            }
            if let timeout {
                Task {
                    try? await Task.sleep(for: timeout)
                    self.status.withLock { $0.continuations.removeValue(forKey: id) }?.resume(returning: nil)
                }
            }
            if startReaper { reap() }
        }
    }

    /// Blocks a thread of its own in waitpid, then hands the status to every waiter.
    private func reap() {
        let pid = self.pid
        Thread.detachNewThread { [self] in
            var raw: Int32 = 0
            while waitpid(pid, &raw, 0) < 0 && errno == EINTR {}
            // WIFEXITED / WEXITSTATUS / WTERMSIG, which Swift does not import as macros.
            let signal = raw & 0x7f
            let exitStatus = signal == 0 ? (raw >> 8) & 0xff : 128 + signal
            let waiting = status.withLock { state in
                state.exitStatus = exitStatus
                defer { state.continuations = [:] }
                return state.continuations
            }
            waiting.values.forEach { $0.resume(returning: exitStatus) }
        }
    }
}
