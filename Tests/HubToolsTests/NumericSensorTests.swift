import AsyncHTTPClient
import Foundation
import HubCore
import HubTestKit
import NIOCore
import Testing

/// A numeric sensor end to end (issue 17): a Zigbee2MQTT thermometer publishes JSON over a real broker → hubd takes
/// its temperature as the value and the rest as attributes → the API shows value, unit and attributes, the dashboard
/// the attributes and a chart → `hubctl history` prints the values in the registry's unit.
@Suite struct NumericSensorTests {
    static let topic = "zigbee2mqtt/living_room_climate"

    @Test func valuesReachTheAPIHistoryAndCharts() async throws {
        try await withBroker { broker in
            let hub = try RunningHub()
            try hub.writeRegistry(numeric: "living room", topic: Self.topic, value: "temperature", unit: "°C")
            try await hub.prepare(broker, sensors: ["front door"])
            let address = try await hub.startAndWaitForHTTP()
            let payloads = [
                #"{"temperature":21.5,"battery":90,"linkquality":98}"#,
                #"{"temperature":22.25,"battery":90,"linkquality":98}"#,
                #"{"temperature":23,"battery":90,"linkquality":120}"#,
            ]
            try await publish(broker, payloads.map { (Self.topic, Array($0.utf8)) })
            try await eventually("the last value in the registry") { try hub.sensor("living room")?.status == "23" }

            let sensor = try await object("http://\(address)/api/v1/sensors/living%20room")
            #expect(sensor["value"] as? Double == 23 && sensor["unit"] as? String == "°C")
            #expect(sensor["status"] as? String == "23" && sensor["kind"] as? String == "numeric")
            let attributes = try #require(sensor["attributes"] as? [String: Any])
            #expect(attributes["battery"] as? Int == 90 && attributes["linkquality"] as? Int == 120)
            #expect(attributes["temperature"] == nil)
            let listed = try await get("http://\(address)/api/v1/sensors").body
            let list = try #require(try JSONSerialization.jsonObject(with: Data(listed.utf8)) as? [[String: Any]])
            #expect(list.map { $0["name"] as? String } == ["front door", "living room"])
            // A status sensor has neither a value nor attributes.
            #expect(list[0]["value"] == nil && list[0]["unit"] == nil && list[0]["attributes"] == nil)
            // The page draws the cards from the list (value, unit, attributes: DashboardBrowserTests), and charts
            // the numeric sensor.
            #expect(list[1]["value"] as? Double == 23 && list[1]["unit"] as? String == "°C")
            let page = try await get("http://\(address)/").body
            #expect(page.contains(#"data-src="/dashboard/chart.json?sensor=living%20room""#), "\(page)")

            // hubd writes the history at least every second and when it stops.
            await hub.stop()
            let raw = try await hub.hubctl.run("history", "living room")
            #expect(raw.status == 0, "\(raw.standardError)")
            for value in ["21.5 °C", "22.25 °C", "23 °C"] {
                #expect(raw.standardOutput.contains(value), "\(raw.standardOutput)")
            }
            let daily = try await hub.hubctl.run("history", "living room", "--since", "2d", "--every", "day")
            #expect(daily.standardOutput.contains("VALUE MIN / MEAN / MAX"), "\(daily.standardOutput)")
            #expect(daily.standardOutput.contains("21.5 / 22.25 / 23 °C"), "\(daily.standardOutput)")
            let json = try await hub.hubctl.run("history", "living room", "--json")
            let answer = try #require(
                try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any])
            #expect(answer["unit"] as? String == "°C")
            #expect((answer["readings"] as? [[String: Any]])?.map { $0["value"] as? Double } == [21.5, 22.25, 23])
            let csv = try await hub.hubctl.run("history", "living room", "--csv")
            #expect(csv.standardOutput.hasPrefix("time,value,unit\n") && csv.standardOutput.contains(",22.25,°C\n"))
            let status = try await hub.hubctl.run("history", "front door")
            #expect(status.status == 64)
            #expect(
                status.standardError.contains("'front door' is a status sensor and has no readings"),
                "\(status.standardError)")

            // Started again: the chart draws the history's points; the value and attributes come back from the registry.
            let again = try await hub.startAndWaitForHTTP()
            let chart = try await get("http://\(again)/dashboard/chart.svg?sensor=living%20room&period=hour")
            #expect(chart.status == 200 && chart.body.contains("living room °C · last hour"))
            let points = try #require(chart.body.firstMatch(of: /<polyline class="series" points="([^"]*)"/)?.1)
            #expect(points.split(separator: " ").count == 3, "\(chart.body)")
            let day = try await get("http://\(again)/dashboard/chart.svg?sensor=living%20room&period=day")
            #expect(day.body.contains(#"<polyline class="series""#) && !day.body.contains("WHO"))
            let refused = try await get("http://\(again)/dashboard/chart.svg?sensor=front%20door")
            #expect(refused.status == 400 && refused.body.contains("'front door' is a status sensor"))
            let restarted = try await object("http://\(again)/api/v1/sensors/living%20room")
            #expect(restarted["value"] as? Double == 23)
            #expect((restarted["attributes"] as? [String: Any])?["linkquality"] as? Int == 120)
            await hub.stop()
        }
    }

    func get(_ url: String) async throws -> (status: UInt, body: String) {
        let response = try await HTTPClient.shared.execute(
            authorized(HTTPClientRequest(url: url)), timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 4 * 1024 * 1024)
        return (response.status.code, String(buffer: body))
    }

    func object(_ url: String) async throws -> [String: Any] {
        let answer = try await get(url)
        #expect(answer.status == 200, "\(url): \(answer.body)")
        return try #require(try JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any])
    }
}
