import Foundation
import HubCore
import HubTestKit
import Testing

/// `hubd --check-config`: the configuration read and checked as hubd starts, then exit, 0 or 78 with what is wrong.
@Suite struct CheckConfigTests {
    @Test func aValidConfigurationIsSaidSoAndABadOneNamesTheKey() async throws {
        let hubd = try builtProduct("hubd")
        let directory = try TemporaryDirectory(prefix: "check-config")
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        // The commented default, as installed.
        let shipped = root.appendingPathComponent("conf/hubd.yaml").path
        let good = try await runProcess(hubd, ["--config", shipped, "--check-config"], environment: [:])
        #expect(good.status == 0, "\(good.standardError)")
        #expect(good.standardOutput.contains("the configuration \(shipped) is valid"), "\(good.standardOutput)")
        let bad = directory.file("hubd.yaml")
        try "sensors:\n  silence_timout: 10m\n".write(toFile: bad, atomically: true, encoding: .utf8)
        let refused = try await runProcess(hubd, ["--config", bad, "--check-config"], environment: [:])
        #expect(refused.status == 78)
        // A backend hubd could not make at start (its CA file missing) is refused too: the backends are made.
        let backend = directory.file("backend.yaml")
        try "notifiers:\n  backends:\n    x: {type: ntfy, topic: t, ca_file: /nonexistent/ca.pem}\n".write(
            toFile: backend, atomically: true, encoding: .utf8)
        let unmade = try await runProcess(hubd, ["--config", backend, "--check-config"], environment: [:])
        #expect(unmade.status == 78 && unmade.standardError.contains("ca.pem"), "\(unmade.standardError)")
        #expect(
            refused.standardError.contains("\(bad):2: sensors.silence_timout: unknown key"), "\(refused.standardError)")
    }
}

/// What can never work is said (issue 52): docs/alerts.md's own leak rule took `statuses: [wet]` while Zigbee2MQTT's
/// leak sensors say `leak` or `dry`, and never fired, with no warning.
@Suite struct CheckConfigWarningTests {
    @Test func rulesThatCanNeverFireAreWarnedAbout() async throws {
        let hubctl = try Hubctl()
        let added = try await hubctl.run(
            "sensors", "add", "kitchen leak", "--topic", "z2m/kitchen", "--preset", "zigbee2mqtt", "--value",
            "water_leak")
        #expect(added.status == 0, "\(added.standardError)")
        let sensor = try #require(try DefaultsStore(directory: hubctl.state.path).read().sensor(named: "kitchen leak"))
        #expect(sensor.format.map?.description == "true=leak,false=dry")
        let file = hubctl.state.file("hubd.yaml")
        try """
            notifiers:
              backends:
                phone: { type: file, path: /dev/null }
              rules:
                leak: { sensors: ["*leak*"], events: [changed], statuses: [wet], backends: [phone], group_wait: 0s }
                garage: { sensors: ["garage*"], backends: [phone] }
                right: { sensors: ["*leak*"], statuses: [leak], backends: [phone] }
            """.write(toFile: file, atomically: true, encoding: .utf8)
        let hubd = try builtProduct("hubd")
        let checked = try await runProcess(
            hubd, ["--config", file, "--check-config"], environment: hubctl.environment)
        #expect(checked.status == 0, "warnings, not refusals: \(checked.standardError)")
        #expect(
            checked.standardError.contains(
                "warning: rule 'leak': statuses wet never come from 'kitchen leak', whose map gives leak, dry"),
            "\(checked.standardError)")
        #expect(checked.standardError.contains("warning: rule 'garage': sensors 'garage*' matches no sensor now"))
        #expect(!checked.standardError.contains("rule 'right'"))
    }
}
