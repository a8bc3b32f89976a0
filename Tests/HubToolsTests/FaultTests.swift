import Foundation
import HubCore
import HubTestKit
import Logging
import Mosquitto
import Testing

/// Faults, quick versions (`make chaos` runs them at CHAOS_SCALE=10: ten times the messages and longer outages).
@Suite struct FaultTests {
    static var scale: Int { Int(ProcessInfo.processInfo.environment["CHAOS_SCALE"] ?? "") ?? 1 }

    /// The broker stopped and started again while statuses pour in: every status a QoS 1 PUBACK confirmed
    /// reaches hubd (each is a change, so each is an event in the history), and the registry ends on the last.
    @Test func brokerRestartUnderLoadLosesNoQoS1Status() async throws {
        // Unlimited queues, as the README advises: at CHAOS_SCALE=10 the broker is down 10 s and hubd's back-off
        // brings it back up to 9 s after the broker, meanwhile the publisher's 10,000 statuses pour in, and a default
        // queue of 1000 drops the rest (by the broker's design, not hubd's doing).
        try await withBroker(.init(persistence: true, extraLines: ["max_queued_messages 0"])) { broker in
            let sensors = (0..<50).map { "s\($0)" }
            let hub = try RunningHub()
            try await hub.prepare(broker, sensors: sensors)
            try await hub.startAndWaitUntilReady()
            let client = try await publisher(broker, id: "load-\(UUID().uuidString.prefix(8))")
            let total = 1000 * Self.scale
            let restart = Task {
                try await Task.sleep(for: .milliseconds(300))
                await broker.stop()
                try await Task.sleep(for: .seconds(Self.scale))
                try await broker.start()
            }
            for index in 0..<total {
                let sensor = sensors[index % sensors.count]
                try await client.publish(topic: sensor, payload: "v\(index / sensors.count)", qos: .atLeastOnce)
            }
            try await restart.value
            await client.disconnect()
            let last = "v\((total - 1) / sensors.count)"
            try await eventually("every sensor at \(last)", within: .seconds(30)) {
                try hub.registry().sensors.allSatisfy { $0.status == last }
            }
            await hub.stop()
            // The second subscribe pass waits for a connection: none is tried while the broker is down.
            let lines = try await hub.log.end()
            #expect(
                !lines.contains { $0.contains("could not subscribe") }, "\(lines.filter { $0.contains("could not") })")
            let events = try await hub.hubctl.run("events", "--since", "1h", "--csv")
            // Each acknowledged status must be in the history. Counting events would not do: QoS 1 is at least once,
            // and the restarted broker sends again what it had not seen acknowledged, as changes of their own.
            let pairs = Set(
                events.standardOutput.split(separator: "\n").dropFirst().map { line in
                    let fields = line.split(separator: ",", omittingEmptySubsequences: false)
                    return "\(fields[1])=\(fields[4])"
                })
            let missing = (0..<total).map { "\(sensors[$0 % sensors.count])=v\($0 / sensors.count)" }.filter {
                !pairs.contains($0)
            }
            #expect(
                missing.isEmpty,
                "\(missing.count) of \(total) acknowledged statuses never reached hubd: \(missing.prefix(5))")
            #expect(broker.log.contains("Saving in-memory database"))
        }
    }

    /// hubd SIGKILLed while statuses pour in, and started again: the registry is valid, every sensor is there, and
    /// it catches up with the last statuses (queued for its session, and retained).
    @Test func hubdKilledUnderLoadKeepsAValidStoreAndCatchesUp() async throws {
        // Mosquitto keeps at most max_queued_messages (1000) for an absent client, and once that backlog is full it
        // drops even the retained statuses a returning client subscribes to: the broker must be allowed to hold
        // what arrives while hubd is away (README: "Never loses a status").
        var options = MosquittoBroker.Options()
        options.extraLines = ["max_queued_messages 0"]
        try await withBroker(options) { broker in
            let sensors = (0..<100).map { "k\($0)" }
            let hub = try RunningHub()
            try await hub.prepare(broker, sensors: sensors)
            try await hub.startAndWaitUntilReady()
            let client = try await publisher(broker, id: "kill-\(UUID().uuidString.prefix(8))")
            let total = 2000 * Self.scale
            for index in 0..<total {
                if index == total / 2 { #expect(await hub.stop(SIGKILL) == 128 + SIGKILL) }
                let sensor = sensors[index % sensors.count]
                // Retained, as firmware should: the retained status is what a returning hub gets on subscribing.
                try await client.publish(
                    topic: sensor, payload: "v\(index / sensors.count)", qos: .atLeastOnce, retain: true)
            }
            await client.disconnect()
            let document = try hub.registry()  // parses: never half-written
            #expect(document.sensors.map(\.name).sorted() == sensors.sorted())
            try await hub.startAndWaitUntilReady()
            let last = "v\((total - 1) / sensors.count)"
            try await eventually("every sensor at \(last)", within: .seconds(30)) {
                try hub.registry().sensors.allSatisfy { $0.status == last }
            }
            await hub.stop()
        }
    }

    /// The state directory's disk fills up: hubctl says so and changes nothing, hubd keeps running with the
    /// previous registry intact, and writes what it held once there is room again.
    @Test func fullDiskKeepsThePreviousStore() async throws {
        try await withBroker { broker in
            let hub = try RunningHub()
            let state = hub.hubctl.state.path
            let mounted = try await runProcess("/bin/mount", ["-t", "tmpfs", "-o", "size=256k", "tmpfs", state])
            try #require(mounted.status == 0, "a tmpfs for the full disk needs root: \(mounted.standardError)")
            defer { _ = try? runProcessBlocking("/bin/umount", ["-l", state]) }
            try "".write(toFile: hub.configFile, atomically: true, encoding: .utf8)  // the mount hid it
            try await hub.prepare(broker, sensors: ["door"])
            try await hub.startAndWaitUntilReady()
            try await publish(broker, [("door", Array("closed".utf8))])
            try await eventually("closed stored") { try hub.sensor("door")?.status == "closed" }

            // Fill the disk.
            let filler = state + "/filler"
            FileManager.default.createFile(atPath: filler, contents: nil)
            let handle = try #require(FileHandle(forWritingAtPath: filler))
            let block = Data(repeating: 0, count: 4096)
            while (try? handle.write(contentsOf: block)) != nil {}
            try handle.close()
            let before = try Data(contentsOf: URL(fileURLWithPath: state + "/defaults.json"))

            let add = try await hub.hubctl.run("sensors", "add", "window")
            #expect(add.status == 74)
            #expect(
                add.standardError.contains("No space left on device — the registry was not changed; free some space"))
            try await publish(broker, [("door", Array("open".utf8))])
            try await hub.waitForLog("could not write statuses to the registry", "No space left on device")
            #expect(try Data(contentsOf: URL(fileURLWithPath: state + "/defaults.json")) == before)
            #expect(try hub.sensor("door")?.status == "closed")

            unlink(filler)
            try await eventually("open stored once there is room") { try hub.sensor("door")?.status == "open" }
            #expect(try await hub.hubctl.run("sensors", "add", "window").status == 0)
            await hub.stop()
        }
    }
}
