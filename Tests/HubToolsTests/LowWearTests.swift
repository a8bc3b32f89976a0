import Foundation
import HubCore
import HubNotify
import HubTestKit
import Mosquitto
import Testing

/// `state.low_wear` (issue 55, for an SD card) against the built hubd and a real broker: the journal and the
/// registry's and the alert book's logs in the runtime directory (systemd's `RuntimeDirectory`, here a directory of
/// the test's), linked from the state directory; a crash loses nothing, a clean stop folds the logs onto the disk, a
/// power cut (the runtime directory emptied, as a reboot does) loses only what was in memory and never a person's
/// acknowledgement.
@Suite(.timeLimit(.minutes(3)))
struct LowWearTests {
    static let configuration = """
        state: { low_wear: true }
        notifiers:
          backends:
            audit: { type: file, path: audit.jsonl }
          rules:
            leak: { events: [changed], statuses: [wet], backends: [audit], group_by: [sensor], group_wait: 0s }
        """

    /// Everything a reboot empties.
    static func reboot(_ runtime: TemporaryDirectory) throws {
        for name in try FileManager.default.contentsOfDirectory(atPath: runtime.path) {
            try FileManager.default.removeItem(atPath: runtime.file(name))
        }
    }

    /// A hub in low wear with `sensors`, its runtime directory one of the test's, and the kitchen's leak told.
    static func leaking(
        _ broker: MosquittoBroker, sensors: [String]
    ) async throws -> (hub: RunningHub, runtime: TemporaryDirectory) {
        let hub = try RunningHub(configuration: configuration)
        let runtime = try TemporaryDirectory()
        try await hub.prepare(broker, sensors: sensors)
        try await hub.startAndWaitUntilReady(["RUNTIME_DIRECTORY": runtime.path])
        try await publish(broker, "kitchen leak", "wet", retain: true)
        try await eventually("the leak's message") { jsonLines(hub.hubctl.state.file("audit.jsonl")).count == 1 }
        return (hub, runtime)
    }

    static func isLink(_ path: String, to target: String) -> Bool {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: path)) == target
    }

    @Test func theLogsLiveInMemoryAndOutlastACrashAndACleanStop() async throws {
        try await withBroker { broker in
            let (hub, runtime) = try await Self.leaking(broker, sensors: ["kitchen leak", "hall"])
            let environment = ["RUNTIME_DIRECTORY": runtime.path]
            let state = hub.hubctl.state
            try await publish(broker, "hall", "21.5", retain: true)
            try await eventually("both statuses in the registry") {
                try hub.sensor("kitchen leak")?.status == "wet" && hub.sensor("hall")?.status == "21.5"
            }
            // In memory, where hubctl and the API still find them.
            #expect(!FileManager.default.fileExists(atPath: state.file("journal.jsonl")))
            #expect(FileManager.default.fileExists(atPath: runtime.file("journal.jsonl")))
            for name in [DefaultsStore.statusLogName, "alerts.changes"] {
                #expect(Self.isLink(state.file(name), to: runtime.file(name)), "\(name) is a link into memory")
            }
            let listed = try await hub.hubctl.run("sensors", "list")
            #expect(listed.standardOutput.contains("wet"), "\(listed.standardOutput)")

            // A crash keeps the runtime directory (the unit's RuntimeDirectoryPreserve=restart): nothing is lost.
            #expect(await hub.stop(SIGKILL) != nil)
            try await hub.startAndWaitUntilReady(environment)
            #expect(try hub.sensor("kitchen leak")?.status == "wet")
            #expect(try SavedAlerts(directory: state.path).book.alerts["leak/kitchen leak/status"]?.firing == true)
            try await publish(broker, "hall", "22.0", retain: true)
            try await publish(broker, "kitchen leak", "dry", retain: true)
            try await eventually("the hall's next status, and the leak over in the book's log") {
                try hub.sensor("hall")?.status == "22.0"
                    && hub.savedAlerts().book.alerts["leak/kitchen leak/status"]?.firing == false
            }

            // A clean stop folds the logs onto the disk before systemd empties the runtime directory.
            #expect(await hub.stop() == 0)
            try Self.reboot(runtime)
            #expect(try hub.sensor("hall")?.status == "22.0", "the registry's document holds the statuses")
            #expect(try SavedAlerts(directory: state.path).book.alerts["leak/kitchen leak/status"]?.firing == false)
            try await hub.startAndWaitUntilReady(environment)
            #expect(try hub.sensor("hall")?.status == "22.0")
            #expect(
                jsonLines(state.file("audit.jsonl")).filter { $0["reason"] as? String == "firing" }.count == 1,
                "the leak's message is not sent again")
            #expect(await hub.stop() == 0)

            // Low wear turned off: the logs are files in the state directory again, with what they held.
            try FileManager.default.removeItem(atPath: hub.configFile)
            try "".write(toFile: hub.configFile, atomically: true, encoding: .utf8)
            try await hub.startAndWaitUntilReady(environment)
            for name in [DefaultsStore.statusLogName, "alerts.changes"] {
                #expect(MemoryLogs.target(of: state.file(name)) == nil, "\(name) is no link")
            }
            #expect(try hub.sensor("hall")?.status == "22.0")
            #expect(await hub.stop() == 0)
        }
    }

    /// A power cut: the runtime directory is gone, and hubd starts from what the disk holds. A person's
    /// acknowledgement was written to the disk at once, so the cut does not undo it.
    @Test func aPowerCutLosesOnlyWhatWasInMemoryAndNeverAnAcknowledgement() async throws {
        try await withBroker { broker in
            let (hub, runtime) = try await Self.leaking(broker, sensors: ["kitchen leak"])
            let environment = ["RUNTIME_DIRECTORY": runtime.path]
            let state = hub.hubctl.state
            let ack = try await hub.hubctl.run("alerts", "ack", "kitchen leak", "--by", "ana")
            #expect(ack.status == 0, "\(ack.standardError)")
            try await eventually("the acknowledgement in the book's file itself") {
                (try? JSONSerialization.jsonObject(
                    with: Data(contentsOf: URL(fileURLWithPath: state.file("alerts.json")))))
                    .map { "\($0)".contains("ana") } ?? false
            }

            #expect(await hub.stop(SIGKILL) != nil)
            try Self.reboot(runtime)
            try await hub.startAndWaitUntilReady(environment)
            let book = try SavedAlerts(directory: state.path).book
            #expect(book.alerts["leak/kitchen leak/status"]?.acknowledged?.by == "ana")
            try await eventually("hubctl status: running and connected") {
                try await hub.hubctl.run("status").status == 0
            }
            // The broker sends the retained status again; hubd takes it as it would any.
            try await eventually("the leak's status") { try hub.sensor("kitchen leak")?.status == "wet" }
            #expect(await hub.stop() == 0)
        }
    }

    @Test func withoutARuntimeDirectoryHubdSaysWhatItNeeds() async throws {
        let hub = try RunningHub(configuration: Self.configuration)
        var environment = hub.environment
        environment.removeValue(forKey: "RUNTIME_DIRECTORY")
        let run = try await runProcess(hub.hubd, [], environment: environment)
        #expect(run.status != 0)
        let text = run.standardError
        #expect(text.contains("state.low_wear") && text.contains("RUNTIME_DIRECTORY"), "\(text)")
    }
}
