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

    /// `hubctl silences add 'door*'` holds the door's alert while the window's goes; `hubctl silences expire` sends
    /// the door's at once, the door still open; reminders name both until `hubctl alerts ack`, and after it only
    /// an alert that opened later.
    @Test func silencesAndAcknowledgementsFromHubctl() async throws {
        try await withBroker { broker in
            let directory = try TemporaryDirectory()
            let audit = directory.file("audit.jsonl")
            let hub = try RunningHub(
                configuration: """
                    notifiers:
                      backends:
                        audit: { type: file, path: \(audit) }
                      rules:
                        doors:
                          events: [changed]
                          statuses: [open]
                          backends: [audit]
                          group_wait: 1s
                          group_interval: 1s
                          repeat: 2s
                    """)
            try await hub.prepare(broker, sensors: ["door", "window", "gate"])
            try await hub.startAndWaitUntilReady()
            let added = try await hub.hubctl.run("silences", "add", "door*", "--for", "1h", "--comment", "painting")
            #expect(added.status == 0, "\(added.standardError)")
            let id = try #require(added.standardOutput.split(separator: " ").dropFirst().first?.dropLast())
            try await hub.waitForLog("alert request", "silence added")
            let listed = try await hub.hubctl.run("silences", "list")
            #expect(listed.standardOutput.contains("sensor=door*") && listed.standardOutput.contains("active"))

            try await publish(broker, [("door", Array("open".utf8)), ("window", Array("open".utf8))], retain: true)
            try await eventually("the window's alert") { lines(audit).count == 1 }
            #expect(lines(audit)[0]["alerts"] as? [String] == ["doors/window/status"])

            // The silence ends with the door still open: its alert goes at once.
            let expired = try await hub.hubctl.run("silences", "expire", String(id))
            #expect(expired.status == 0, "\(expired.standardError)")
            try await eventually("the door's alert") {
                lines(audit).contains {
                    $0["alerts"] as? [String] == ["doors/door/status"] && $0["reason"] as? String == "firing"
                }
            }
            try await eventually("a reminder naming both") {
                lines(audit).contains {
                    $0["reason"] as? String == "reminder" && ($0["alerts"] as? [String])?.count == 2
                }
            }
            let listing = try await hub.hubctl.run("alerts", "list")
            #expect(listing.standardOutput.contains("doors/door/status") && listing.standardOutput.contains("firing"))
            for sensor in ["door", "window"] {
                let ack = try await hub.hubctl.run("alerts", "ack", sensor, "--by", "ana")
                #expect(ack.status == 0, "\(ack.standardError)")
                try await hub.waitForLog("alert request", "doors/\(sensor)/status", "acknowledged")
            }
            let acknowledged = lines(audit).count
            // A new alert after the acknowledgements: its own firing message and reminder, naming it alone.
            try await publish(broker, "gate", "open", retain: true)
            try await eventually("the gate's reminder", within: .seconds(20)) {
                lines(audit).contains {
                    $0["reason"] as? String == "reminder" && $0["alerts"] as? [String] == ["doors/gate/status"]
                }
            }
            let after = lines(audit).dropFirst(acknowledged)
            #expect(!after.contains { ($0["alerts"] as? [String])?.contains("doors/door/status") == true })
            let shown = try await hub.hubctl.run("alerts", "show", "doors/door/status")
            #expect(shown.standardOutput.contains("by ana via hubctl"), "\(shown.standardOutput)")
            let unknown = try await hub.hubctl.run("alerts", "ack", "cellar")
            #expect(unknown.status == 64 && unknown.standardError.contains("no firing alert is 'cellar'"))
            await hub.stop()
        }
    }

    private func lines(_ path: String) -> [[String: Any]] {
        ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
        }
    }
}
