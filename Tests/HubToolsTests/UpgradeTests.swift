import Foundation
import HubCore
import HubTestKit
import Testing

/// A new hubd started on a state directory an older hubd left when it was SIGKILLed in the middle of its work —
/// every status of a burst taken (journaled and acknowledged to the broker), its notifications and an alert's outage
/// message pending because the webhooks were down — delivers every change exactly once, under the ids the old hub
/// gave them, and tells each alert once (issue 54: whatever the pipeline's logs become, they must read what today's
/// wrote, the alert book included).
///
/// The state directory is a fixture kept in Tests/Fixtures (`upgrade-<date>`), made by `UpgradeFixture` with the
/// hubd of that day (`HUB_MAKE_UPGRADE_FIXTURE=DIR swift test --filter UpgradeFixture`); its `expected.txt` lists the
/// changes published, one `sensor=status` a line.
@Suite(.timeLimit(.minutes(2))) struct UpgradeTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures")

    /// The hooks' configuration, the same in the old hub and the new (the outbox names its backend): every change
    /// to one, and an alert on each sensor's last status (`v20`) to the other, so that the alert book is in the
    /// state directory too.
    static func configuration(_ url: String) -> String {
        """
        notifiers:
          backends:
            hook: { type: webhook, url: "\(url)/events" }
            page: { type: webhook, url: "\(url)/alerts" }
          rules:
            all: { backends: [hook] }
            last: { events: [changed], statuses: [v20], backends: [page], group_by: [sensor], group_wait: 0s }
        """
    }

    /// The alerts the old hub fired, one a sensor (told in one outage message: three groups changed at once).
    static let alerts: Set<String> = ["last/a/status", "last/b/status", "last/c/status"]

    static var fixtureNames: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: fixtures.path)) ?? [])
            .filter { $0.hasPrefix("upgrade-") }.sorted()
    }

    @Test(arguments: fixtureNames)
    func aStateDirectoryAnOlderHubLeftIsDeliveredExactlyOnce(_ name: String) async throws {
        let fixture = Self.fixtures.appendingPathComponent(name)
        let expected = try String(contentsOf: fixture.appendingPathComponent("expected.txt"), encoding: .utf8)
            .split(separator: "\n").map(String.init)
        #expect(expected.count == 60)
        try await withBroker { broker in
            let server = try await TestHTTPServer.start()
            defer { Task { await server.stop() } }
            let hub = try RunningHub(configuration: Self.configuration(server.url))
            let state = fixture.appendingPathComponent("state")
            for file in try FileManager.default.contentsOfDirectory(atPath: state.path) {
                let target = hub.hubctl.state.file(file)
                try? FileManager.default.removeItem(atPath: target)
                try FileManager.default.copyItem(atPath: state.appendingPathComponent(file).path, toPath: target)
            }
            try await hub.use(broker)
            try await hub.startAndWaitUntilReady()
            var delivered: [String: Set<String>] = [:]
            var perID: [String: Int] = [:]
            var told: [String: Int] = [:]
            // What arrived, judged again at each look; what is missing after the wait is lost.
            do {
                try await eventually("every change and alert of the old hub delivered", within: .seconds(30)) {
                    delivered = [:]
                    perID = [:]
                    told = [:]
                    for request in server.requests where request.path == "/alerts" {
                        guard let body = try? JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any],
                            let id = body["id"] as? String,
                            ["firing", "outage"].contains(body["reason"] as? String ?? "")
                        else { continue }
                        perID[id, default: 0] += 1
                        for alert in body["alerts"] as? [String] ?? [] { told[alert, default: 0] += 1 }
                    }
                    for request in server.requests where request.path == "/events" {
                        guard let body = try? JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any],
                            let sensor = body["sensor"] as? String, let status = body["status"] as? String,
                            let id = body["id"] as? String
                        else { continue }
                        delivered["\(sensor)=\(status)", default: []].insert(id)
                        perID[id, default: 0] += 1
                    }
                    return Set(expected).isSubset(of: delivered.keys) && Self.alerts.isSubset(of: told.keys)
                }
            } catch {
                let alerts = server.requests.filter { $0.path == "/alerts" }.map(\.text)
                Issue.record("\(error): alerts told \(told); the alert requests: \(alerts)")
            }
            // A moment more for anything sent twice to show.
            try await Task.sleep(for: .seconds(2))
            await hub.stop()
            #expect(Set(expected).subtracting(delivered.keys).isEmpty)
            #expect(
                delivered.filter { $0.value.count > 1 }.isEmpty,
                "under two ids: \(delivered.filter { $0.value.count > 1 })")
            #expect(perID.filter { $0.value > 1 }.isEmpty, "sent again: \(perID.filter { $0.value > 1 })")
            #expect(Set(delivered.keys) == Set(expected), "unexpected: \(Set(delivered.keys).subtracting(expected))")
            // Each alert told once, in one message.
            #expect(told == Dictionary(uniqueKeysWithValues: Self.alerts.map { ($0, 1) }), "\(told)")
            // An outbox of its own, as hubd kept it before 8cca05d, is taken into the journal and removed.
            if FileManager.default.fileExists(atPath: state.appendingPathComponent("outbox.jsonl").path) {
                #expect(!FileManager.default.fileExists(atPath: hub.hubctl.state.file("outbox.jsonl")))
            }
        }
    }
}

/// Makes the fixture `UpgradeTests` reads, with the hubd built now: three sensors, a burst of 60 QoS 1 changes,
/// the webhook's port closed so that every notification waits, and hubd SIGKILLed as soon as it has taken the
/// last status (it acknowledges a status once its journal has it). Only with `HUB_MAKE_UPGRADE_FIXTURE=DIR`.
@Suite struct UpgradeFixture {
    static let folder = ProcessInfo.processInfo.environment["HUB_MAKE_UPGRADE_FIXTURE"]

    @Test(.enabled(if: folder != nil)) func makeTheFixture() async throws {
        let folder = URL(fileURLWithPath: try #require(Self.folder))
        try await withBroker { broker in
            let closed = try freeLoopbackPort()
            let hub = try RunningHub(configuration: UpgradeTests.configuration("http://127.0.0.1:\(closed)"))
            let sensors = ["a", "b", "c"]
            try await hub.prepare(broker, sensors: sensors)
            try await hub.startAndWaitUntilReady()
            let client = try await publisher(broker, id: "upgrade-fixture")
            var published: [String] = []
            for index in 0..<60 {
                let sensor = sensors[index % sensors.count]
                let status = "v\(index / sensors.count + 1)"
                try await client.publish(topic: sensor, payload: status, qos: .atLeastOnce, retain: true)
                published.append("\(sensor)=\(status)")
            }
            await client.disconnect()
            // Taken when the retained statuses are the last ones: hubd's registry follows its journal.
            try await eventually("the burst taken", within: .seconds(20)) {
                let registry = try? hub.registry()
                return sensors.allSatisfy { registry?.sensor(named: $0)?.status == "v20" }
            }
            _ = await hub.stop(SIGKILL)
            let state = folder.appendingPathComponent("state")
            try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
            for file in try FileManager.default.contentsOfDirectory(atPath: hub.hubctl.state.path)
            where !["hubd.yaml", "hubd.lock"].contains(file) && !file.hasSuffix(".sock") {
                try FileManager.default.copyItem(
                    atPath: hub.hubctl.state.file(file), toPath: state.appendingPathComponent(file).path)
            }
            try (published.joined(separator: "\n") + "\n").write(
                to: folder.appendingPathComponent("expected.txt"), atomically: true, encoding: .utf8)
        }
    }
}
