import Foundation
import HubCore
import Testing

/// An alerting rule's entities, built with no broker: ids safe in topics, the state word, what the attributes list.
@Suite struct HomeAssistantAlertsTests {
    let discovery = HomeAssistantDiscovery(
        prefix: "homeassistant", hubAvailability: "sensorhub/availability", hubID: "sensor hub/1", version: "1.0",
        defaultSilence: nil)
    let time = Timestamp(millisecondsSince1970: 1_795_341_780_000)

    func alert(_ sensor: String, _ state: HomeAssistantDiscovery.OpenAlert.State, minutes: Int64 = 0)
        -> HomeAssistantDiscovery.OpenAlert
    {
        .init(
            id: "leak/\(sensor)/status", sensor: sensor, kind: "status", status: "wet", state: state,
            text: state.rawValue, opened: time.adding(milliseconds: minutes * 60_000),
            acknowledged: state == .acknowledged ? .init(by: "ana", via: "hubctl", at: time) : nil,
            heldBy: state == .held ? "bridge" : nil)
    }

    func object(_ bytes: [UInt8]) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
    }

    @Test func ruleIDsAreSafeInTopicsAndKeepRulesApart() {
        #expect(HomeAssistantDiscovery.ruleID("leak") == "leak")
        #expect(HomeAssistantDiscovery.ruleID("power-cut_2") == "power-cut_2")
        let spaced = HomeAssistantDiscovery.ruleID("a b")
        #expect(spaced.hasPrefix("a_b_") && spaced.count == 12 && spaced != HomeAssistantDiscovery.ruleID("a_b"))
        #expect(HomeAssistantDiscovery.ruleID("Küche/#") != HomeAssistantDiscovery.ruleID("Küche/+"))
        #expect(HomeAssistantDiscovery.ruleID("Küche/#").allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" })
        // Stable across runs: it is in unique ids.
        #expect(HomeAssistantDiscovery.ruleID("a b") == spaced)
    }

    @Test func aSensorAndAButtonOnTheHubsDevice() throws {
        let configs = discovery.alertConfigs(rule: "a b")
        let id = HomeAssistantDiscovery.ruleID("a b")
        #expect(configs.map(\.topic) == discovery.alertConfigTopics(ruleID: id))
        #expect(configs[0].topic == "homeassistant/sensor/sensorhub/sensor_hub_1_alerts_\(id)/config")
        let sensor = try object(configs[0].payload)
        #expect(sensor["name"] as? String == "Alerts: a b")
        #expect(sensor["state_topic"] as? String == "sensorhub/alerts/sensor_hub_1/\(id)/state")
        #expect((sensor["device"] as? [String: Any])?["identifiers"] as? [String] == ["sensorhub_hub_sensor_hub_1"])
        let button = try object(configs[1].payload)
        #expect(button["command_topic"] as? String == discovery.alertCommandTopic(ruleID: id))
        #expect(button["unique_id"] as? String != sensor["unique_id"] as? String)
        #expect(discovery.alertTopic(discovery.alertCommandTopic(ruleID: id))! == (id, true))
        #expect(discovery.alertTopic(discovery.alertStateTopic(ruleID: id))! == (id, false))
        #expect(discovery.alertTopic("sensorhub/alerts/sensor_hub_1/\(id)/other") == nil)
        #expect(discovery.alertTopic("sensorhub/alerts/other_hub/\(id)/state") == nil)
    }

    @Test func firingUnlessEveryFiringOneIsAcknowledgedAndHeldOnesDoNotCount() {
        #expect(HomeAssistantDiscovery.alertState(of: []) == "ok")
        #expect(HomeAssistantDiscovery.alertState(of: [alert("bath", .held)]) == "ok")
        #expect(
            HomeAssistantDiscovery.alertState(of: [alert("bath", .acknowledged), alert("k", .held)]) == "acknowledged")
        #expect(HomeAssistantDiscovery.alertState(of: [alert("bath", .acknowledged), alert("k", .firing)]) == "firing")
    }

    @Test func theAttributesListFiringFirstAndAtMostTwenty() throws {
        var alerts = (1...30).map { alert("s\($0)", .acknowledged, minutes: Int64($0)) }
        alerts.append(alert("late", .firing, minutes: 99))
        alerts.append(alert("child", .held))
        let state = try object(HomeAssistantDiscovery.alertStatePayload(rule: "leak", alerts: alerts))
        #expect(state["state"] as? String == "firing")
        let attributes = try #require(state["attributes"] as? [String: Any])
        #expect(attributes["firing"] as? Int == 1 && attributes["acknowledged"] as? Int == 30)
        #expect(attributes["held"] as? Int == 1 && attributes["more"] as? Int == 12)
        let listed = try #require(attributes["alerts"] as? [[String: Any]])
        #expect(listed.count == 20)
        #expect(listed.map { $0["sensor"] as? String }.prefix(3) == ["late", "s1", "s2"])
        #expect(listed[1]["acknowledged_by"] as? String == "ana" && listed[0]["acknowledged_by"] == nil)
        #expect(listed[0]["opened"] as? String == "2026-11-22T11:42:00.000Z")
    }
}
