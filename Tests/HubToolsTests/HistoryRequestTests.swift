import Foundation
import HubHistory
import HubTestKit
import Testing

/// hubd commits the history every `history.commit_interval` (a minute by default, for an SD card's sake); `hubctl`
/// asks a running hubd to write what it holds before reading (`HistoryRequest`: SIGUSR1, answered in
/// `history.answered`), so it sees an event as soon as hubd has it.
@Suite struct HistoryRequestTests {
    @Test func hubctlSeesAnEventLongBeforeTheCommitInterval() async throws {
        try await withBroker { broker in
            let hub = try RunningHub()
            try await hub.prepare(broker, sensors: ["door"])
            try await hub.startAndWaitUntilReady()
            let answered = hub.hubctl.state.file(HistoryRequest.fileName)
            let pid = try #require(hub.child?.pid)
            try await eventually("hubd says it answers") {
                (try? String(contentsOfFile: answered, encoding: .utf8)) == "\(pid) 0\n"
            }
            try await publish(broker, "door", "open", retain: true)
            try await hub.waitForLog("sensor event", "sensor=door", "to=open")
            let asked = ContinuousClock.now
            // Within seconds, where the commit interval is a minute: the journal's put-off `fsync` (5 s) at most.
            try await eventually("hubctl events shows it", within: .seconds(10)) {
                try await hub.hubctl.run("events", "door").standardOutput.contains("open")
            }
            #expect(ContinuousClock.now - asked < .seconds(30))
            let count = try String(contentsOfFile: answered, encoding: .utf8).split(separator: " ").last
            #expect(count.flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) } ?? 0 >= 1)
            #expect(await hub.stop() == 0)
        }
    }
}
