import Foundation
import HubTestKit
import Testing

/// The history commits a minute's rows at once (`history.commit_interval`, for an SD card's sake), so a reading hubd
/// has acknowledged to the broker waits in the journal, with the status it came with, until it is in the file:
/// SIGKILLed in between, the next hubd writes each such reading once (issue 55: nothing acknowledged is lost).
@Suite struct ReadingsJournalTests {
    static let topic = "zigbee2mqtt/cellar_climate"

    @Test func readingsAcknowledgedButNotCommittedOutliveAKill() async throws {
        try await withBroker { broker in
            let hub = try RunningHub()
            try hub.writeRegistry(numeric: "cellar", topic: Self.topic, value: "temperature", unit: "°C")
            try await hub.prepare(broker)
            try await hub.startAndWaitUntilReady()
            func send(_ values: ClosedRange<Int>) async throws {
                try await publish(
                    broker, values.map { (Self.topic, Array(#"{"temperature":\#($0).5,"battery":80}"#.utf8)) })
                try await eventually("hubd has \(values.upperBound).5") {
                    try hub.sensor("cellar")?.status == "\(values.upperBound).5"
                }
            }
            try await send(1...10)
            // hubctl asks hubd to commit what it holds: these rows are in the file, and hubd may not have told the
            // journal so durably yet, which then hands them over again.
            #expect(try await hub.hubctl.run("history", "cellar").standardOutput.contains("10.5 °C"))
            try await send(11...25)
            // The journal's put-off `fsync` (sensors.sync_delay, 10 s) has run: the broker has hubd's acknowledgements
            // and sends none of these again. The history's next commit is most of a minute away.
            try await Task.sleep(for: .seconds(12))
            #expect(await hub.stop(SIGKILL) != nil)

            try await hub.startAndWaitUntilReady()
            #expect(await hub.stop() == 0)
            let json = try await hub.hubctl.run("history", "cellar", "--json")
            let answer = try #require(
                try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any],
                "\(json.standardError)")
            let values = (answer["readings"] as? [[String: Any]] ?? []).compactMap { $0["value"] as? Double }
            #expect(values == (1...25).map { Double($0) + 0.5 }, "\(values)")
        }
    }
}
