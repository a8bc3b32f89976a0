import Foundation
import HubCore
import HubTestKit
import Mosquitto
import Testing

/// hubd's `discovery:` (issue 17, item 6): a device that appears while hubd runs becomes a sensor the hub follows,
/// logged and announced to the notifiers; never more than `max_auto_sensors`, across restarts too.
@Suite(.timeLimit(.minutes(2)))
struct DiscoveryHubTests {
    typealias F = DeviceFixtures

    /// Zigbee2MQTT's device list with only the devices named (and the coordinator).
    static func bridgeList(_ names: Set<String>) throws -> String {
        let list = try #require(
            try JSONSerialization.jsonObject(with: Data(F.zigbee2mqttBridgeDevices.utf8)) as? [[String: Any]])
        let kept = list.filter {
            names.contains($0["friendly_name"] as? String ?? "") || $0["type"] as? String == "Coordinator"
        }
        return String(decoding: try JSONSerialization.data(withJSONObject: kept), as: UTF8.self)
    }

    @Test func aZigbee2MQTTDeviceThatJoinsBecomesASensorLoggedAndAnnounced() async throws {
        try await withBroker { broker in
            let directory = try TemporaryDirectory(prefix: "audit")
            let audit = directory.file("events.jsonl")
            let hub = try RunningHub(
                configuration: """
                    store: {flush_interval: 100ms}
                    discovery: {enabled: true, families: [zigbee2mqtt]}
                    notifiers: {backends: {audit: {type: file, path: \(audit)}}, rules: {every: {backends: [audit]}}}
                    """)
            try await hub.prepare(broker, sensors: ["kitchen"])
            try await publish(
                broker, F.zigbee2mqttBridgeDevicesTopic, try Self.bridgeList(["hallway_motion"]), retain: true)
            // The retained list comes with the subscriptions, before hubd says it is ready: in either order.
            try hub.start()
            try await hub.waitForLogs([
                "discovered a device family=zigbee2mqtt device=hallway_motion sensor=hallway_motion"
                    + " topic=zigbee2mqtt/hallway_motion value=occupancy",
                "published availability status=online",
            ])
            // The door joins: Zigbee2MQTT publishes its list again.
            try await publish(
                broker, F.zigbee2mqttBridgeDevicesTopic, try Self.bridgeList(["hallway_motion", "garden/shed door"]),
                retain: true)
            try await hub.waitForLog("discovered a device", "device=garden/shed door", "sensor=garden shed door")
            let door = try #require(try hub.sensor("garden shed door"))
            #expect(door.topic == F.zigbee2mqttContactTopic && door.format.map?.description == "true=closed,false=open")
            #expect(door.availability == F.zigbee2mqttContactAvailabilityTopic)
            #expect(door.silenceTimeout == DeviceFamily.batterySilence && door.sequence >= 1)
            // The notifiers get it as a `discovered` event.
            try await eventually("the audit file has the discovered event") {
                jsonLines(audit).contains {
                    $0["event"] as? String == "discovered" && $0["sensor"] as? String == "garden shed door"
                }
            }
            let line = try #require(jsonLines(audit).first { $0["sensor"] as? String == "garden shed door" })
            #expect(line["title"] as? String == "New sensor: garden shed door")
            #expect(
                (line["message"] as? String)?.hasPrefix(
                    "Discovered Zigbee2MQTT device 'garden/shed door' (Aqara MCCGQ11LM") == true)
            #expect(line["id"] as? String == "\(door.id)-1")
            // The hub follows the new sensor like any other, its events numbered on from the announcement. Retained, as
            // firmware publishes: the subscription to the new topic may still be on its way (a full run missed it).
            try await publish(broker, F.zigbee2mqttContactTopic, F.zigbee2mqttContactOpen, retain: true)
            try await hub.waitForLog("sensor event", "sensor=garden shed door", "to=open", "id=\(door.id)-2")
            // A plain sensor's topic and the bridge's own are no devices; nothing else was added.
            try await publish(broker, "kitchen", "open")
            try await hub.waitForLog("sensor event", "sensor=kitchen", "to=open")
            #expect(
                try hub.registry().sensors.map(\.name).sorted() == ["garden shed door", "hallway_motion", "kitchen"])
            try await eventually("the status file counts 2 added") { hub.status?.counters.discovery?.added == 2 }
            #expect(hub.status?.counters.rejected.isEmpty == true, "the device lists are discovery's, not rejections")
            #expect(await hub.stop() == 0)
        }
    }

    @Test func itAddsNoMoreThanMaxAutoSensorsEverAndNotOneTheUserRemoved() async throws {
        try await withBroker { broker in
            let hub = try RunningHub(
                configuration: """
                    discovery:
                      enabled: true
                      families: [esphome]
                      max_auto_sensors: 2
                    """)
            try await hub.prepare(broker)
            try await hub.startAndWaitUntilReady()
            let devices = ["porch", "attic", "garage"].map {
                ("\($0)/sensor/\($0)_temperature/state", Array("20.5".utf8))
            }
            try await publish(broker, devices, retain: true)
            try await hub.waitForLog(
                "discovery reached max_auto_sensors", "max_auto_sensors=2", "device=garage/sensor/garage_temperature")
            // Devices are added one after the other: at the limit's notice both others are in.
            #expect(try hub.registry().sensors.map(\.name) == ["porch_temperature", "attic_temperature"])
            try await eventually("the status file counts one over the limit") {
                hub.status?.counters.discovery == AgentStatus.DiscoveryCounters(added: 2, overLimit: 1)
            }
            #expect(await hub.stop() == 0)

            // The user removes one: after a restart the limit still counts it, and it is not added back.
            let removed = try await hub.hubctl.run("sensors", "remove", "porch_temperature")
            #expect(removed.status == 0, "\(removed.standardError)")
            try "discovery: {enabled: true, families: [esphome], max_auto_sensors: 3}\n".write(
                toFile: hub.configFile, atomically: true, encoding: .utf8)
            // The retained states come back in any order, around hubd's ready: the garage's is added, the porch's not.
            try hub.start()
            try await hub.waitForLogs([
                "discovered a device sensor=garage_temperature", "is not added again topic=porch/",
                "published availability status=online",
            ])
            #expect(try hub.registry().sensors.map(\.name) == ["attic_temperature", "garage_temperature"])
            #expect(await hub.stop() == 0)
        }
    }
}

extension RunningHub {
    /// Waits for log lines matching each of `expected` ("message key=value …": the message and every pair), in
    /// any order.
    func waitForLogs(_ expected: [String], within timeout: Duration = .seconds(15)) async throws {
        @Sendable func matches(_ line: String, _ expected: String) -> Bool {
            let parts = expected.split(separator: " ")
            let message = parts.prefix { !$0.contains("=") }.joined(separator: " ")
            return line.contains(message) && parts.filter { $0.contains("=") }.allSatisfy { line.contains($0) }
        }
        var waiting = expected
        while !waiting.isEmpty {
            let wanted = waiting
            let line = try await log.next(within: timeout, "log lines \(wanted)") { line in
                wanted.contains { matches(line, $0) }
            }
            waiting.removeAll { matches(line, $0) }
        }
    }
}

extension AgentStatus.DiscoveryCounters {
    init(added: Int, overLimit: Int) {
        self.init()
        self.added = added
        self.overLimit = overLimit
    }
}
