import Foundation
import HubCore
import HubTestKit
import Logging
import Mosquitto
import Testing

/// Notifications end to end: hubd routing real sensor messages to backends, surviving SIGKILL, and hubctl's
/// `notify test`.
@Suite struct NotifyTests {
    /// A status change reaches the mqtt backend (over a client of its own, beside hubd's) and the file backend.
    @Test func statusChangeReachesMQTTAndFile() async throws {
        try await withBroker { broker in
            let audit = FileManager.default.temporaryDirectory.appendingPathComponent(
                "audit-\(UUID().uuidString).jsonl"
            ).path
            defer { unlink(audit) }
            let hub = try RunningHub(
                configuration: """
                    notifiers:
                      backends:
                        bus: { type: mqtt, topic: "sensorhub/events/{sensor}" }
                        audit: { type: file, path: \(audit) }
                      rules:
                        all: { backends: [bus, audit], title: "{sensor} is {new}" }
                    """)
            try await hub.prepare(broker, sensors: ["kitchen"])
            try await withListener(broker, subscribing: "sensorhub/events/#") { messages in
                try await hub.startAndWaitUntilReady()
                try await publish(broker, [("kitchen", Array("open".utf8))])
                let message = try await messages.next(within: .seconds(15), "an event on sensorhub/events/kitchen") {
                    $0.topic == "sensorhub/events/kitchen"
                }
                let json = try #require(try JSONSerialization.jsonObject(with: Data(message.payload)) as? [String: Any])
                #expect(json["sensor"] as? String == "kitchen" && json["status"] as? String == "open")
                #expect(json["old_status"] as? String == "Waiting" && json["title"] as? String == "kitchen is open")
                try await eventually("the audit line") {
                    (try? String(contentsOfFile: audit, encoding: .utf8))?.contains(json["id"] as! String) == true
                }
                try await eventually("status file counts") {
                    hub.status?.notifications?.backends["bus"]?.delivered == 1
                }
            }
            // Over a client of its own: on the hub's, a notification waited for the journal's fsync behind the
            // acknowledgements it holds.
            #expect(broker.log.contains(" as sensorhub-notify "), "\(broker.log)")
            #expect(broker.log.contains(" as sensorhub "))
            await hub.stop()
        }
    }

    /// A notification the broker refuses for good — its ACL denies the topic, which MQTT 5 says in the PUBACK
    /// (0x87) — is given up with the broker's reason, not retried for ever; in MQTT 3.1.1 the broker dropped it in
    /// silence and the backend counted it delivered.
    @Test func aNotificationTheBrokersACLRefusesIsGivenUpNotRetried() async throws {
        let acl = FileManager.default.temporaryDirectory.appendingPathComponent("acl-\(UUID().uuidString)").path
        try "topic readwrite kitchen\ntopic readwrite sensorhub/#\ntopic readwrite homeassistant/#\n".write(
            toFile: acl, atomically: true, encoding: .utf8)
        defer { unlink(acl) }
        try await withBroker(.init(extraLines: ["acl_file \(acl)"])) { broker in
            let hub = try RunningHub(
                configuration: """
                    notifiers:
                      backends:
                        denied: { type: mqtt, topic: "forbidden/{sensor}" }
                      rules:
                        all: { backends: [denied] }
                    """)
            try await hub.prepare(broker, sensors: ["kitchen"])
            try await hub.startAndWaitUntilReady()
            try await publish(broker, [("kitchen", Array("open".utf8))])
            try await eventually("the notification given up", within: .seconds(20)) {
                hub.status?.notifications?.backends["denied"]?.failed == 1
            }
            let statistics = try #require(hub.status?.notifications?.backends["denied"])
            #expect(statistics.delivered == 0 && statistics.retried == 0, "\(statistics)")
            #expect(statistics.lastError?.lowercased().contains("not authorized") == true, "\(statistics)")
            await hub.stop()
        }
    }

    /// The mqtt backend's own client follows new broker settings (`hubctl broker set`): the next notification goes
    /// to the new broker, and the old one's client is closed.
    @Test func theMQTTBackendFollowsNewBrokerSettings() async throws {
        try await withBroker { first in
            try await withBroker { second in
                let hub = try RunningHub(
                    configuration: """
                        notifiers:
                          backends:
                            bus: { type: mqtt, topic: "sensorhub/events/{sensor}" }
                          rules:
                            all: { backends: [bus] }
                        """)
                try await hub.prepare(first, sensors: ["kitchen"])
                try await withListener(first, subscribing: "sensorhub/events/#") { messages in
                    try await hub.startAndWaitUntilReady()
                    try await publish(first, [("kitchen", Array("open".utf8))])
                    _ = try await messages.next(within: .seconds(15), "the event on the first broker") {
                        $0.topic == "sensorhub/events/kitchen"
                    }
                }
                #expect(first.log.contains(" as sensorhub-notify "))
                try await hub.use(second)
                try await eventually("connected to the second broker") {
                    hub.status?.broker == "\(second.host):\(second.port)" && hub.status?.connected == true
                }
                try await withListener(second, subscribing: "sensorhub/events/#") { messages in
                    try await publish(second, [("kitchen", Array("shut".utf8))])
                    let message = try await messages.next(within: .seconds(15), "the event on the second broker") {
                        $0.topic == "sensorhub/events/kitchen"
                    }
                    #expect(String(decoding: message.payload, as: UTF8.self).contains("\"shut\""))
                }
                #expect(second.log.contains(" as sensorhub-notify "))
                try await eventually("the first broker's notification client closed") {
                    first.log.contains("Client sensorhub-notify disconnected")
                }
                await hub.stop()
            }
        }
    }

    /// hubd killed with notifications still undelivered (the webhook is down) delivers them after a restart,
    /// with the ids it gave them before.
    @Test func outboxSurvivesSIGKILL() async throws {
        try await withBroker { broker in
            let port = try freeLoopbackPort()
            let hub = try RunningHub(
                configuration: """
                    notifiers:
                      backends:
                        hook: { type: webhook, url: "http://127.0.0.1:\(port)/events", retry_delay: 1h }
                      rules:
                        all: { backends: [hook] }
                    """)
            let sensors = (1...5).map { "sensor \($0)" }
            try await hub.prepare(broker, sensors: sensors)
            try await hub.startAndWaitUntilReady()
            try await publish(broker, sensors.map { ($0, Array("open".utf8)) })
            // The outbox's lines are in the journal's file, with the records they were routed from.
            let journal = hub.hubctl.state.file("journal.jsonl")
            let addedIDs = {
                ((try? String(contentsOfFile: journal, encoding: .utf8)) ?? "").split(separator: "\n").compactMap {
                    ((try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]).flatMap {
                        ($0["add"] as? [String: Any])?["id"] as? String
                    }
                }
            }
            try await eventually("five notifications in the journal") { addedIDs().count == 5 }
            try await hub.waitForLog("delivery failed, will retry")
            #expect(await hub.stop(SIGKILL) == 128 + SIGKILL)
            let pendingIDs = addedIDs()
            #expect(!FileManager.default.fileExists(atPath: hub.hubctl.state.file("outbox.jsonl")))
            #expect(pendingIDs.count == 5)

            let server = try await TestHTTPServer.start(port: port)
            defer { Task { await server.stop() } }
            try hub.start()
            try await hub.waitForLog("resending notifications left from before", "count=5")
            let requests = try await server.waitForRequests(5)
            #expect(Set(requests.compactMap { $0.header("X-SensorHub-Id") }) == Set(pendingIDs))
            let delivered = requests.compactMap {
                (try? JSONSerialization.jsonObject(with: Data($0.body)) as? [String: Any])?["sensor"] as? String
            }
            #expect(Set(delivered) == Set(sensors))
            await hub.stop()
        }
    }

    /// `hubctl notify test` makes a real attempt per backend and says what happened.
    @Test func notifyTestReportsEachBackend() async throws {
        let server = try await TestHTTPServer.start()
        defer { Task { await server.stop() } }
        let down = try freeLoopbackPort()
        let hub = try RunningHub(
            configuration: """
                notifiers:
                  backends:
                    good: { type: webhook, url: "\(server.url)/ok" }
                    gone: { type: webhook, url: "http://127.0.0.1:\(down)/" }
                  rules: {}
                """)
        var environment = hub.environment
        environment["HUB_CONFIG"] = hub.configFile
        let hubctl = hub.hubctl
        let one = try await hubctl.run(["notify", "test", "good", "--config", hub.configFile])
        #expect(one.status == 0)
        #expect(one.standardOutput.hasPrefix("good (webhook): delivered in "))
        let request = try #require(server.requests.first)
        #expect(
            request.path == "/ok" && request.text.contains(#""event": "test""#)
                || request.text.contains(#""event":"test""#))

        let all = try await hubctl.run(["notify", "test", "--config", hub.configFile])
        #expect(all.status == 69)
        #expect(all.standardOutput.contains("gone (webhook): will retry: http://127.0.0.1:\(down)/: "))
        #expect(all.standardOutput.contains("good (webhook): delivered"))

        let unknown = try await hubctl.run(["notify", "test", "pager", "--config", hub.configFile])
        #expect(unknown.status == 64)
        #expect(unknown.standardError == "hubctl: no backend is named 'pager'; configured: gone, good\n")

        try "notifiers:\n  backends:\n    x: { type: file }\n".write(
            toFile: hub.configFile, atomically: true, encoding: .utf8)
        let invalid = try await hubctl.run(["notify", "test", "--config", hub.configFile])
        #expect(invalid.status == 78)
        #expect(invalid.standardError == "hubctl: \(hub.configFile): notifiers.backends.x.path: missing\n")
    }
}
