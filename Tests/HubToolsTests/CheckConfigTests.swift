import Foundation
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
