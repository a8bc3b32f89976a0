import Foundation
import HubCore
import HubSupport

/// `exec`: runs a command with the notification as JSON on standard input and in `HUB_*` environment variables.
///
/// No shell is involved: the command is an argument list, and event values reach it only as data (standard input
/// and environment), so a sensor's payload can't inject anything. Exit 0 is delivered; 75 (`EX_TEMPFAIL`), a
/// signal or the timeout are retried; any other exit fails for good, with the end of its output in the log.
struct ExecNotifier: Notifier {
    let command: [String]
    let timeout: Duration

    init(command: [String], timeout: Duration) {
        self.command = command
        self.timeout = timeout
        // A command that exits without reading its input must not kill hubd with SIGPIPE.
        signal(SIGPIPE, SIG_IGN)
    }

    func send(_ notification: Notification) async -> DeliveryResult {
        let cancelled = Locked(false)
        let environment = Self.environment(for: notification)
        let input = notification.json + [UInt8(ascii: "\n")]
        let command = self.command
        let timeout = self.timeout
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let thread = Thread {
                    // Named from inside: Foundation on Linux drops a name set before `start`.
                    Thread.current.name = "sensorhub-exec"
                    continuation.resume(
                        returning: Self.run(command, environment, input, timeout: timeout, cancelled: cancelled))
                }
                thread.start()
            }
        } onCancel: {
            cancelled.withLock { $0 = true }
        }
    }

    static func environment(for notification: Notification) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("HUB_") }
        let event = notification.event
        environment["HUB_EVENT_ID"] = notification.id
        environment["HUB_EVENT"] = event.kind.rawValue
        environment["HUB_SENSOR"] = event.sensor
        environment["HUB_TOPIC"] = event.topic
        environment["HUB_OLD_STATUS"] = event.oldStatus
        environment["HUB_STATUS"] = event.newStatus
        environment["HUB_TIME"] = event.time.iso8601
        environment["HUB_VALUE"] = event.value ?? ""
        environment["HUB_TITLE"] = notification.title
        environment["HUB_MESSAGE"] = notification.body
        environment["HUB_PRIORITY"] = String(notification.priority)
        environment["HUB_RULE"] = notification.rule
        // The kernel refuses a single string over 128 KiB; no event value needs that much.
        return environment.mapValues { Template.clip($0.replacingOccurrences(of: "\0", with: ""), 32 * 1024) }
    }

    /// Spawns, feeds, waits; on its own thread, because all of it blocks.
    static func run(
        _ command: [String], _ environment: [String: String], _ input: [UInt8], timeout: Duration,
        cancelled: Locked<Bool>
    ) -> DeliveryResult {
        // Socket pairs, because they can be made close-on-exec atomically: no other child inherits them.
        var inputPipe: [Int32] = [-1, -1]
        var outputPipe: [Int32] = [-1, -1]
        let stream = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        guard socketpair(AF_UNIX, stream, 0, &inputPipe) == 0 else {
            return .retry(reason: "socketpair: \(String(cString: strerror(errno)))")
        }
        guard socketpair(AF_UNIX, stream, 0, &outputPipe) == 0 else {
            close(inputPipe[0])
            close(inputPipe[1])
            return .retry(reason: "socketpair: \(String(cString: strerror(errno)))")
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, inputPipe[0], 0)
        posix_spawn_file_actions_adddup2(&actions, outputPipe[1], 1)
        posix_spawn_file_actions_adddup2(&actions, outputPipe[1], 2)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // hubd's threads block signals for their own handling; a child must start with none blocked.
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGPIPE, SIGTERM, SIGINT, SIGHUP, SIGCHLD] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        // Its own process group, so a timeout kills whatever the command started too.
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(
            &attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP))

        let argv = command.map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let spawned = posix_spawnp(&pid, command[0], &actions, &attributes, argv, envp)
        close(inputPipe[0])
        close(outputPipe[1])
        guard spawned == 0 else {
            close(inputPipe[1])
            close(outputPipe[0])
            let reason = "cannot run \(command[0]): \(String(cString: strerror(spawned)))"
            // A missing or non-executable program stays so; a full process table or memory may not.
            return [ENOENT, EACCES, ENOEXEC, ENOTDIR, ELOOP, ENAMETOOLONG].contains(spawned)
                ? .failed(reason: reason) : .retry(reason: reason)
        }
        let deadline = ContinuousClock.now + timeout

        // Standard input, without blocking: a command that doesn't read it must not hang us.
        _ = fcntl(inputPipe[1], F_SETFL, O_NONBLOCK)
        _ = fcntl(outputPipe[0], F_SETFL, O_NONBLOCK)
        var written = 0
        var inputOpen = true
        var output: [UInt8] = []
        var status: Int32 = 0
        var exited = false
        var killedBy: String?
        var outputOpen = true
        var buffer = [UInt8](repeating: 0, count: 4096)
        /// Reads what the command wrote so far; notes end of file, so it is not polled again.
        func drain() {
            while outputOpen {
                let count = read(outputPipe[0], &buffer, buffer.count)
                if count == 0 { outputOpen = false }
                guard count > 0 else { break }
                output += buffer[0..<count]
                // Keep the end: that's where the error usually is.
                if output.count > 8192 { output.removeFirst(output.count - 4096) }
            }
        }
        while !exited {
            if inputOpen && written < input.count {
                let count = input.withUnsafeBytes { write(inputPipe[1], $0.baseAddress! + written, $0.count - written) }
                if count > 0 {
                    written += count
                } else if count < 0 && errno != EAGAIN && errno != EINTR {
                    close(inputPipe[1])
                    inputOpen = false
                }
            }
            if inputOpen && written >= input.count {
                close(inputPipe[1])
                inputOpen = false
            }
            // -1 descriptors are ignored by poll: a closed output must not make it return at once, forever.
            var fds = [
                pollfd(fd: outputOpen ? outputPipe[0] : -1, events: Int16(POLLIN), revents: 0),
                pollfd(fd: inputOpen ? inputPipe[1] : -1, events: Int16(POLLOUT), revents: 0),
            ]
            _ = poll(&fds, nfds_t(fds.count), 50)
            drain()
            let result = waitpid(pid, &status, WNOHANG)
            if result == pid {
                exited = true
                drain()
            } else if killedBy == nil {
                if ContinuousClock.now >= deadline {
                    killedBy = "timed out after \(DurationText.format(timeout))"
                } else if cancelled.withLock({ $0 }) {
                    killedBy = "cancelled"
                }
                if killedBy != nil { kill(-pid, SIGKILL) }
            }
        }
        if inputOpen { close(inputPipe[1]) }
        close(outputPipe[0])
        let tail = String(decoding: output.suffix(400), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        let detail = tail.isEmpty ? "" : ": \(tail)"
        if let killedBy { return .retry(reason: "\(command[0]) \(killedBy)\(detail)") }
        let signalled = status & 0x7f
        if signalled != 0 { return .retry(reason: "\(command[0]) was killed by signal \(signalled)\(detail)") }
        let code = (status >> 8) & 0xff
        switch code {
        case 0: return .delivered
        case 75: return .retry(reason: "\(command[0]) exited with 75 (try again later)\(detail)")
        default: return .failed(reason: "\(command[0]) exited with \(code)\(detail)")
        }
    }
}

extension ExecNotifier {
    struct Settings: BackendSettings {
        static let type = "exec"
        static let summary =
            "Runs a command for each notification, with the event as JSON on standard input and in `HUB_*`"
            + " environment variables."
        static let keys = [
            ConfigKey(
                "command", "list of texts",
                "Required. The program, then its arguments; no shell. Exit 0 is delivered, 75 is try again later, any"
                    + " other exit fails for good; at the backend's `timeout` it is killed with its process group and"
                    + " retried.")
        ]
        var command: [String]

        init(_ node: ConfigNode) throws(ConfigurationError) {
            command = try node["command"].required { try $0.strings() }
            guard let first = command.first, !first.isEmpty else {
                throw node["command"].invalid("a list: the program, then its arguments")
            }
        }

        /// The command is killed at the backend's timeout (the queue's watchdog would leave it running).
        func makeNotifier(_ context: BackendContext) -> any Notifier {
            ExecNotifier(command: command, timeout: context.policy.timeout)
        }
    }
}
