import AsyncHTTPClient
import Foundation
import HubCore
import HubNotify
import HubSupport
import HubTestKit
import Logging
import Mosquitto

/// The built `hubd` running against a real broker, with a state directory and a configuration of its own, its
/// log lines readable, and `hubctl` pointed at the same state.
final class RunningHub: Sendable {
    let hubctl: Hubctl
    let configFile: String
    let hubd: String
    private let process = Locked<ChildProcess?>(nil)
    private let logs = Locked<Inbox<String>?>(nil)

    /// - Parameter configuration: YAML for hubd's configuration file.
    init(configuration: String = "", withToken: Bool = true) throws {
        self.withToken = withToken
        hubctl = try Hubctl()
        hubd = try builtProduct("hubd")
        configFile = hubctl.state.file("hubd.yaml")
        try configuration.write(toFile: configFile, atomically: true, encoding: .utf8)
    }

    /// Whether hubd takes `RunningHub.apiToken` as its `http.token` (the tests of other things than who may act
    /// call the API as an admin program would); `SecurityTests` run hubd as it comes, with none.
    let withToken: Bool

    /// The admin token the tests' hubs take (`HUB_HTTP_TOKEN`): `authorized(_:)` puts it on a request.
    static let apiToken = "hub-tests-admin-token-7c1f9e2a4b"

    var environment: [String: String] {
        var environment = hubctl.environment
        environment["HUB_CONFIG"] = configFile
        // Tests run hubs side by side: each on a free port (the log says which).
        environment["HUB_HTTP_LISTEN"] = "127.0.0.1:0"
        if withToken { environment["HUB_HTTP_TOKEN"] = Self.apiToken }
        return environment
    }

    /// The password of the people `addUser` makes.
    static let password = "tests pass phrase 42"

    /// Adds a household account with hubctl (`RunningHub.password`), as a person would before logging in.
    func addUser(_ name: String = "ana", role: String = "admin") async throws {
        let result = try await hubctl.run(["users", "add", name, "--role", role], input: Self.password + "\n")
        guard result.status == 0 else { throw TestKitError("hubctl users add \(name) failed: \(result.standardError)") }
    }

    /// Points the registry at `broker`.
    func use(_ broker: MosquittoBroker) async throws {
        let result = try await hubctl.run("broker", "set", "--host", broker.host, "--port", "\(broker.port)")
        guard result.status == 0 else { throw TestKitError("hubctl broker set failed: \(result.standardError)") }
    }

    /// Adds sensors with hubctl, failing the test if one is refused.
    func add(_ sensors: [String]) async throws {
        for name in sensors {
            let result = try await hubctl.run("sensors", "add", name)
            guard result.status == 0 else {
                throw TestKitError("hubctl sensors add \(name) failed: \(result.standardError)")
            }
        }
    }

    /// Writes a registry of one numeric sensor whose device publishes JSON: its number at `path`, the payload's other
    /// fields its attributes (`hubctl sensors add` sets no value path). Before `prepare`, which keeps it.
    func writeRegistry(numeric name: String, topic: String, value path: String, unit: String) throws {
        let registry = """
            {"schemaVersion": 1, "sensors": [{"name": "\(name)", "topic": "\(topic)", "status": "Waiting",
             "added": "2026-11-02T00:00:00.000Z", "kind": "numeric", "value": "\(path)", "unit": "\(unit)"}]}
            """
        try registry.write(toFile: hubctl.storePath, atomically: true, encoding: .utf8)
    }

    /// Adds sensors with hubctl, each from its own `sensors add` arguments (`["door", "--preset", …]`), failing the
    /// test if one is refused.
    func add(arguments lists: [[String]]) async throws {
        for arguments in lists {
            let result = try await hubctl.run(["sensors", "add"] + arguments)
            guard result.status == 0 else {
                throw TestKitError("hubctl sensors add \(arguments) failed: \(result.standardError)")
            }
        }
    }

    /// Points the registry at `broker` and adds `sensors`: what most tests do before starting hubd.
    func prepare(_ broker: MosquittoBroker, sensors: [String] = []) async throws {
        try await use(broker)
        try await add(sensors)
    }

    /// Starts hubd; `extraEnvironment` adds to its environment; `umask`, when given, is the umask it starts under
    /// (through `sh -c 'umask …; exec hubd …'`).
    @discardableResult
    func start(
        _ extraEnvironment: [String: String] = [:], arguments: [String] = ["--log-level", "debug"],
        umask: String? = nil
    ) throws -> Inbox<String> {
        let errors = try makePipe()
        let (executable, allArguments) =
            umask.map { ("/bin/sh", ["-c", "umask \($0) && exec \"$0\" \"$@\"", hubd] + arguments) }
            ?? (hubd, arguments)
        let child = try ChildProcess(
            executable, allArguments, environment: environment.merging(extraEnvironment) { $1 },
            standardError: errors.write.fileDescriptor)
        try errors.write.close()
        // HUB_TEST_LOG_DIR: each hubd's log also goes to a file there, named after its configuration's directory, to
        // read after a failure (or a chaos run).
        let keep = ProcessInfo.processInfo.environment["HUB_TEST_LOG_DIR"].map { directory in
            FileHandle.appending(to: "\(directory)/hubd-\(hubctl.state.path.split(separator: "/").last ?? "hub").log")
        }
        let inbox = Inbox.consuming(
            lines(of: errors.read).map { line in
                // When the test read it, to the millisecond (hubd's own stamps are whole seconds).
                if let keep, let keep {
                    let now = Date().timeIntervalSince1970
                    let stamp = String(
                        format: "%02d:%02d:%06.3f", Int(now / 3600) % 24, Int(now / 60) % 60,
                        now.truncatingRemainder(dividingBy: 60))
                    keep.write(Data((stamp + " " + line + "\n").utf8))
                }
                return line
            })
        process.withLock { $0 = child }
        logs.withLock { $0 = inbox }
        return inbox
    }

    var log: Inbox<String> {
        get throws {
            guard let inbox = logs.withLock({ $0 }) else { throw TestKitError("hubd was not started") }
            return inbox
        }
    }

    var child: ChildProcess? { process.withLock { $0 } }

    /// Waits for a log line containing all of `fragments`.
    @discardableResult
    func waitForLog(_ fragments: String..., within timeout: Duration = .seconds(15)) async throws -> String {
        try await log.next(within: timeout, "a log line with \(fragments)") { line in
            fragments.allSatisfy { line.contains($0) }
        }
    }

    /// Starts hubd and waits until it has subscribed and announced itself.
    /// - Parameter limit: a cluster's agent is ready once its share of the partitions is connected, which the
    ///   others give up as they notice it (or after its lease).
    func startAndWaitUntilReady(_ extraEnvironment: [String: String] = [:], within limit: Duration = .seconds(15))
        async throws
    {
        try start(extraEnvironment)
        try await waitForLog("published availability", "status=online", within: limit)
    }

    /// Starts hubd and waits until it is ready and its HTTP API listens, in either order; returns the API's
    /// `host:port`.
    func startAndWaitForHTTP() async throws -> String {
        try start()
        var address: String?
        var ready = false
        while address == nil || !ready {
            let line = try await log.next(within: .seconds(15), "hubd ready and its HTTP address") { line in
                line.contains("HTTP API and dashboard listening")
                    || (line.contains("published availability") && line.contains("status=online"))
            }
            if let found = line.split(separator: " ").first(where: { $0.hasPrefix("address=") }) {
                address = String(found.dropFirst(8))
            } else {
                ready = true
            }
        }
        return address ?? ""
    }

    /// Stops hubd with `signal` and returns its exit status.
    @discardableResult
    func stop(_ signal: Int32 = SIGTERM) async -> Int32? {
        guard let child = process.withLock({ $0 }) else { return nil }
        child.send(signal)
        return await child.wait(timeout: .seconds(20))
    }

    /// The registry as `hubctl` reads it: a running hubd writes the statuses it holds first (`WriteRequest`).
    func registry() throws -> DefaultsDocument {
        WriteRequest.ask(directory: hubctl.state.path)
        return try DefaultsStore(directory: hubctl.state.path).read()
    }

    /// The alert book as `hubctl` reads it: a running hubd writes its files first (`WriteRequest`).
    func savedAlerts() throws -> SavedAlerts {
        WriteRequest.ask(directory: hubctl.state.path)
        return try SavedAlerts(directory: hubctl.state.path)
    }

    func sensor(_ name: String) throws -> Sensor? { try registry().sensor(named: name) }

    /// What hubd last said about itself.
    var status: AgentStatus? { AgentStatus.read(from: hubctl.state.path) }

    deinit {
        if let child = process.withLock({ $0 }) { child.send(SIGKILL) }
    }
}

/// A connected publisher with a session of its own that reconnects by itself, acknowledging each QoS 1 message: a
/// sensor's firmware under test load.
func publisher(_ broker: MosquittoBroker, id: String) async throws -> MosquittoClient {
    var configuration = MosquittoConfiguration(host: broker.host, port: broker.port, clientID: id, cleanSession: false)
    configuration.operationTimeout = .seconds(60)
    var logger = Logger(label: "publisher")
    logger.logLevel = .critical
    let client = MosquittoClient(configuration: configuration, logger: logger)
    try await client.connect()
    return client
}

/// Publishes with a client of our own wrapper, as sensor firmware would.
func publish(
    _ broker: MosquittoBroker,
    _ messages: [(topic: String, payload: [UInt8])],
    qos: MQTTQoS = .atLeastOnce,
    retain: Bool = false
) async throws {
    var configuration = MosquittoConfiguration(host: broker.host, port: broker.port)
    configuration.operationTimeout = .seconds(10)
    var logger = Logger(label: "firmware")
    logger.logLevel = .critical
    try await MosquittoClient.withConnection(configuration: configuration, logger: logger) { client in
        for message in messages {
            try await client.publish(topic: message.topic, payload: message.payload, qos: qos, retain: retain)
        }
    }
}

/// Runs `body` with the messages of a quiet client subscribed to `filter` (what hubd publishes on its own topics).
func withListener<T: Sendable>(
    _ broker: MosquittoBroker, subscribing filter: String, _ body: (Inbox<MQTTMessage>) async throws -> T
) async throws -> T {
    var configuration = MosquittoConfiguration(host: broker.host, port: broker.port)
    configuration.operationTimeout = .seconds(10)
    return try await MosquittoClient.withConnection(configuration: configuration, logger: testLogger()) { listener in
        try await listener.subscribe(filter, qos: .atLeastOnce)
        return try await body(Inbox.consuming(listener.messages))
    }
}

func publish(_ broker: MosquittoBroker, _ topic: String, _ payload: String, retain: Bool = false) async throws {
    try await publish(broker, [(topic, Array(payload.utf8))], retain: retain)
}

/// A logger for test clients: quiet.
func testLogger() -> Logger {
    var logger = Logger(label: "test")
    logger.logLevel = .critical
    return logger
}

extension FileHandle {
    /// A handle that appends to `path` (made if missing); nil when it can't be opened.
    static func appending(to path: String) -> FileHandle? {
        if !FileManager.default.fileExists(atPath: path) { FileManager.default.createFile(atPath: path, contents: nil) }
        guard let handle = FileHandle(forWritingAtPath: path) else { return nil }
        handle.seekToEndOfFile()
        return handle
    }
}

/// `request` as the tests' programs send it to a hubd: with the admin token (`RunningHub.apiToken`), and a JSON body
/// said to be JSON.
func authorized(_ request: HTTPClientRequest) -> HTTPClientRequest {
    var request = request
    if !request.headers.contains(name: "Authorization") {
        request.headers.add(name: "Authorization", value: "Bearer \(RunningHub.apiToken)")
    }
    return request
}
