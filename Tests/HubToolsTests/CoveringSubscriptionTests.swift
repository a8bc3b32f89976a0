import AsyncHTTPClient
import Foundation
import HubCore
import HubTestKit
import Mosquitto
import Testing

/// `sensors.subscribe: covering` (issue 38): the hub holds the few filters that cover its sensors' topics, not one
/// subscription each, and still behaves as if it held each: retained statuses at start, a sensor added while it runs
/// gets its retained status, each message is taken once, and what the filter brings on other topics is counted,
/// never an event.
@Suite(.timeLimit(.minutes(2)))
struct CoveringSubscriptionTests {
    @Test func oneFilterServesEverySensorOnce() async throws {
        try await withBroker { broker in
            let hub = try RunningHub(configuration: HubdTests.fastFlush + "sensors:\n  subscribe: covering\n")
            try await hub.prepare(broker, sensors: ["kitchen", "hall"])
            // Retained, as firmware publishes: two sensors' statuses and a device that is not a sensor.
            try await publish(broker, "kitchen", "open", retain: true)
            try await publish(broker, "hall", "closed", retain: true)
            try await publish(broker, "boiler", "on", retain: true)
            let address = try await hub.startAndWaitForHTTP()
            // The default template puts each sensor on a topic of one level: one filter covers both.
            try await hub.waitForLog("subscribing through covering filters", "topics=2", "filters=1")
            try await eventually("both retained statuses") {
                try hub.sensor("kitchen")?.status == "open" && hub.sensor("hall")?.status == "closed"
            }
            try await eventually("the other device's message counted") {
                try await Self.metric(address, #"sensorhub_rejected_messages_total{reason="not_a_sensor"}"#) >= 1
            }

            // The second pass (a quiet second after connecting) sends the retained statuses again: after it, the
            // count below is only the live messages.
            try await hub.waitForLog("subscribed again for the newest retained statuses", "filters=1")
            // Added while running: its retained status comes through a subscription of its own, dropped after.
            try await publish(broker, "cellar", "dry", retain: true)
            #expect(try await hub.hubctl.run("sensors", "add", "cellar").status == 0)
            try await eventually("the cellar's retained status") { try hub.sensor("cellar")?.status == "dry" }
            try await hub.waitForLog("followed the registry", "subscribed=1")

            // Each live message once. (This does not show that the cellar's own subscription was dropped: Mosquitto
            // 2.0 sends an MQTT 3.1.1 client one copy whatever its subscriptions overlap on; MQTT 5 would send two.)
            let before = try await Self.metric(address, "sensorhub_messages_total")
            try await publish(broker, [("cellar", Array("wet".utf8)), ("kitchen", Array("closed".utf8))])
            try await eventually("the kitchen closed") { try hub.sensor("kitchen")?.status == "closed" }
            #expect(try await Self.metric(address, "sensorhub_messages_total") == before + 2)
            #expect(try hub.sensor("cellar")?.status == "wet")
            #expect(try hub.sensor("boiler") == nil)
            await hub.stop()
        }
    }

    /// A value from hubd's `/metrics` (0 when it has none).
    static func metric(_ address: String, _ name: String) async throws -> Double {
        let response = try await HTTPClient.shared.execute(
            authorized(HTTPClientRequest(url: "http://\(address)/metrics")), timeout: .seconds(10))
        let body = String(buffer: try await response.body.collect(upTo: 4 * 1024 * 1024))
        let line = body.split(separator: "\n").first { $0.hasPrefix(name + " ") }
        return line.flatMap { Double($0.split(separator: " ").last ?? "") } ?? 0
    }
}
