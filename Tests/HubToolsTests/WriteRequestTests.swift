import Foundation
import HubCore
import HubNotify
import HubTestKit
import Testing

/// hubd writes its files seldom, for an SD card's sake: the history every `history.commit_interval` (an hour), the
/// registry's statuses every `store.flush_interval` (30 s), the alert book's files only when the book must be
/// durable. `hubctl` asks a running hubd to write what it holds before reading (`WriteRequest`: SIGUSR1, answered in
/// `hubd.answered`), so it sees an event, a status and an alert as soon as hubd has them.
@Suite struct WriteRequestTests {
    @Test func hubctlSeesAnEventAStatusAndAnAlertLongBeforeHubdWouldWriteThem() async throws {
        try await withBroker { broker in
            let hub = try RunningHub(
                configuration: """
                    notifiers:
                      backends:
                        audit: { type: file, path: audit.jsonl }
                      rules:
                        doors:
                          events: [changed]
                          statuses: [open]
                          backends: [audit]
                          group_by: [sensor]
                          group_wait: 1h
                    """)
            try await hub.prepare(broker, sensors: ["front", "back"])
            try await hub.startAndWaitUntilReady()
            let answered = hub.hubctl.state.file(WriteRequest.fileName)
            let pid = try #require(hub.child?.pid)
            try await eventually("hubd says it answers") {
                (try? String(contentsOfFile: answered, encoding: .utf8)) == "\(pid) 0\n"
            }
            // The first alert is reported (and its book written) at once; the next waits for the next report, 30 s
            // on, as a status waits for the next flush and an event for the next commit.
            let state = hub.hubctl.state.path
            try await publish(broker, "front", "open", retain: true)
            try await eventually("the first report's book in the files") {
                (try? SavedAlerts(directory: state).book.alerts["doors/front/status"]) != nil
            }
            try await publish(broker, "back", "open", retain: true)
            try await hub.waitForLog("sensor event", "sensor=back", "to=open")
            let asked = ContinuousClock.now
            // Not in the files, unasked.
            #expect(try SavedAlerts(directory: state).book.alerts["doors/back/status"] == nil)
            #expect(try DefaultsStore(directory: state).read().sensor(named: "back")?.status != "open")
            try await eventually("hubctl alerts list shows it", within: .seconds(5)) {
                let listed = try await hub.hubctl.run("alerts", "list", "--json").standardOutput
                let alerts = try JSONSerialization.jsonObject(with: Data(listed.utf8)) as? [[String: Any]]
                return alerts?.contains { $0["id"] as? String == "doors/back/status" } == true
            }
            try await eventually("hubctl sensors list shows it", within: .seconds(5)) {
                let listed = try await hub.hubctl.run("sensors", "list", "--json").standardOutput
                let sensors = try JSONSerialization.jsonObject(with: Data(listed.utf8)) as? [[String: Any]]
                return sensors?.first { $0["name"] as? String == "back" }?["status"] as? String == "open"
            }
            try await eventually("hubctl events shows it", within: .seconds(5)) {
                try await hub.hubctl.run("events", "back").standardOutput.contains("open")
            }
            #expect(ContinuousClock.now - asked < .seconds(15), "well before the 30 s flush and report")
            // Each command asked (the first to ask has hubd write everything it holds).
            let count = try String(contentsOfFile: answered, encoding: .utf8).split(separator: " ").last
            #expect(count.flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) } ?? 0 >= 3)
            #expect(await hub.stop() == 0)
        }
    }
}
