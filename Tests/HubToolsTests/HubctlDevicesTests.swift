import Foundation
import HubTestKit
import Testing

/// `hubctl devices` run as a process against a real state directory: exact output, exit codes, choices.
@Suite(.timeLimit(.minutes(2)))
struct HubctlDevicesTests {
    let hubctl: Hubctl
    let token = "740f4707bebcf74f9b7c25d48e3358945f6aa01da5ddb387462c7eaf61bb78ad"

    init() throws {
        hubctl = try Hubctl()
    }

    /// The id `add` printed: `added device <id> (…`.
    func id(_ output: ProcessOutput) throws -> String {
        try #require(output.standardOutput.split(separator: " ").dropFirst(2).first.map(String.init))
    }

    @Test func devicesAddListRemove() async throws {
        let added = try await hubctl.run("devices", "add", token)
        #expect(added.status == 0)
        let id = try id(added)
        #expect(added.standardOutput == "added device \(id) (apns 740f4707…78ad): every notification\n")
        #expect(
            try await hubctl.run("devices", "add", token.uppercased()).standardOutput
                == "device \(id) was already registered (apns 740f4707…78ad): every notification\n")
        let list = try await hubctl.run("devices", "list")
        #expect(
            list.standardOutput.hasPrefix(
                "ID                KIND  ADDRESS        SENSORS  EVENTS  ADDED\n"
                    + "\(id)  apns  740f4707…78ad  all      all     "))
        let bad = try await hubctl.run("devices", "add", "xyz")
        #expect(
            bad.status == 64
                && bad.standardError
                    == "hubctl: invalid device token: a device token is hexadecimal digits (0-9, a-f)\n"
        )
        #expect(try await hubctl.run("devices", "remove", id).standardOutput == "removed device \(id)\n")
        let missing = try await hubctl.run("devices", "remove", id)
        #expect(missing.status == 64)
        #expect(
            try await hubctl.run("devices", "list").standardOutput
                == "No devices yet. Register one with: hubctl devices add TOKEN\n")
    }

    /// A device's sensors and events: chosen on add, edited (only what is given), cleared with --all-…, shown by
    /// list and --json; a browser's subscription JSON is a webpush device listed by its push service's host.
    @Test func eachDeviceChooses() async throws {
        let added = try await hubctl.run("devices", "add", token, "--sensors", "door*,kitchen", "--events", "changed")
        let id = try id(added)
        #expect(added.standardOutput.hasSuffix(": sensors door*,kitchen; events changed\n"))
        // Registered again without a choice: the choice stays.
        #expect(try await hubctl.run("devices", "add", token).standardOutput.hasSuffix("events changed\n"))

        let edited = try await hubctl.run("devices", "edit", id, "--events", "offline", "--events", "recovered")
        #expect(edited.standardOutput == "device \(id) now gets sensors door*,kitchen; events offline,recovered\n")
        let cleared = try await hubctl.run("devices", "edit", token, "--all-sensors")
        #expect(cleared.standardOutput == "device \(id) now gets sensors all; events offline,recovered\n")

        let browser = try await hubctl.run(
            "devices", "add", PushFixtures.subscriptionJSON(), "--sensors", "garage")
        #expect(browser.status == 0, "\(browser.standardError)")
        #expect(
            browser.standardOutput.hasSuffix(
                "(webpush updates.push.services.mozilla.com): sensors garage; events all\n"))

        let list = try await hubctl.run("devices", "list")
        let lines = list.standardOutput.split(separator: "\n").map { $0.split(separator: " ").joined(separator: " ") }
        #expect(lines.first == "ID KIND ADDRESS SENSORS EVENTS ADDED")
        #expect(lines.contains { $0.hasPrefix("\(id) apns 740f4707…78ad all offline,recovered ") })
        #expect(lines.contains { $0.contains(" webpush updates.push.services.mozilla.com garage all ") })
        #expect(!list.standardOutput.contains(PushFixtures.endpoint))

        let json = try await hubctl.run("devices", "list", "--json")
        let devices = try #require(
            try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [[String: Any]])
        let phone = try #require(devices.first { $0["kind"] as? String == "apns" })
        #expect(phone["token"] as? String == token && phone["events"] as? [String] == ["offline", "recovered"])
        #expect(phone["sensors"] as? [String] == [])
        let push = try #require(devices.first { $0["kind"] as? String == "webpush" })
        #expect((push["subscription"] as? [String: Any])?["endpoint"] as? String == PushFixtures.endpoint)
        #expect(push["sensors"] as? [String] == ["garage"])
    }

    /// Bad choices and subscriptions name what was wrong, with hubctl's exit codes.
    @Test func badChoicesAreRefused() async throws {
        let id = try id(try await hubctl.run("devices", "add", token))
        let cases: [([String], String)] = [
            (
                ["add", token, "--events", "changed,opened"],
                "hubctl: invalid choice: 'opened' is not an event kind; use changed, silent, offline, recovered,"
                    + " air_quality, threshold, discovered or session\n"
            ),
            (
                ["edit", id, "--sensors", "door*,,kitchen"],
                "hubctl: invalid choice: an empty sensor name or glob; name sensors like kitchen or door*\n"
            ),
            (
                ["edit", "0123456789abcdef", "--events", "offline"],
                "hubctl: no device '0123456789abcdef' (see hubctl devices list)\n"
            ),
            (
                ["add", #"{"endpoint": "http://push.example.com/1", "keys": {"p256dh": "x", "auth": "y"}}"#],
                "hubctl: invalid Web Push subscription: the endpoint must be an https URL, not http\n"
            ),
        ]
        for (arguments, message) in cases {
            let result = try await hubctl.run(["devices"] + arguments)
            #expect(result.status == 64 && result.standardError == message, "\(arguments)")
        }
        for arguments in [["edit", id], ["edit", id, "--sensors", "a", "--all-sensors"]] {
            let result = try await hubctl.run(["devices"] + arguments)
            #expect(result.status == 64, "\(arguments)")
            #expect(result.standardError.hasPrefix("Error: "), "\(arguments): \(result.standardError)")
        }
        // Nothing changed.
        #expect(try await hubctl.run("devices", "list").standardOutput.contains(" all      all "))
    }

    @Test func helpHasExamples() async throws {
        let help = try await hubctl.run("devices", "--help")
        #expect(
            help.standardOutput.contains(
                "hubctl devices add \"$TOKEN\" --sensors 'door*,kitchen' --events changed"))
        #expect(help.standardOutput.contains("hubctl devices edit 3f9c2a1b7e4d5c60 --all-sensors --all-events"))
        let edit = try await hubctl.run("devices", "edit", "--help")
        #expect(
            edit.standardOutput.contains("--all-events") && edit.standardOutput.contains("Only what is given changes."))
    }
}
