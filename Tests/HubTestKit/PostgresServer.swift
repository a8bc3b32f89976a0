import Foundation
import HubCore
import HubSupport

/// A real PostgreSQL 15 server (Debian's `postgresql-15`) in a temporary directory, on a free loopback port.
///
/// `initdb` makes a cluster whose superuser is `sensorhub` with the password `password` (once per test process;
/// each server starts from a copy of it): TCP clients must give it
/// (SCRAM, as a remote database would ask), while `psql` on the Unix socket in the temporary directory is trusted.
/// PostgreSQL refuses to run as root, so under root (CI) the cluster belongs to Debian's `postgres` user and both
/// programs are started through `setpriv`, which execs them as that user.
///
/// The server runs under a small `sh` guardian, as the test brokers do: it reads our end of a pipe, and when the
/// test process ends for any reason, even a crash or SIGKILL, the pipe closes, `read` returns, and the guardian
/// stops the server (SIGINT, a fast shutdown) — no server outlives its test. `withPostgres` also stops it when the
/// body throws. Nothing here blocks Swift's cooperative threads: programs run through `runProcess`, and waits poll.
public final class PostgresServer: Sendable {
    public static let user = "sensorhub"
    public static let password = "password"
    public static let binaries = "/usr/lib/postgresql/15/bin"

    public let port: Int
    /// Whether it serves TLS (`start(tls:)`): `ssl = on` with a certificate signed by `TestCertificates`' CA.
    public let servesTLS: Bool
    public let directory: TemporaryDirectory
    private let process = GuardedProcess(name: "postgres")

    public var host: String { "127.0.0.1" }
    public var dataDirectory: String { directory.file("data") }
    public var logFile: String { directory.file("postgres.log") }

    /// Whether the PostGIS extension can be created on this server (`postgresql-15-postgis-3` is installed).
    public static var hasPostGIS: Bool {
        FileManager.default.fileExists(atPath: "/usr/share/postgresql/15/extension/postgis.control")
    }

    /// Makes a cluster and starts the server; waits until it accepts queries.
    /// - Parameter tls: serve TLS with this identity (for `localhost` and 127.0.0.1 from `TestCertificates`).
    public static func start(tls: TestCertificates.ServerIdentity? = nil) async throws -> PostgresServer {
        var lastError: (any Error)?
        for _ in 0..<5 {
            let server = try await PostgresServer(port: try freeLoopbackPort(), tls: tls)
            do {
                try await server.start()
                return server
            } catch {
                lastError = error
                await server.kill()
                // Another process took the free port between our probe and the server's bind: another port.
                guard server.log.contains("could not bind") || server.log.contains("already in use") else {
                    throw error
                }
            }
        }
        throw lastError ?? TestKitError("could not start postgres")
    }

    private init(port: Int, tls: TestCertificates.ServerIdentity?) async throws {
        for program in ["initdb", "postgres", "psql"]
        where !FileManager.default.isExecutableFile(
            atPath: "\(Self.binaries)/\(program)")
        {
            throw TestKitError(
                "\(Self.binaries)/\(program) is not installed: run 'make test' (it installs what the tests need) or "
                    + "'apt-get install postgresql'")
        }
        self.port = port
        self.directory = try TemporaryDirectory(prefix: "postgres")
        self.servesTLS = tls != nil
        try Self.giveToServerUser(directory.path)
        // A copy of the process's one initdb: nine initdbs at once starved the rest of the suite on 2 cores.
        let template = try await Self.template()
        let copy = try await runProcess("/bin/cp", ["-a", template, dataDirectory])
        guard copy.status == 0 else { throw TestKitError("cannot copy the template cluster: \(copy.standardError)") }
        if let tls {
            // PostgreSQL refuses a key others can read: copies of its own, 0600.
            for (source, name) in [(tls.certificateFile, "server.crt"), (tls.keyFile, "server.key")] {
                let target = directory.file(name)
                try FileManager.default.copyItem(atPath: source, toPath: target)
                chmod(target, 0o600)
                try Self.giveToServerUser(target)
            }
        }
    }

    /// The cluster every server of this test process starts from: made by `initdb` once, in
    /// `$TMPDIR/sensorhub-pg-template-<pid>`; templates of test processes that have ended are removed first.
    private static func template() async throws -> String {
        let task = templateTask.withLock { task in
            if let task { return task }
            let made = Task { try await makeTemplate() }
            task = made
            return made
        }
        return try await task.value
    }

    private static let templateTask = Locked<Task<String, any Error>?>(nil)

    private static func makeTemplate() async throws -> String {
        let temporary = FileManager.default.temporaryDirectory.path
        let prefix = "sensorhub-pg-template-"
        for name in (try? FileManager.default.contentsOfDirectory(atPath: temporary)) ?? [] where name.hasPrefix(prefix)
        {
            if let pid = Int32(name.dropFirst(prefix.count)), Glibc.kill(pid, 0) != 0 && errno == ESRCH {
                try? FileManager.default.removeItem(atPath: temporary + "/" + name)
            }
        }
        let directory = temporary + "/" + prefix + "\(getpid())"
        try? FileManager.default.removeItem(atPath: directory)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try password.write(toFile: directory + "/pwfile", atomically: true, encoding: .utf8)
        try giveToServerUser(directory)
        try giveToServerUser(directory + "/pwfile")
        let result = try await runProcess(
            asServerUser[0],
            Array(asServerUser.dropFirst()) + [
                "\(binaries)/initdb", "-D", directory + "/data", "-U", user, "--pwfile", directory + "/pwfile",
                "--auth-local=trust", "--auth-host=scram-sha-256", "-E", "UTF8", "--locale=C.UTF-8", "--no-sync",
            ])
        guard result.status == 0 else {
            throw TestKitError("initdb failed (\(result.status)): \(result.standardError)\(result.standardOutput)")
        }
        return directory + "/data"
    }

    /// Under root, makes `path` the `postgres` user's, which PostgreSQL runs as.
    private static func giveToServerUser(_ path: String) throws {
        guard geteuid() == 0 else { return }
        guard let entry = getpwnam("postgres") else {
            throw TestKitError("running as root, but there is no 'postgres' user to run PostgreSQL as")
        }
        chown(path, entry.pointee.pw_uid, entry.pointee.pw_gid)
    }

    /// The command prefix that runs a program as the cluster's owner: `setpriv` to `postgres` under root.
    private static var asServerUser: [String] {
        guard geteuid() == 0 else { return ["/usr/bin/env"] }
        return ["/usr/bin/setpriv", "--reuid=postgres", "--regid=postgres", "--clear-groups"]
    }

    /// Starts the server (again, after `stop` or `kill`) on the same port and data, and waits until it is ready.
    public func start() async throws {
        guard !process.isRunning else { return }
        let readyBefore = log.components(separatedBy: "ready to accept connections").count
        let server =
            Self.asServerUser + [
                "\(Self.binaries)/postgres", "-D", dataDirectory, "-p", "\(port)", "-k", directory.path,
                "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "shared_buffers=16MB",
                "-c", "max_connections=30", "-c", "log_min_messages=warning",
                // Parallel queries' shared memory in the data directory, which goes with the test's: in /dev/shm
                // (the default, `posix`) a server the test kills leaves its segments behind, in memory (1,150
                // segments, 584 MB, after a few days of runs here).
                "-c", "dynamic_shared_memory_type=mmap",
            ]
            + (servesTLS
                ? [
                    "-c", "ssl=on", "-c", "ssl_cert_file=\(directory.file("server.crt"))", "-c",
                    "ssl_key_file=\(directory.file("server.key"))",
                ]
                : [])
        try await process.launch(server, logFile: logFile, stopSignal: "INT")
        try await process.wait(
            until: { log.components(separatedBy: "ready to accept connections").count > readyBefore },
            within: .seconds(30), log: { log })
    }

    /// Stops the server with a fast shutdown (SIGINT) and waits until it is gone; its data stays for `start`.
    public func stop() async { await process.signal(SIGINT) }

    /// Kills the server (SIGKILL), as a crash would, and waits until it is gone.
    public func kill() async { await process.signal(SIGKILL) }

    /// Runs `sql` with `psql` on the Unix socket as the superuser; returns its rows, unaligned, `|` between columns.
    @discardableResult
    public func psql(_ sql: String, database: String = "postgres") async throws -> String {
        let result = try await runProcess(
            "\(Self.binaries)/psql",
            [
                "-h", directory.path, "-p", "\(port)", "-U", Self.user, "-d", database, "-v", "ON_ERROR_STOP=1",
                "-At", "-c", sql,
            ])
        guard result.status == 0 else {
            throw TestKitError("psql failed (\(result.status)) on \(sql): \(result.standardError)")
        }
        return result.standardOutput.trimmingCharacters(in: .newlines)
    }

    /// The whole number a query returns (`SELECT count(*) …`).
    public func count(_ sql: String, database: String) async throws -> Int {
        let text = try await psql(sql, database: database)
        guard let number = Int(text) else { throw TestKitError("'\(sql)' gave '\(text)', not a number") }
        return number
    }

    /// Makes an empty database named `name`.
    public func createDatabase(_ name: String) async throws {
        try await psql("CREATE DATABASE \"\(name)\"")
    }

    /// What the server logged so far.
    public var log: String { (try? String(contentsOfFile: logFile, encoding: .utf8)) ?? "" }
}

/// Runs `body` with a fresh server that is stopped afterwards, whether `body` returns or throws. At most two run at
/// once in a test process: the whole suite runs in parallel on 2 cores, and nine servers starting together (each
/// with PostGIS to create) made the notifier tests around them miss their deadlines.
@discardableResult
public func withPostgres<T: Sendable>(
    tls: TestCertificates.ServerIdentity? = nil, _ body: (PostgresServer) async throws -> T
) async throws -> T {
    await serverSlots.acquire()
    defer { serverSlots.release() }
    let server = try await PostgresServer.start(tls: tls)
    do {
        let result = try await body(server)
        await server.kill()
        return result
    } catch {
        await server.kill()
        throw TestKitError("\(error)\n--- postgres log ---\n\(server.log)")
    }
}

private let serverSlots = Slots(2)

/// At most `count` holders at a time; the others wait their turn without holding a thread.
private final class Slots: Sendable {
    private let state: Locked<(free: Int, waiting: [CheckedContinuation<Void, Never>])>

    init(_ count: Int) {
        state = Locked((count, []))
    }

    func acquire() async {
        await withCheckedContinuation { continuation in
            let now = state.withLock { state -> Bool in
                guard state.free > 0 else {
                    state.waiting.append(continuation)
                    return false
                }
                state.free -= 1
                return true
            }
            if now { continuation.resume() }
        }
    }

    func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.waiting.isEmpty else {
                state.free += 1
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.resume()
    }
}

extension PostgresServer {
    /// What hubd.yaml would say to reach `database` here (`tls: prefer`, the default: a server without TLS is
    /// reached without, as libpq would).
    public func settings(database: String) -> DatabaseSettings {
        var settings = DatabaseSettings(host: host, port: port, user: Self.user, database: database)
        settings.password = Self.password
        return settings
    }
}
