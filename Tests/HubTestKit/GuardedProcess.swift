import Foundation
import HubSupport

/// A server a test starts (a broker, a database), run under a small `sh` guardian that reads our end of a pipe: when
/// the test process ends for any reason, even a crash or SIGKILL, the pipe closes, `read` returns, and the guardian
/// stops the server with its stop signal — no server outlives its test. Nothing here blocks Swift's cooperative
/// threads: the pid is read off the pool, and waits poll.
final class GuardedProcess: Sendable {
    private struct Running: Sendable {
        let guardian: ChildProcess
        let keepAlive: FileHandle
        let pid: Int32
    }

    /// What the errors call it (`mosquitto`, `postgres`).
    let name: String
    private let running = Locked<Running?>(nil)

    init(name: String) {
        self.name = name
    }

    var isRunning: Bool { running.withLock { $0 != nil } }

    /// Starts `command`, its output appended to `logFile`, under the guardian, which stops it with `stopSignal`
    /// (`TERM`, `INT`) once our end of its input closes.
    func launch(_ command: [String], logFile: String, stopSignal: String) async throws {
        let input = try makePipe()
        let output = try makePipe()
        // The guardian prints the server's pid, then waits for end of input: ours closing the pipe, or our death.
        let guardian = try ChildProcess(
            "/bin/sh",
            [
                "-c",
                #"log="$1"; sig="$2"; shift 2; "$@" </dev/null >>"$log" 2>&1 & pid=$!; echo "$pid"; read _ ; kill -"$sig" "$pid" 2>/dev/null; wait "$pid""#,
                "guardian", logFile, stopSignal,
            ] + command,
            standardInput: input.read.fileDescriptor,
            standardOutput: output.write.fileDescriptor
        )
        try input.read.close()
        try output.write.close()
        guard let line = try await readFirstLine(output.read), let pid = Int32(line) else {
            throw TestKitError("the \(name) guardian did not report a pid")
        }
        running.withLock { $0 = Running(guardian: guardian, keepAlive: input.write, pid: pid) }
    }

    /// Waits until `ready()`; when the server ends first or `timeout` passes, stops it and fails with its log.
    func wait(until ready: () -> Bool, within timeout: Duration, log: () -> String) async throws {
        let deadline = ContinuousClock.now + timeout
        while !ready() {
            let ended = running.withLock { $0.map { $0.guardian.exitStatus != nil || hasEnded($0.pid) } } ?? true
            if ended {
                await end(grace: .seconds(10))
                throw TestKitError("\(name) exited at start; its log:\n\(log())")
            }
            if ContinuousClock.now >= deadline {
                await signal(SIGKILL)
                throw TestKitError("\(name) was not ready within \(timeout); its log:\n\(log())")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Sends `signal` to the server and returns (SIGSTOP, SIGCONT).
    func send(_ signal: Int32) {
        if let pid = running.withLock({ $0?.pid }) { Glibc.kill(pid, signal) }
    }

    /// Sends `signal` to the server, then closes the guardian's input and waits until the guardian (which reaps the
    /// server) has ended; after `grace`, kills both.
    func signal(_ signal: Int32, grace: Duration = .seconds(20)) async {
        guard let pid = running.withLock({ $0?.pid }) else { return }
        Glibc.kill(pid, signal)
        await end(grace: grace)
    }

    private func end(grace: Duration) async {
        guard
            let running = running.withLock({ state -> Running? in
                defer { state = nil }; return state
            })
        else {
            return
        }
        try? running.keepAlive.close()
        if await running.guardian.wait(timeout: grace) == nil {
            Glibc.kill(running.pid, SIGKILL)
            running.guardian.send(SIGKILL)
            await running.guardian.wait()
        }
    }

    deinit {
        // Without waiting: the guardian stops and reaps the server once its input closes.
        running.withLock { running in
            guard let running else { return }
            Glibc.kill(running.pid, SIGKILL)
            try? running.keepAlive.close()
        }
    }
}

/// Reads one line from a pipe, byte by byte so nothing after it is consumed, off the cooperative pool.
private func readFirstLine(_ handle: FileHandle) async throws -> String? {
    try await DispatchQueue.global().run {
        Result {
            var bytes: [UInt8] = []
            while true {
                guard let byte = try handle.read(upToCount: 1), let first = byte.first else { break }
                if first == UInt8(ascii: "\n") { break }
                bytes.append(first)
            }
            return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self)
        }
    }.get()
}

/// True when `pid` no longer runs: gone, or a zombie its guardian has not reaped yet (it reaps only once told to).
private func hasEnded(_ pid: Int32) -> Bool {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
        let close = stat.lastIndex(of: ")")
    else { return true }
    return stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).hasPrefix("Z")
}
