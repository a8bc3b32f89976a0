import Foundation
import HubCore
import HubTestKit
import Testing

/// The alert stage end to end: hubd on a real Mosquitto (default settings, statuses retained as firmware publishes
/// them), with a file and a webhook on a real local server, killed and restarted in the middle.
@Suite struct AlertHubTests {
    /// A power cut: 40 sensors go offline within 2 s → one message per backend, one flapping sensor in none; hubd is
    /// SIGKILLed and restarted → the message is not sent again; they come back → one resolved message.
    @Test func aPowerCutIsOneMessageEachWayThroughASIGKILL() async throws {
        try await withBroker { broker in
            let directory = try TemporaryDirectory()
            let audit = directory.file("audit.jsonl")
            let server = try await TestHTTPServer.start()
            defer { Task { await server.stop() } }
            let hub = try RunningHub(
                configuration: """
                    notifiers:
                      backends:
                        audit: { type: file, path: \(audit) }
                        hook: { type: webhook, url: "\(server.url)/alerts" }
                      rules:
                        power:
                          events: [offline, silent]
                          backends: [audit, hook]
                          group_wait: 3s
                          group_interval: 2s
                    """)
            let sensors = (1...40).map { String(format: "s%02d", $0) }
            try await hub.prepare(broker, sensors: sensors)
            try await hub.startAndWaitUntilReady()
            try await publish(broker, sensors.map { ($0, Array("ok".utf8)) }, retain: true)
            try await eventually("every sensor ok") {
                sensors.allSatisfy { (try? hub.sensor($0))??.status == "ok" }
            }

            // The cut: every sensor's last will within 2 s; s07 is back before the group's wait is over.
            try await publish(broker, sensors.prefix(20).map { ($0, Array("offline".utf8)) }, retain: true)
            try await Task.sleep(for: .seconds(1))
            try await publish(broker, sensors.dropFirst(20).map { ($0, Array("offline".utf8)) }, retain: true)
            try await publish(broker, "s07", "ok", retain: true)
            try await eventually("the grouped message in the file", within: .seconds(20)) { lines(audit).count == 1 }
            _ = try await server.waitForRequests(1)
            let firing = try #require(lines(audit).first)
            #expect(firing["reason"] as? String == "firing")
            #expect(firing["title"] as? String == "39 sensors offline")
            let named = try #require(firing["alerts"] as? [String])
            #expect(named.count == 39 && !named.contains("power/s07/offline"))
            #expect((firing["message"] as? String)?.hasPrefix("s01, s02, s03, s04, s05, s06, s08") == true)
            let hooked = try #require(
                try JSONSerialization.jsonObject(with: Data(server.requests[0].body)) as? [String: Any])
            #expect(hooked["id"] as? String == firing["id"] as? String)

            // Killed with 39 alerts open: the next start neither repeats nor forgets them.
            #expect(await hub.stop(SIGKILL) == 128 + SIGKILL)
            try await hub.startAndWaitUntilReady()
            try await publish(broker, sensors.map { ($0, Array("ok".utf8)) }, retain: true)
            try await eventually("the resolved message", within: .seconds(20)) { lines(audit).count == 2 }
            let resolved = try #require(lines(audit).last)
            #expect(resolved["reason"] as? String == "resolved")
            #expect(resolved["title"] as? String == "39 sensors back")
            #expect((resolved["alerts"] as? [String])?.count == 39)
            _ = try await server.waitForRequests(2)
            // Nothing more: the book is empty once the resolved message went.
            try await eventually("no open alert left") {
                let book = try? JSONSerialization.jsonObject(
                    with: Data(contentsOf: URL(fileURLWithPath: hub.hubctl.state.file("alerts.json"))))
                return ((book as? [String: Any])?["alerts"] as? [String: Any])?.isEmpty == true
            }
            #expect(lines(audit).count == 2 && server.requests.count == 2)
            await hub.stop()
        }
    }

    private func lines(_ path: String) -> [[String: Any]] {
        ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
        }
    }
}
