import Foundation
import HubCore
import HubSupport
import HubTestKit
import Logging
import Mosquitto
import Testing

/// An alerting rule as Home Assistant entities (issue 37, point 8): hubd with `homeassistant:` on a real Mosquitto;
/// the configs and states it publishes are read back by a subscriber and handed to Home Assistant 2024.3.3's own
/// code (`ha_validate.py`), which checks each config and says what the entity shows for the retained state; the
/// button is pressed by publishing what Home Assistant's validated button config says it publishes.
@Suite(.timeLimit(.minutes(3)))
struct HomeAssistantAlertTests {
    static func configuration(_ audit: String, alerting: Bool) -> String {
        """
        store:
          flush_interval: 100ms
        homeassistant:
          enabled: true
        notifiers:
          backends:
            audit: { type: file, path: \(audit) }
          rules:
            leak:
              events: [changed]
              statuses: [wet]
              backends: [audit]
        \(alerting ? "      group_wait: 0s\n" : "")\
            doors:
              sensors: ["door*"]
              backends: [audit]
        """
    }

    @Test func aRulesAlertsAreAnEntityWithAnAcknowledgeButton() async throws {
        try await withBroker { broker in
            let directory = try TemporaryDirectory()
            let audit = directory.file("audit.jsonl")
            let hub = try RunningHub(configuration: Self.configuration(audit, alerting: false))
            try await hub.prepare(broker, sensors: ["kitchen leak", "door"])
            try await HomeAssistantTests.Retained.listening(broker, ["homeassistant/#", "sensorhub/alerts/#"]) {
                retained in
                func topics(_ suffix: String) -> [String] {
                    retained.latest.withLock { $0.filter { !$0.value.isEmpty }.keys.filter { $0.hasSuffix(suffix) } }
                }
                // What hubd published for alerts (the presses on the command topic aside).
                func alertTopics() -> [String] {
                    retained.latest.withLock { latest in
                        latest.filter { !$0.value.isEmpty }.keys.filter {
                            ($0.hasPrefix("sensorhub/alerts/") || $0.contains("_alerts_"))
                                && !$0.hasSuffix("/acknowledge")
                        }
                    }
                }

                // No rule makes alerts: the sensors' entities and nothing else (they are published in the same
                // flush as an alert entity would be).
                try await hub.startAndWaitUntilReady()
                try await eventually("the sensors' configs") { topics("/config").count >= 1 + 2 }
                #expect(topics("/config").count == 1 + 2, "\(topics("/config"))")
                #expect(alertTopics().isEmpty, "\(alertTopics())")

                // A reload makes `leak` an alerting rule: its sensor, its button and its state `ok`; `doors` none.
                try Self.configuration(audit, alerting: true).write(
                    toFile: hub.configFile, atomically: true, encoding: .utf8)
                hub.child?.send(SIGHUP)
                try await eventually("the leak rule's entities and state") {
                    topics("_alerts_leak/config").count == 2 && topics("/leak/state").count == 1
                }
                let sensorTopic = try #require(topics("_alerts_leak/config").first { $0.contains("/sensor/") })
                let buttonTopic = try #require(topics("_alerts_leak/config").first { $0.contains("/button/") })
                let stateTopic = try #require(topics("/leak/state").first)
                #expect(alertTopics().allSatisfy { !$0.contains("doors") }, "\(alertTopics())")
                var seen = try await validate(retained, state: (sensorTopic, stateTopic))
                #expect(seen[sensorTopic]?.entity?["state"] as? String == "ok")
                let button = try #require(seen[buttonTopic]?.config)
                #expect(button["name"] as? String == "Acknowledge leak alerts")

                // The kitchen is wet: the entity is `firing`, the alert in its attributes.
                try await publish(broker, "kitchen leak", "wet", retain: true)
                try await eventually("the state firing") { retained.json(stateTopic)?["state"] as? String == "firing" }
                seen = try await validate(retained, state: (sensorTopic, stateTopic))
                var entity = try #require(seen[sensorTopic]?.entity)
                #expect(entity["state"] as? String == "firing")
                var attributes = try #require(entity["attributes"] as? [String: Any])
                var alerts = try #require(attributes["alerts"] as? [[String: Any]])
                #expect(attributes["firing"] as? Int == 1 && alerts.count == 1)
                #expect(alerts.first?["id"] as? String == "leak/kitchen leak/status")
                #expect(alerts.first?["status"] as? String == "wet" && alerts.first?["state"] as? String == "firing")

                // Pressed in Home Assistant: what its button publishes (its validated config says what and how).
                let command = try #require(button["command_topic"] as? String)
                let press = try #require(button["payload_press"] as? String)
                let qos = try #require(MQTTQoS(rawValue: Int32(button["qos"] as? Int ?? -1)))
                try await publish(
                    broker, [(command, Array(press.utf8))], qos: qos, retain: button["retain"] as? Bool ?? true)
                try await hub.waitForLog("alert request", "leak/kitchen leak/status", "outcome=acknowledged")
                let shown = try await hub.hubctl.run("alerts", "show", "leak/kitchen leak/status")
                #expect(shown.standardOutput.contains("by Home Assistant via homeassistant"), "\(shown.standardOutput)")
                try await eventually("the state acknowledged") {
                    retained.json(stateTopic)?["state"] as? String == "acknowledged"
                }
                seen = try await validate(retained, state: (sensorTopic, stateTopic))
                entity = try #require(seen[sensorTopic]?.entity)
                #expect(entity["state"] as? String == "acknowledged")
                attributes = try #require(entity["attributes"] as? [String: Any])
                alerts = try #require(attributes["alerts"] as? [[String: Any]])
                #expect(attributes["firing"] as? Int == 0 && attributes["acknowledged"] as? Int == 1)
                #expect(alerts.first?["acknowledged_by"] as? String == "Home Assistant")
                #expect(alerts.first?["acknowledged_via"] as? String == "homeassistant")

                // Dry again: resolved, `ok`, no alert listed.
                try await publish(broker, "kitchen leak", "dry", retain: true)
                try await eventually("the state ok") { retained.json(stateTopic)?["state"] as? String == "ok" }
                seen = try await validate(retained, state: (sensorTopic, stateTopic))
                entity = try #require(seen[sensorTopic]?.entity)
                #expect(entity["state"] as? String == "ok")
                #expect(((entity["attributes"] as? [String: Any])?["alerts"] as? [Any])?.isEmpty == true)

                // A reload that makes `leak` a plain rule again removes both entities and empties the state.
                try Self.configuration(audit, alerting: false).write(
                    toFile: hub.configFile, atomically: true, encoding: .utf8)
                hub.child?.send(SIGHUP)
                try? await eventually("the entities removed") { alertTopics().isEmpty }
                #expect(alertTopics().isEmpty, "\(alertTopics())")
                #expect(retained.text(sensorTopic) == "" && retained.text(buttonTopic) == "")
                #expect(retained.text(stateTopic) == "")

                // Removed while hubd was not running: the next start finds the state it left and removes them.
                try Self.configuration(audit, alerting: true).write(
                    toFile: hub.configFile, atomically: true, encoding: .utf8)
                hub.child?.send(SIGHUP)
                try await eventually("the entities back") { alertTopics().count == 3 }
                #expect(await hub.stop() == 0)
                try Self.configuration(audit, alerting: false).write(
                    toFile: hub.configFile, atomically: true, encoding: .utf8)
                try await hub.startAndWaitUntilReady()
                try await eventually("the entities an earlier run left removed") { alertTopics().isEmpty }
                await hub.stop()

            }
        }
    }

    /// What Home Assistant's code says of each config (ha_validate.py --config), by topic; `state` gives the sensor
    /// config's topic and the state topic whose retained payload it is to show.
    private func validate(_ retained: HomeAssistantTests.Retained, state: (config: String, topic: String))
        async throws -> [String: (config: [String: Any]?, entity: [String: Any]?)]
    {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let python = root.appendingPathComponent(".build/ha-venv/bin/python").path
        guard FileManager.default.isExecutableFile(atPath: python) else {
            Issue.record("Home Assistant's venv is missing: run scripts/ha-venv (make test does)")
            return [:]
        }
        let stateText = retained.text(state.topic)
        let messages = retained.latest.withLock { latest in
            latest.filter { $0.key.hasPrefix("homeassistant/") && $0.key.hasSuffix("/config") && !$0.value.isEmpty }
                .map { topic, payload in
                    var message = ["topic": topic, "payload": String(decoding: payload, as: UTF8.self)]
                    if topic == state.config { message["state"] = stateText }
                    return message
                }
        }
        let input = String(decoding: try JSONSerialization.data(withJSONObject: messages), as: UTF8.self)
        let result = try await runProcess(
            python, [root.appendingPathComponent("Tests/HubToolsTests/ha_validate.py").path, "-", "--config"],
            input: input, environment: ProcessInfo.processInfo.environment)
        #expect(result.status == 0, "Home Assistant refused a config:\n\(result.standardOutput)\(result.standardError)")
        var seen: [String: (config: [String: Any]?, entity: [String: Any]?)] = [:]
        for line in result.standardOutput.split(separator: "\n") {
            guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let topic = object["topic"] as? String
            else { continue }
            seen[topic] = (object["config"] as? [String: Any], object["entity"] as? [String: Any])
        }
        #expect(seen.count == messages.count)
        return seen
    }
}
