import Foundation
import HubSupport
import Mosquitto

/// A real `mosquitto` broker on a free loopback port, with a temporary configuration.
///
/// The broker runs under a small `sh` guardian that reads our end of a pipe: when the test process ends for any
/// reason, even a crash, the pipe closes and the guardian stops the broker. `withBroker` also stops it when the
/// test body throws.
public final class MosquittoBroker: Sendable {
    /// What the broker should require and offer.
    public struct Options: Sendable {
        /// Accept clients without a user name.
        public var allowAnonymous = true
        /// Users and passwords written with `mosquitto_passwd`; turns anonymous access off when not empty.
        public var users: [String: String] = [:]
        /// Serve TLS with this certificate and key (signed by `TestCertificates.ca`).
        public var tls: TestCertificates.ServerIdentity?
        /// Keep sessions and retained messages on disk across a broker restart.
        public var persistence = false
        /// More configuration lines, verbatim.
        public var extraLines: [String] = []

        public init(
            allowAnonymous: Bool = true,
            users: [String: String] = [:],
            tls: TestCertificates.ServerIdentity? = nil,
            persistence: Bool = false,
            extraLines: [String] = []
        ) {
            self.allowAnonymous = allowAnonymous
            self.users = users
            self.tls = tls
            self.persistence = persistence
            self.extraLines = extraLines
        }
    }

    public let port: Int
    public let options: Options
    public let directory: TemporaryDirectory
    private let process = GuardedProcess(name: "mosquitto")
    private let executable: String

    public var host: String { "127.0.0.1" }
    public var configFile: String { directory.file("mosquitto.conf") }
    public var logFile: String { directory.file("mosquitto.log") }

    /// Starts a broker and waits until it accepts connections.
    public static func start(_ options: Options = Options()) async throws -> MosquittoBroker {
        var lastError: Error?
        // Another process may take the free port between our probe and the broker's bind: try a few.
        for _ in 0..<5 {
            let broker = try MosquittoBroker(options: options, port: try freeLoopbackPort())
            do {
                try await broker.start()
                return broker
            } catch {
                lastError = error
                await broker.kill()
                guard broker.log.contains("Address already in use") else { throw error }
            }
        }
        throw lastError ?? TestKitError("could not start mosquitto")
    }

    private init(options: Options, port: Int) throws {
        self.executable = try requireExecutable("mosquitto", package: "mosquitto")
        self.options = options
        self.port = port
        self.directory = try TemporaryDirectory(prefix: "mosquitto")
        try writeConfiguration()
    }

    private func writeConfiguration() throws {
        var lines = [
            "listener \(port) 127.0.0.1",
            "log_dest stderr",
            "log_type error",
            "log_type warning",
            "log_type notice",
            "log_type information",
            "connection_messages true",
            "log_timestamp_format %H:%M:%S",
        ]
        // Run as root, mosquitto would switch to the 'mosquitto' user, which can't read our temporary files.
        if let user = currentUserName() { lines.append("user \(user)") }
        if options.persistence {
            lines += ["persistence true", "persistence_location \(directory.path)/", "autosave_interval 1"]
        } else {
            lines.append("persistence false")
        }
        if !options.users.isEmpty {
            let passwordFile = directory.file("passwords")
            let tool = try requireExecutable("mosquitto_passwd", package: "mosquitto")
            for (index, (user, password)) in options.users.sorted(by: { $0.key < $1.key }).enumerated() {
                let arguments = (index == 0 ? ["-c"] : []) + ["-b", passwordFile, user, password]
                let result = try runProcessBlocking(tool, arguments)
                guard result.status == 0 else {
                    throw TestKitError("mosquitto_passwd failed: \(result.standardError)")
                }
            }
            lines += ["password_file \(passwordFile)", "allow_anonymous false"]
        } else {
            lines.append("allow_anonymous \(options.allowAnonymous)")
        }
        if let tls = options.tls {
            lines += ["cafile \(tls.caFile)", "certfile \(tls.certificateFile)", "keyfile \(tls.keyFile)"]
        }
        lines += options.extraLines
        try (lines.joined(separator: "\n") + "\n").write(toFile: configFile, atomically: true, encoding: .utf8)
    }

    /// Starts the broker (again, after `stop` or `kill`) on the same port, and waits until it accepts connections.
    public func start() async throws {
        guard !process.isRunning else { return }
        try await process.launch([executable, "-c", configFile], logFile: logFile, stopSignal: "TERM")
        try await process.wait(until: { canConnect(port: port) }, within: .seconds(10), log: { log })
    }

    /// Stops the broker gracefully (SIGTERM; it saves persistence) and waits until it is gone.
    public func stop() async { await process.signal(SIGTERM, grace: .seconds(10)) }

    /// Kills the broker with SIGKILL, as a crash or power cut would, and waits until it is gone.
    public func kill() async { await process.signal(SIGKILL, grace: .seconds(10)) }

    /// Stops the broker where it is (SIGSTOP): connections stay open, nothing is answered, until `resume`.
    public func pause() { process.send(SIGSTOP) }
    public func resume() { process.send(SIGCONT) }

    /// What the broker logged so far.
    public var log: String { (try? String(contentsOfFile: logFile, encoding: .utf8)) ?? "" }

}

/// Runs `body` with a fresh broker that is stopped afterwards, whether `body` returns or throws.
@discardableResult
public func withBroker<T: Sendable>(
    _ options: MosquittoBroker.Options = .init(),
    _ body: (MosquittoBroker) async throws -> T
) async throws -> T {
    let broker = try await MosquittoBroker.start(options)
    do {
        let result = try await body(broker)
        await broker.kill()
        return result
    } catch {
        await broker.kill()
        throw TestKitError("\(error)\n--- broker log ---\n\(broker.log)")
    }
}

/// A TCP port on 127.0.0.1 that was free a moment ago.
public func freeLoopbackPort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw TestKitError("socket() failed: \(String(cString: strerror(errno)))") }
    defer { close(fd) }
    return try bindToLoopback(fd)
}

/// A port on 127.0.0.1 held (bound, not listening: a connection to it is refused, as to a server that is down)
/// until a server adopts its socket, so that no other test's server, broker or outgoing connection takes it
/// meanwhile — `freeLoopbackPort()` leaves a window in which one can (a webhook "down" for 3 s lost its port to a
/// parallel test; closing the socket just before the server binds still lost it under the full suite's load).
public final class ReservedPort: Sendable {
    public let port: Int
    private let fd: Int32

    public init() throws {
        (fd, port) = try boundLoopbackSocket()
    }

    /// The bound socket, for a server that listens on it (`TestHTTPServer.start(adopting:)`); it owns it then.
    public func adopt() -> Int32 { fd }
}

/// A TCP listener on 127.0.0.1 that accepts connections (the kernel does) and never says a word.
public final class SilentListener: Sendable {
    public let port: Int
    private let fd: Int32

    public init() throws {
        (fd, port) = try boundLoopbackSocket()
        guard listen(fd, 8) == 0 else { throw TestKitError("listen() failed: \(String(cString: strerror(errno)))") }
    }

    deinit { close(fd) }
}

/// A TCP socket bound to a free port on 127.0.0.1, and the port.
private func boundLoopbackSocket() throws -> (Int32, Int) {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw TestKitError("socket() failed: \(String(cString: strerror(errno)))") }
    do {
        return (fd, try bindToLoopback(fd))
    } catch {
        close(fd)
        throw error
    }
}

/// Binds `fd` to a free port on 127.0.0.1 and returns the port.
private func bindToLoopback(_ fd: Int32) throws -> Int {
    var address = loopbackAddress(port: 0)
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard bound == 0 else { throw TestKitError("bind() failed: \(String(cString: strerror(errno)))") }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// Whether something accepts TCP connections on 127.0.0.1:`port`.
public func canConnect(port: Int) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    var address = loopbackAddress(port: port)
    let rc = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
    }
    return rc == 0
}

func loopbackAddress(port: Int) -> sockaddr_in {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = UInt16(port).bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    return address
}

private func currentUserName() -> String? {
    guard let entry = getpwuid(geteuid()), let name = entry.pointee.pw_name else { return nil }
    return String(cString: name)
}
