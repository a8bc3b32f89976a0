import Foundation
import HubCore
import HubTestKit
import Logging
import Mosquitto
import SDS011Simulator
import Testing

/// The SDS011 end to end: a simulated sensor on a pseudo-terminal → hubd → its own MQTT topic → back into the
/// registry as a particulate sensor → air-quality alerts → history.
@Suite struct SDS011HubTests {
    @Test func readingsArePublishedEvaluatedAlertedAndKept() async throws {
        try await withBroker { broker in
            let link = FileManager.default.temporaryDirectory.appendingPathComponent("ttySDS-\(UUID().uuidString)").path
            let simulator = try SDS011Simulator(linkPath: link) {
                $0.pm25 = 10
                $0.pm10 = 20
            }
            defer { simulator.stop() }
            let audit = FileManager.default.temporaryDirectory.appendingPathComponent("air-\(UUID().uuidString).jsonl")
                .path
            defer { unlink(audit) }
            let hub = try RunningHub(
                configuration: """
                    sds011:
                      port: \(link)
                      interval: 1s
                      warm_up: 0s
                      samples: 1
                    air:
                      alert:
                        metric: pm25
                        threshold: 15
                        min_interval: 20m
                    notifiers:
                      backends:
                        audit: { type: file, path: \(audit) }
                      rules:
                        alerts: { events: [air_quality], statuses: [alert], backends: [audit], title: "{value}" }
                    """)
            try await hub.prepare(broker)
            try await withListener(broker, subscribing: "sensorhub/sds011/#") { messages in
                try await hub.startAndWaitUntilReady()

                // The reading on the hub's own topic, as JSON.
                let first = try await messages.next(within: .seconds(15), "a reading") {
                    $0.topic == "sensorhub/sds011/A160/state"
                }
                let json = try #require(try JSONSerialization.jsonObject(with: Data(first.payload)) as? [String: Any])
                #expect(
                    json["pm25"] as? Double == 10 && json["pm10"] as? Double == 20 && json["id"] as? String == "A160")
                #expect(Timestamp(iso8601: json["time"] as? String ?? "") != nil)

                // In the registry as a particulate sensor, its status the AQI category.
                try await eventually("the registry's air sensor") {
                    let sensor = try hub.sensor("air quality")
                    return sensor?.kind == .particulate && sensor?.status == "Moderate"
                        && sensor?.topic == "sensorhub/sds011/A160/state"
                }

                // Above the threshold, staying above, back below, above again within 20 minutes: one alert.
                simulator.update { $0.pm25 = 27.4 }
                try await eventually("the alert") { jsonLines(audit).count == 1 }
                for _ in 0..<3 { _ = try await messages.next(within: .seconds(10), "a reading") { _ in true } }
                simulator.update { $0.pm25 = 5 }
                try await hub.waitForLog("sensor event", "event=air_quality", "to=clear")
                simulator.update { $0.pm25 = 40 }
                for _ in 0..<3 { _ = try await messages.next(within: .seconds(10), "a reading") { _ in true } }
                try await eventually("status Unhealthy for Sensitive Groups") {
                    try hub.sensor("air quality")?.status == "Unhealthy for Sensitive Groups"
                }
                let alerts = jsonLines(audit)
                #expect(alerts.count == 1)
                #expect(
                    alerts.first?["title"] as? String
                        == "PM2.5 27.4 µg/m³ is above the WHO annual interim target 3 of 15")

                // A plain mosquitto_sub, arriving later, gets the retained reading.
                let sub = try await runProcess(
                    try requireExecutable("mosquitto_sub", package: "mosquitto-clients"),
                    [
                        "-h", broker.host, "-p", "\(broker.port)", "-t", "sensorhub/sds011/+/state", "-C", "1", "-W",
                        "10", "-v",
                    ])
                #expect(sub.standardOutput.hasPrefix("sensorhub/sds011/A160/state {\"pm25\":"))
                #expect(sub.standardOutput.contains("\"id\":\"A160\"}"))

                // Unplugged and plugged back in: reading resumes.
                simulator.unplug()
                try await hub.waitForLog("the SDS011 went away; reopening")
                try simulator.plugIn()
                try await hub.waitForLog("SDS011 ready")
                _ = try await messages.next(within: .seconds(15), "a reading after the replug") { _ in true }
            }
            // The history (written at least every second, and at shutdown), as the original monitor's CSV rows.
            await hub.stop()
            let csv = try await hub.hubctl.run("history", "air quality", "--csv")
            #expect(csv.status == 0)
            #expect(csv.standardOutput.contains("PM2.5,27.4,") && csv.standardOutput.contains("PM10,20.0,"))
            let events = try await hub.hubctl.run("events", "air quality", "--csv")
            #expect(events.standardOutput.contains(",air quality,air_quality,clear,alert,PM2.5 27.4 µg/m³ is above"))
            let status = try await hub.hubctl.run("history", "nonexistent")
            #expect(status.status == 64)
        }
    }
}

extension SDS011HubTests {
    /// A noisy line (a stray head, a frame cut short, a bad checksum before every real frame) loses no reading, and
    /// what was skipped is logged and counted (`hubctl status`; /metrics shows the same counts).
    @Test func lineNoiseIsSkippedCountedAndLogged() async throws {
        try await withBroker { broker in
            let link = FileManager.default.temporaryDirectory.appendingPathComponent("ttySDS-\(UUID().uuidString)").path
            let simulator = try SDS011Simulator(linkPath: link) {
                $0.garbage = true
                $0.pm25 = 12.3
                $0.pm10 = 45.6
            }
            defer { simulator.stop() }
            let hub = try RunningHub(
                configuration: "sds011: {port: \(link), interval: 1s, warm_up: 0s, samples: 1}\n")
            try await hub.prepare(broker)
            try await hub.startAndWaitUntilReady()
            let line = try await hub.waitForLog("the SDS011's line carried bytes that were not frames")
            #expect(line.contains("skipped_bytes="), "\(line)")
            try await hub.waitForLog("SDS011 reading", "pm25=12.3", "pm10=45.6")
            try await eventually("the status file counts the noise") {
                (hub.status?.counters.sds011?.badChecksums ?? 0) >= 1
                    && (hub.status?.counters.sds011?.discardedBytes ?? 0) > 10
            }
            let text = try await hub.hubctl.run("status")
            #expect(text.standardOutput.contains("SDS011 line:"), "\(text.standardOutput)")
            #expect(text.standardOutput.contains("frames with a bad checksum"), "\(text.standardOutput)")
            let json = try await hub.hubctl.run("status", "--json")
            let object = try #require(
                try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any])
            let counted = try #require(object["sds011"] as? [String: Any])
            #expect((counted["badChecksums"] as? Int ?? 0) >= 1)
            await hub.stop()
        }
    }

    /// With room in the interval, the sensor sleeps between readings: woken, queried, put back to sleep.
    @Test func sleepsBetweenReadings() async throws {
        try await withBroker { broker in
            let link = FileManager.default.temporaryDirectory.appendingPathComponent("ttySDS-\(UUID().uuidString)").path
            let simulator = try SDS011Simulator(linkPath: link)
            defer { simulator.stop() }
            let hub = try RunningHub(
                configuration: "sds011: {port: \(link), interval: 6s, warm_up: 0s, samples: 1}\n")
            try await hub.prepare(broker)
            try await hub.startAndWaitUntilReady()
            try await eventually("a reading, then sleep") {
                simulator.current.queries >= 1 && !simulator.current.working
            }
            let commands = simulator.current.commands
            // Query mode, work, firmware; then work, query, sleep for each reading.
            #expect(commands.prefix(3) == [2, 6, 7])
            #expect(Array(commands.suffix(3)) == [6, 4, 6])
            #expect(!simulator.current.active)
            await hub.stop()
        }
    }
}
