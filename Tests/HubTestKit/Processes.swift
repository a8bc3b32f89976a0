import Foundation

/// Something a test helper could not do; the message says what to fix.
public struct TestKitError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Finds a program on `PATH`, then in the sbin directories Debian puts daemons in.
public func findExecutable(_ name: String) -> String? {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
    let directories = path.split(separator: ":").map(String.init) + ["/usr/sbin", "/usr/local/sbin", "/sbin"]
    return directories.map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
}

/// Like `findExecutable`, but a missing program is an error naming the Debian package: tests fail, never skip.
public func requireExecutable(_ name: String, package: String) throws -> String {
    guard let path = findExecutable(name) else {
        throw TestKitError(
            "\(name) is not installed: run 'make test' (it installs what the tests need) or 'apt-get install \(package)'"
        )
    }
    return path
}

/// The output and status of a finished program.
public struct ProcessOutput: Sendable {
    public var status: Int32
    public var standardOutput: String
    public var standardError: String
}

/// A one-way channel whose ends are closed on exec: no other child process inherits them, so end-of-file arrives when we
/// close our end. (Foundation's `Pipe` leaves them inheritable, and a concurrently spawned process keeps them open.)
public func makePipe() throws -> (read: FileHandle, write: FileHandle) {
    // A stream socket pair, because Glibc's module does not export pipe2(); SOCK_CLOEXEC sets the flag atomically.
    var fds: [Int32] = [0, 0]
    let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
    guard socketpair(AF_UNIX, type, 0, &fds) == 0 else {
        throw TestKitError("socketpair: \(String(cString: strerror(errno)))")
    }
    return (
        FileHandle(fileDescriptor: fds[0], closeOnDealloc: true),
        FileHandle(fileDescriptor: fds[1], closeOnDealloc: true)
    )
}

/// Runs a program to completion, feeding it `input`, and returns what it printed.
@discardableResult
public func runProcess(
    _ executable: String,
    _ arguments: [String],
    input: String? = nil,
    environment: [String: String]? = nil
) async throws -> ProcessOutput {
    let run = try ProcessRun(executable, arguments, input: input, environment: environment)
    return run.finish(status: await run.child.wait())
}

/// Runs a program to completion, blocking the calling thread; for code that can't be async.
@discardableResult
public func runProcessBlocking(
    _ executable: String,
    _ arguments: [String],
    input: String? = nil,
    environment: [String: String]? = nil
) throws -> ProcessOutput {
    let run = try ProcessRun(executable, arguments, input: input, environment: environment)
    var raw: Int32 = 0
    while waitpid(run.child.pid, &raw, 0) < 0 && errno == EINTR {}
    let signal = raw & 0x7f
    return run.finish(status: signal == 0 ? (raw >> 8) & 0xff : 128 + signal)
}

/// A program whose output goes to files (a chatty program can't fill a pipe and stall while we wait).
private struct ProcessRun {
    let child: ChildProcess
    let directory: TemporaryDirectory

    init(_ executable: String, _ arguments: [String], input: String?, environment: [String: String]?) throws {
        directory = try TemporaryDirectory(prefix: "run")
        let out = open(directory.file("out"), O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        let err = open(directory.file("err"), O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        defer {
            close(out)
            close(err)
        }
        let stdin = try makePipe()
        child = try ChildProcess(
            executable, arguments, environment: environment, standardInput: stdin.read.fileDescriptor,
            standardOutput: out, standardError: err)
        try stdin.read.close()
        if let input { stdin.write.write(Data(input.utf8)) }
        try stdin.write.close()
    }

    func finish(status: Int32) -> ProcessOutput {
        ProcessOutput(
            status: status,
            standardOutput: (try? String(contentsOfFile: directory.file("out"), encoding: .utf8)) ?? "",
            standardError: (try? String(contentsOfFile: directory.file("err"), encoding: .utf8)) ?? ""
        )
    }
}

/// A temporary directory removed when the test is done with it.
public final class TemporaryDirectory: Sendable {
    public let url: URL
    public var path: String { url.path }

    /// In `parent` when given (`/dev/shm`, a tmpfs), else in the temporary directory.
    public init(prefix: String = "sensorhub-test", in parent: String? = nil) throws {
        let base = parent.map { URL(fileURLWithPath: $0) } ?? FileManager.default.temporaryDirectory
        url = base.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    public func file(_ name: String) -> String { url.appendingPathComponent(name).path }

    deinit { try? FileManager.default.removeItem(at: url) }
}

/// The lines a child process writes to `handle`, read on a thread of their own; ends at end of file.
public func lines(of handle: FileHandle) -> AsyncStream<String> {
    AsyncStream { continuation in
        Thread.detachNewThread {
            var buffer: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 4096)
            // read(2) itself: FileHandle.read(upToCount:) waits for the whole count on a pipe.
            while true {
                let count = chunk.withUnsafeMutableBytes { read(handle.fileDescriptor, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { break }
                for byte in chunk[0..<count] {
                    if byte == UInt8(ascii: "\n") {
                        continuation.yield(String(decoding: buffer, as: UTF8.self))
                        buffer.removeAll()
                    } else {
                        buffer.append(byte)
                    }
                }
            }
            if !buffer.isEmpty { continuation.yield(String(decoding: buffer, as: UTF8.self)) }
            continuation.finish()
        }
    }
}

/// The path of an executable SwiftPM built next to the test binary (`hubd`, `hubctl`, `mosquitto-probe`).
public func builtProduct(_ name: String) throws -> String {
    let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
    var directory = URL(fileURLWithPath: executable).deletingLastPathComponent()
    // The test bundle may sit inside a .xctest directory.
    while directory.lastPathComponent.hasSuffix(".xctest") { directory.deleteLastPathComponent() }
    let path = directory.appendingPathComponent(name).path
    guard FileManager.default.isExecutableFile(atPath: path) else {
        throw TestKitError("\(name) was not built next to the tests (looked in \(directory.path))")
    }
    return path
}

/// Checks `condition` every 20 ms until it holds, for state another task or process changes; throws after `timeout`.
public func eventually(
    _ what: String,
    within timeout: Duration = .seconds(15),
    _ condition: () throws -> Bool
) async throws {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try condition() { return }
        try await Task.sleep(for: .milliseconds(20))
    }
    if try condition() { return }
    throw TestKitError("timed out after \(timeout) waiting for \(what)")
}

/// `eventually` for a condition that must await (a process to run, an actor to answer): checked every 50 ms.
public func eventually(
    _ what: String,
    within timeout: Duration = .seconds(15),
    _ condition: () async throws -> Bool
) async throws {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return }
        try await Task.sleep(for: .milliseconds(50))
    }
    if try await condition() { return }
    throw TestKitError("timed out after \(timeout) waiting for \(what)")
}

/// The JSON lines of a file (an audit trail, an outbox), decoded; lines that are not JSON objects are skipped.
public func jsonLines(_ path: String) -> [[String: Any]] {
    guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [] }
    return text.split(separator: "\n").compactMap {
        try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
    }
}
