import Foundation
import HubCore
import HubTestKit
import Testing

/// `hubctl sensors` and `hubctl broker` run as processes against real files: exact output, exit codes, and the
/// store surviving concurrent writers and writers killed mid-write.
@Suite(.timeLimit(.minutes(2)))
struct HubctlSensorsTests {
    let hubctl: Hubctl

    init() throws {
        hubctl = try Hubctl()
    }

    /// A store with fixed times, so that relative times in the output are known.
    private func writeStore(_ sensors: [String]) throws {
        let document = """
            {
              "schemaVersion": 1,
              "broker": {"host": "localhost", "port": 1883, "clientId": "sensorhub"},
              "sensors": [
            \(sensors.map { "    " + $0 }.joined(separator: ",\n"))
              ]
            }

            """
        try document.write(toFile: hubctl.storePath, atomically: true, encoding: .utf8)
    }

    private func storeText() throws -> String { try String(contentsOfFile: hubctl.storePath, encoding: .utf8) }

    @Test func addListShowRenameRemove() async throws {
        let added = try await hubctl.run("sensors", "add", "kitchen")
        #expect(added.status == 0)
        #expect(
            added.standardOutput == "Added 'kitchen' on topic 'kitchen'. It shows Waiting until its first message.\n")
        let door = try await hubctl.run("sensors", "add", "front door", "--topic", "home/front-door/status")
        #expect(
            door.standardOutput
                == "Added 'front door' on topic 'home/front-door/status'. It shows Waiting until its first message.\n")
        let garage = try await hubctl.run("sensors", "add", "Garage", "--topic-template", "home/{name}/status")
        #expect(
            garage.standardOutput
                == "Added 'Garage' on topic 'home/Garage/status'. It shows Waiting until its first message.\n")

        let list = try await hubctl.run("sensors", "list")
        #expect(
            list.standardOutput == """
                NAME        STATUS   LAST UPDATED  TOPIC
                front door  Waiting  never         home/front-door/status
                Garage      Waiting  never         home/Garage/status
                kitchen     Waiting  never         kitchen

                """)

        let renamed = try await hubctl.run("sensors", "rename", "KITCHEN", "kitchen window")
        #expect(renamed.standardOutput == "Renamed 'kitchen' to 'kitchen window'; its topic stays 'kitchen'.\n")
        let retopic = try await hubctl.run("sensors", "rename", "garage", "shed", "--retopic")
        #expect(retopic.standardOutput == "Renamed 'Garage' to 'shed'; its topic is now 'shed'.\n")
        let removed = try await hubctl.run("sensors", "remove", "FRONT DOOR")
        #expect(removed.standardOutput == "Removed 'front door' (topic 'home/front-door/status').\n")
        let names = try DefaultsStore(directory: hubctl.state.path).read().sensors.map(\.name)
        #expect(names == ["kitchen window", "shed"])
    }

    @Test func listAndShowWithTimes() async throws {
        try writeStore([
            #"{"name": "kitchen", "topic": "kitchen", "status": "open", "lastUpdated": "2026-11-22T10:00:00.000Z", "added": "2026-11-01T08:00:00.000Z", "kind": "status"}"#,
            #"{"id": "f8e916479db8", "name": "air", "topic": "sensorhub/sds011/a160/state", "status": "Good", "lastUpdated": "2026-11-22T09:57:30.000Z", "added": "2026-11-20T08:00:00.000Z", "kind": "particulate", "silenceTimeout": 900, "sequence": 0}"#,
            #"{"name": "Bedroom", "topic": "bedroom", "status": "Waiting", "added": "2026-11-22T10:02:58.000Z", "kind": "status"}"#,
        ])
        let now = "2026-11-22T10:03:00Z"
        let list = try await hubctl.run("sensors", "list", "--now", now)
        #expect(
            list.standardOutput == """
                NAME     STATUS   LAST UPDATED                     TOPIC
                air      Good     5 min ago (2026-11-22 09:57:30)  sensorhub/sds011/a160/state
                Bedroom  Waiting  never                            bedroom
                kitchen  open     3 min ago (2026-11-22 10:00:00)  kitchen

                """)
        let show = try await hubctl.run("sensors", "show", "AIR", "--now", now)
        #expect(
            show.standardOutput == """
                Name:          air
                Id:            f8e916479db8
                Topic:         sensorhub/sds011/a160/state
                Status:        Good
                Last updated:  5 min ago (2026-11-22 09:57:30)
                Added:         2026-11-20 08:00:00 (2 days ago)
                Kind:          particulate
                Offline after: 15m

                """)
        let json = try await hubctl.run("sensors", "show", "air", "--json")
        #expect(
            json.standardOutput == """
                {"id": "f8e916479db8", "name": "air", "topic": "sensorhub/sds011/a160/state", "status": "Good", "lastUpdated": "2026-11-22T09:57:30.000Z", "added": "2026-11-20T08:00:00.000Z", "kind": "particulate", "silenceTimeout": 900, "sequence": 0, "attributes": {}}

                """)
        let all = try await hubctl.run("sensors", "list", "--json")
        let parsed = try JSONSerialization.jsonObject(with: Data(all.standardOutput.utf8)) as? [[String: Any]]
        #expect(parsed?.map { $0["name"] as? String } == ["kitchen", "air", "Bedroom"])
        #expect(parsed?[2]["lastUpdated"] is NSNull)
    }

    @Test func anEmptyRegistrySaysHowToStart() async throws {
        let list = try await hubctl.run("sensors", "list")
        #expect(list.standardOutput == "No sensors yet. Add one with: hubctl sensors add NAME\n")
        #expect(try await hubctl.run("sensors", "list", "--json").standardOutput == "[]\n")
        #expect(!FileManager.default.fileExists(atPath: hubctl.storePath))
    }

    @Test func invalidInputExits64WithAMessageThatSaysWhatToDo() async throws {
        _ = try await hubctl.run("sensors", "add", "Kitchen")
        let cases: [([String], String)] = [
            (
                ["sensors", "add", "kitchen"],
                "hubctl: a sensor named 'Kitchen' already exists — names are case-insensitive\n"
            ),
            (
                ["sensors", "add", "a/b"],
                "hubctl: 'a/b' is not a valid sensor name: '/' separates MQTT topic levels and can't be part of a name\n"
            ),
            (
                ["sensors", "add", String(repeating: "x", count: 65)],
                "hubctl: '\(String(repeating: "x", count: 65))' is not a valid sensor name: it is 65 characters long; names have at most 64\n"
            ),
            (
                ["sensors", "add", "pantry", "--topic", "Kitchen"],
                "hubctl: sensor 'Kitchen' already uses the topic 'Kitchen'; two sensors can't share a topic (give this one another with --topic)\n"
            ),
            (
                ["sensors", "remove", "kitchn"],
                "hubctl: there is no sensor named 'kitchn' — did you mean 'Kitchen'? ('hubctl sensors list' shows them all)\n"
            ),
            (
                ["sensors", "add", "x", "--topic-template", "home/status"],
                "hubctl: the topic template 'home/status' is not valid: it must contain {name} exactly once\n"
            ),
        ]
        for (arguments, message) in cases {
            let result = try await hubctl.run(arguments)
            #expect(result.status == 64, "\(arguments)")
            #expect(result.standardError == message)
        }
        let badKind = try await hubctl.run("sensors", "add", "x", "--kind", "thermometer")
        #expect(badKind.status == 64)
        #expect(badKind.standardError.contains("--kind must be one of: status, numeric, particulate"))
    }

    @Test func aDamagedStoreExits65AndIsLeftAlone() async throws {
        try FileManager.default.createDirectory(atPath: hubctl.state.path, withIntermediateDirectories: true)
        let damaged = "{\n  \"schemaVersion\": 1,\n  \"sensors\": [\n    {\"name\": \"a\",}\n  ]\n}\n"
        try damaged.write(toFile: hubctl.storePath, atomically: false, encoding: .utf8)
        for arguments in [["sensors", "add", "kitchen"], ["sensors", "list"]] {
            let result = try await hubctl.run(arguments)
            #expect(result.status == 65)
            #expect(
                result.standardError == """
                    hubctl: \(hubctl.storePath) is not a valid defaults document: line 4, column 18: a ',' must be followed \
                    by another key: JSON allows no trailing comma. \
                    It was left as it is: correct it by hand, or move it aside to start with an empty registry

                    """)
        }
        #expect(try storeText() == damaged)
    }

    /// Root may write anywhere, so the denied user is `nobody` (through setpriv) when the tests run as root.
    @Test func permissionDeniedExits77AndSaysWhatToDo() async throws {
        try FileManager.default.createDirectory(atPath: hubctl.state.path, withIntermediateDirectories: true)
        _ = try await hubctl.run("sensors", "add", "kitchen")
        let before = try storeText()
        var command = [hubctl.executable]
        if geteuid() == 0 {
            command = [
                try requireExecutable("setpriv", package: "util-linux"), "--reuid=nobody", "--regid=nogroup",
                "--clear-groups", hubctl.executable,
            ]
            // nobody must reach the binary and the directory, but not write in it.
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: hubctl.state.path)
        } else {
            try FileManager.default.setAttributes([.posixPermissions: 0o500], ofItemAtPath: hubctl.state.path)
        }
        defer { try? FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: hubctl.state.path) }
        let result = try await runProcess(
            command[0], Array(command.dropFirst()) + ["sensors", "add", "pantry"], environment: hubctl.environment)
        #expect(result.status == 77, "\(result.standardError)")
        #expect(
            result.standardError.contains(
                "Permission denied — run as the user that owns it (or with sudo), or choose another state directory with --state-dir or HUB_STATE_DIR"
            ))
        #expect(try storeText() == before)
    }

    /// `sudo hubctl` on the store of hubd's own (systemd dynamic) user must leave the files readable by it.
    @Test(.enabled(if: geteuid() == 0, "only root can change a file's owner"))
    func rootKeepsTheStateDirectoryOwnerOnFilesItWrites() async throws {
        try FileManager.default.createDirectory(atPath: hubctl.state.path, withIntermediateDirectories: true)
        let nobody = try #require(getpwnam("nobody")).pointee
        chown(hubctl.state.path, nobody.pw_uid, nobody.pw_gid)
        _ = try await hubctl.run("sensors", "add", "kitchen")
        _ = try await hubctl.run("broker", "set", "--username", "hub", "--password-file", "-", input: "pw\n")
        for file in ["defaults.json", "defaults.json.lock", "broker-password"] {
            let attributes = try FileManager.default.attributesOfItem(atPath: hubctl.state.file(file))
            #expect((attributes[.ownerAccountID] as? NSNumber)?.uint32Value == nobody.pw_uid, "\(file)")
        }
    }

    @Test func concurrentWritersLoseNothing() async throws {
        let writers = 6
        let each = 8
        try await withThrowingTaskGroup(of: [Int32].self) { group in
            for writer in 0..<writers {
                group.addTask {
                    var statuses: [Int32] = []
                    for index in 0..<each {
                        statuses.append(try await hubctl.run("sensors", "add", "w\(writer) s\(index)").status)
                    }
                    return statuses
                }
            }
            for try await statuses in group { #expect(statuses.allSatisfy { $0 == 0 }) }
        }
        let document = try DefaultsStore(directory: hubctl.state.path).read()
        #expect(document.sensors.count == writers * each)
    }

    /// Writers killed at random moments: after every kill the file parses and holds every sensor whose add
    /// reported success (and at most the one being added when it died).
    @Test func writersKilledMidWriteNeverDamageTheStore() async throws {
        let store = DefaultsStore(directory: hubctl.state.path)
        // Enough sensors that a write takes a while, so kills land inside it too.
        var seed = DefaultsDocument()
        for index in 0..<3000 { try seed.addSensor(named: "seed \(index)") }
        try FileManager.default.createDirectory(atPath: hubctl.state.path, withIntermediateDirectories: true)
        try Data(seed.encode()).write(to: URL(fileURLWithPath: store.path))
        var confirmed: Set<String> = []
        var attempted: Set<String> = []
        var seen: Set<String> = []
        var killed = 0
        for attempt in 0..<40 {
            let name = "killed \(attempt)"
            attempted.insert(name)
            let child = try ChildProcess(
                hubctl.executable, ["sensors", "add", name], environment: hubctl.environment)
            try await Task.sleep(for: .microseconds(Int.random(in: 0...40_000)))
            child.send(SIGKILL)
            let status = await child.wait()
            if status == 0 { confirmed.insert(name) } else { killed += 1 }
            let names = Set(try store.read().sensors.map(\.name))
            // Every confirmed add is there, and so is everything that was there before: nothing is lost.
            #expect(confirmed.isSubset(of: names), "attempt \(attempt): a confirmed sensor is missing")
            #expect(seen.isSubset(of: names), "attempt \(attempt): a sensor that was stored has gone")
            // A writer killed after its rename but before it could say so may have added its sensor; nothing else
            // appears.
            #expect(names.subtracting(seed.sensors.map(\.name)).isSubset(of: attempted))
            seen = names
        }
        #expect(killed > 0, "no writer was killed; the test proves nothing")
    }

    @Test func brokerSettingsKeepThePasswordOutOfSightAndOutOfTheStore() async throws {
        let set = try await hubctl.run(
            "broker", "set", "--host", "broker.lan", "--username", "hub", "--password-file", "-",
            input: "s3cret\n")
        #expect(set.status == 0, "\(set.standardError)")
        #expect(!set.standardOutput.contains("s3cret"))
        let passwordFile = hubctl.state.file("broker-password")
        #expect(try String(contentsOfFile: passwordFile, encoding: .utf8) == "s3cret\n")
        let mode = try FileManager.default.attributesOfItem(atPath: passwordFile)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        #expect(!(try storeText().contains("s3cret")))
        let show = try await hubctl.run("broker", "show")
        #expect(
            show.standardOutput == """
                Host:      broker.lan
                Port:      1883
                Client id: sensorhub
                User name: hub
                Password:  set (in \(passwordFile))
                TLS:       off

                """)
        let json = try await hubctl.run("broker", "show", "--json")
        #expect(
            json.standardOutput == """
                {"host": "broker.lan", "port": 1883, "clientId": "sensorhub", "username": "hub", "passwordFile": "\(passwordFile)", "tls": null}

                """)
        let cleared = try await hubctl.run("broker", "set", "--no-authentication", "--host", "localhost")
        #expect(cleared.status == 0)
        #expect(!FileManager.default.fileExists(atPath: passwordFile))
    }

    /// Every wrong port says the range, "-1" too (which a parser takes for an option) and text (issue 16, item 4).
    @Test(arguments: ["-1", "0", "70000", "abc", "1883.5", ""])
    func aWrongPortSaysTheRange(port: String) async throws {
        let result = try await hubctl.run("broker", "set", "--port", port)
        #expect(result.status == 64)
        #expect(
            result.standardError.contains(
                "--port '\(port)' is not a port: it is a whole number from 1 to 65535 (1883, or 8883 for TLS)"),
            "\(result.standardError)")
        #expect(!FileManager.default.fileExists(atPath: hubctl.storePath))
        let check = try await hubctl.run("broker", "check", "--port", port)
        #expect(
            check.status == 64 && check.standardError.contains("is not a port: it is a whole number from 1 to 65535"))
    }

    @Test func brokerCheckUsesTheSavedSettings() async throws {
        try await withBroker(.init(users: ["hub": "right"])) { broker in
            let set = try await hubctl.run(
                "broker", "set", "--host", broker.host, "--port", "\(broker.port)", "--username", "hub",
                "--password-file", "-", input: "right\n")
            #expect(set.status == 0, "\(set.standardError)")
            let check = try await hubctl.run("broker", "check")
            #expect(check.status == 0, "\(check.standardError)")
            #expect(check.standardOutput.contains("subscribe, publish and receive work"))
            let wrong = try await hubctl.run("broker", "check", "--password-file", "-", input: "wrong\n")
            #expect(wrong.status == 69)
            #expect(wrong.standardError.contains("not authorised"))
        }
    }

    @Test func shellCompletionOffersSensorNames() async throws {
        for name in ["kitchen", "Kitchen window", "garage"] { _ = try await hubctl.run("sensors", "add", name) }
        let script = try await hubctl.run("--generate-completion-script", "bash")
        #expect(script.status == 0)
        #expect(script.standardOutput.contains("---completion sensors remove"))
        // What the generated script runs when the user presses Tab after "hubctl sensors remove k".
        let completion = try await hubctl.run(
            "---completion", "sensors", "remove", "--", "positional@0", "3", "1", "hubctl", "sensors", "remove", "k")
        #expect(completion.standardOutput == "Kitchen window\nkitchen\n")
    }
}
