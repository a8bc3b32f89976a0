import Foundation
import HubCore
import HubTestKit
import Testing

/// The state directory is one hubd's, and nobody else's to read (issue 51).
@Suite(.timeLimit(.minutes(2)))
struct StateDirectoryTests {
    /// Before: a second hubd on the same directory started without a word, replayed the same journal, and the two
    /// knocked each other off the broker (one client id) 42 times in 10 s; the one that exited published `offline`
    /// while the other still ran. Now the second stops at once, naming the first's pid, and changes nothing.
    @Test func aSecondHubdOnTheSameStateDirectoryStopsAtOnce() async throws {
        try await withBroker { broker in
            let hub = try RunningHub()
            try await hub.prepare(broker, sensors: ["door"])
            try await hub.startAndWaitUntilReady()
            let first = try #require(hub.child?.pid)

            let errors = hub.hubctl.state.file("second.err")
            FileManager.default.createFile(atPath: errors, contents: nil)
            let handle = try #require(FileHandle(forWritingAtPath: errors))
            let second = try ChildProcess(
                hub.hubd, ["--log-level", "debug"], environment: hub.environment,
                standardError: handle.fileDescriptor)
            try handle.close()
            let status = await second.wait(timeout: .seconds(10))
            if status == nil { second.send(SIGKILL) }
            #expect(status == 75, "the second hubd exits with EX_TEMPFAIL")
            let said = try String(contentsOfFile: errors, encoding: .utf8)
            #expect(said.contains("another hubd (pid \(first)) is running on the state directory"), "\(said)")
            #expect(!said.contains("connected"), "the second hubd never reached the broker: \(said)")

            // The first never noticed: still connected, still online, still the hub hubctl sees.
            let sub = try requireExecutable("mosquitto_sub", package: "mosquitto-clients")
            let availability = try await runProcess(
                sub, ["-h", broker.host, "-p", "\(broker.port)", "-t", "sensorhub/availability", "-C", "1", "-W", "5"])
            #expect(availability.standardOutput == "online\n")
            #expect(hub.status?.pid == first)
            // hubctl works beside it (it never takes hubd's lock).
            #expect(try await hub.hubctl.run("sensors", "add", "window").status == 0)
            try await eventually("hubd follows the new sensor") { hub.status?.sensors == 2 }
            let lines = await (try hub.log).drain()
            #expect(!lines.contains { $0.contains("disconnected") || $0.contains("reconnect") }, "\(lines)")
            #expect(await hub.stop() == 0)
            // Once the first is gone the lock is free.
            try await hub.startAndWaitUntilReady()
            #expect(await hub.stop() == 0)
        }
    }

    /// Before: history.sqlite* and hubd.status.json were 0644 when hubd ran by hand under umask 0022 (only the
    /// unit's UMask=0077 saved them). Now whatever hubd writes is 0600 and its folders 0700, whatever the umask,
    /// and what an older hubd left readable is made so too.
    @Test func whatHubdWritesIsItsUsersAlone() async throws {
        try await withBroker { broker in
            let hub = try RunningHub()
            try await hub.prepare(broker, sensors: ["door"])
            let state = hub.hubctl.state.path
            // As an older hubd left them.
            FileManager.default.createFile(atPath: state + "/hubd.status.json", contents: Data("{}".utf8))
            chmod(state + "/hubd.status.json", 0o644)
            chmod(state + "/defaults.json", 0o644)
            chmod(state, 0o755)
            try hub.start(umask: "022")
            try await hub.waitForLog("published availability", "status=online")
            try await publish(broker, [("door", Array("open".utf8))], retain: true)
            try await eventually("the event in the history") {
                let events = try await hub.hubctl.run("events", "--since", "1h")
                return events.standardOutput.contains("open")
            }
            try await eventually("the status file written") { hub.status?.pid == hub.child?.pid }
            var open: [String] = []
            func visit(_ directory: String) {
                for name in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] {
                    let path = directory + "/" + name
                    var status = stat()
                    guard lstat(path, &status) == 0 else { continue }
                    let kind = status.st_mode & S_IFMT
                    if kind == S_IFDIR {
                        if status.st_mode & 0o777 != 0o700 {
                            open.append("\(path) \(String(status.st_mode & 0o777, radix: 8))")
                        }
                        visit(path)
                    } else if kind == S_IFREG, !name.hasSuffix(".yaml"), status.st_mode & 0o077 != 0 {
                        open.append("\(path) \(String(status.st_mode & 0o777, radix: 8))")
                    }
                }
            }
            var status = stat()
            #expect(stat(state, &status) == 0 && status.st_mode & 0o777 == 0o700)
            visit(state)
            #expect(open.isEmpty, "readable by others: \(open)")
            let names = try FileManager.default.contentsOfDirectory(atPath: state)
            #expect(names.contains("history.sqlite") && names.contains("hubd.status.json"), "\(names)")
            #expect(await hub.stop() == 0)
        }
    }
}

/// `hubctl reload` (issue 52): hubd reads its configuration again, as `systemctl reload hubd` has it do.
@Suite(.timeLimit(.minutes(2)))
struct HubctlReloadTests {
    @Test func reloadAsksTheRunningHubdAndSaysWhenNoneRuns() async throws {
        try await withBroker { broker in
            let hub = try RunningHub()
            try await hub.prepare(broker, sensors: ["door"])
            let none = try await hub.hubctl.run("reload")
            #expect(none.status == 3 && none.standardError.contains("no hubd is running on the state directory"))
            try await hub.startAndWaitUntilReady()
            let pid = try #require(hub.child?.pid)
            let asked = try await hub.hubctl.run("reload")
            #expect(asked.status == 0 && asked.standardOutput.contains("Asked hubd (pid \(pid))"), "\(asked.standardError)")
            try await hub.waitForLog("configuration reloaded")
            #expect(await hub.stop() == 0)
        }
    }
}
