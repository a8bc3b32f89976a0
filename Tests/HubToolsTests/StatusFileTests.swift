import Foundation
import HubCore
import HubTestKit
import Mosquitto
import Testing

/// `hubd.status.json`, what `hubctl status` reads, against the built hubd and a real broker.
@Suite(.timeLimit(.minutes(2)))
struct StatusFileTests {
    /// `hubctl status` follows a running hub within 5 s: the status file is written every 5 s (within a second of
    /// its counters moving, it was a home's SD card's third-largest writer: docs/performance.md, the write budget).
    @Test func statusCountersFollowTheHubWithinFiveSeconds() async throws {
        try await withBroker { broker in
            let hub = try RunningHub()
            try await hub.prepare(broker, sensors: ["kitchen"])
            try await hub.startAndWaitUntilReady()
            // Just after a status file was written, when the next is 5 s away.
            let written = hub.status?.updated
            try await eventually("a status file written", within: .seconds(10)) { hub.status?.updated != written }
            let counted = hub.status?.counters.messages ?? 0
            try await publish(broker, "kitchen", "open")
            let sent = ContinuousClock.now
            try await eventually("hubctl status counts the message", within: .seconds(7.5)) {
                hub.status?.counters.messages == counted + 1
            }
            let status = try await hub.hubctl.run("status")
            #expect(status.standardOutput.contains("\(counted + 1) received"), "\(status.standardOutput)")
            print("status file counted the message \(ContinuousClock.now - sent) after it was published")
            #expect(await hub.stop() == 0)
        }
    }

    /// Under systemd (`RuntimeDirectory=sensorhub`, a tmpfs) the status file is written there and linked from the
    /// state directory, so its heartbeat every 5 s never reaches an SD card; `hubctl status` reads it through the
    /// link, and the last one, at the stop, is in the state directory itself.
    @Test func underSystemdTheStatusFileIsInTheRuntimeDirectory() async throws {
        try await withBroker { broker in
            let hub = try RunningHub()
            let runtime = try TemporaryDirectory()
            try await hub.prepare(broker, sensors: ["kitchen"])
            try await hub.startAndWaitUntilReady(["RUNTIME_DIRECTORY": runtime.path])
            let path = hub.hubctl.state.file(AgentStatus.fileName)
            // The store writer links the file as it starts, which may come after hubd says it is online.
            try await eventually("the status file linked into the runtime directory") {
                (try? FileManager.default.destinationOfSymbolicLink(atPath: path)) == runtime.file(AgentStatus.fileName)
            }
            #expect(AgentStatus.read(from: runtime.path)?.isRunning == true)
            try await eventually("hubctl status: running and connected") {
                let running = try await hub.hubctl.run("status")
                return running.status == 0 && running.standardOutput.contains("running (pid")
            }

            #expect(await hub.stop() == 0)
            var info = stat()
            #expect(lstat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFREG, "the last status is a file of its own")
            let stopped = try await hub.hubctl.run("status")
            #expect(stopped.standardOutput.contains("last seen"), "\(stopped.standardOutput)")

            // A reboot after a power cut: the link is left, what it pointed at is gone.
            #expect(symlink(runtime.file("gone.json"), path + ".new") == 0 && rename(path + ".new", path) == 0)
            let rebooted = try await hub.hubctl.run("status")
            #expect(rebooted.status == 3, "\(rebooted.standardOutput)")
            #expect(rebooted.standardOutput.contains("the machine restarted since"), "\(rebooted.standardOutput)")
        }
    }
}
