import Foundation
import HubCore
import HubTestKit
import Testing

/// A power cut as it reaches the hub (issue 52): 300 sensors' firmware connected to a real Mosquitto (its defaults),
/// each with a retained `offline` will and its retained status (`closed`), cut off at once, one by one over 3 s and
/// 30 s, and by their keepalive running out; then all back. The storm guard must hold however the wills come: at
/// most one outage message and one update for the cut, at most one message for the return, none lost, no alert sent
/// alone. (Before, wills spread over 3.2 s went as about 270 separate messages.)
@Suite(.timeLimit(.minutes(4)))
struct StormHubTests {
    static let sensors = (1...300).map { String(format: "st%03d", $0) }

    struct Message {
        var reason: String
        var title: String
        var alerts: [String]
    }

    static func messages(_ path: String) -> [Message] {
        AppendFile.lines(AppendFile.contents(path)).compactMap { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any] else { return nil }
            return Message(
                reason: object["reason"] as? String ?? "", title: object["title"] as? String ?? "",
                alerts: object["alerts"] as? [String] ?? [])
        }
    }

    /// Waits until the messages name every sensor (as firing in the cut, resolved in the return), then until none
    /// came for 8 s (more than two group_intervals): the messages of that phase.
    static func settle(_ path: String, after count: Int, phase: String) async throws -> [Message] {
        try await eventually("\(phase): every sensor named", within: .seconds(120)) {
            Set(messages(path).dropFirst(count).flatMap(\.alerts)).count >= sensors.count
        }
        var seen = messages(path).count
        var still = ContinuousClock.now
        while ContinuousClock.now - still < .seconds(8) {
            try await Task.sleep(for: .milliseconds(250))
            let now = messages(path).count
            if now != seen { (seen, still) = (now, ContinuousClock.now) }
        }
        return Array(messages(path).dropFirst(count))
    }

    /// Runs one cut and the return; returns each phase's messages.
    func powerCut(
        keepalive: Int = 60, connectOver: Duration? = nil, _ cut: @escaping (WillClients) async throws -> Void
    ) async throws -> (cut: [Message], back: [Message]) {
        try await withBroker { broker in
            let directory = try TemporaryDirectory()
            let out = directory.file("out.jsonl")
            let hub = try RunningHub(
                configuration: """
                    notifiers:
                      backends:
                        out: { type: file, path: \(out) }
                      rules:
                        power:
                          events: [offline, recovered]
                          backends: [out]
                          group_by: [sensor]
                          group_wait: 3s
                          group_interval: 3s
                    """)
            try await hub.use(broker)
            let csv = directory.file("sensors.csv")
            try ("name,topic\n" + Self.sensors.map { "\($0),power/\($0)" }.joined(separator: "\n") + "\n")
                .write(toFile: csv, atomically: true, encoding: .utf8)
            let imported = try await hub.hubctl.run("sensors", "import", csv)
            #expect(imported.status == 0, "\(imported.standardError)")
            try await hub.startAndWaitUntilReady()
            let clients = WillClients(topics: Self.sensors.map { "power/\($0)" })
            defer { clients.closeAll() }
            try await clients.connect(
                host: broker.host, port: broker.port, keepalive: keepalive, spreadOver: connectOver)
            do {
                try await eventually("every sensor's status", within: .seconds(60)) {
                    try hub.registry().sensors.allSatisfy { $0.status == "closed" }
                }
            } catch {
                let statuses = try hub.registry().sensors.prefix(5).map { "\($0.name)=\($0.status)" }
                Issue.record(
                    "statuses: \(statuses); log: \(await (try? hub.log)?.drain().suffix(20) ?? []); broker: \(broker.log.suffix(3000))")
                throw error
            }
            try await cut(clients)
            let cutMessages = try await Self.settle(out, after: 0, phase: "the cut")
            // When the wills came, second by second from the first (what the storm guard saw).
            let times = try hub.registry().sensors.compactMap { $0.lastUpdated?.millisecondsSince1970 }.sorted()
            if let first = times.first {
                var histogram: [Int64: Int] = [:]
                for time in times { histogram[(time - first) / 1000, default: 0] += 1 }
                print("StormHubTests wills by second: \(histogram.sorted { $0.key < $1.key }.map { "\($0.key)s:\($0.value)" })")
            }
            clients.closeAll()
            // Power back: each firmware publishes its status again, retained.
            try await publish(
                broker, Self.sensors.map { ("power/\($0)", Array("closed".utf8)) }, retain: true)
            let backMessages = try await Self.settle(out, after: cutMessages.count, phase: "the return")
            #expect(await hub.stop() == 0)
            return (cutMessages, backMessages)
        }
    }

    func judge(_ phases: (cut: [Message], back: [Message]), _ name: String) {
        let (cut, back) = phases
        print("StormHubTests \(name): the cut \(cut.map(\.title)); the return \(back.map(\.title))")
        #expect(cut.count <= 2 && cut.allSatisfy { $0.reason == "outage" }, "\(name): \(cut.map(\.title))")
        #expect(Set(cut.flatMap(\.alerts)).count == Self.sensors.count, "\(name): every alert told")
        #expect(back.count == 1 && back.allSatisfy { $0.reason == "outage" }, "\(name): \(back.map(\.title))")
        #expect(Set(back.flatMap(\.alerts)).count == Self.sensors.count, "\(name): every return told")
    }

    @Test func willsAtOnce() async throws {
        judge(try await powerCut { $0.dropAll() }, "at once")
    }

    @Test func willsOver3Seconds() async throws {
        judge(try await powerCut { try await $0.drop(over: .seconds(3)) }, "over 3 s")
    }

    @Test func willsOver30Seconds() async throws {
        judge(try await powerCut { try await $0.drop(over: .seconds(30)) }, "over 30 s")
    }

    /// Connected over 10 s with a keepalive of 10 s, then silent: the broker gives each up 15 s after its last
    /// packet, so the wills come over about 10 s, a second or so apart in bursts (Mosquitto checks keepalives on
    /// its loop).
    @Test func willsOverAKeepalive() async throws {
        judge(try await powerCut(keepalive: 10, connectOver: .seconds(10)) { $0.fallSilent() }, "over a keepalive")
    }
}
