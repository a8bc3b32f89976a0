import Foundation
import HubCore
import HubTestKit
import Testing

/// The package's one executable (issue 55): `hubd` built with both commands in it, run through a symbolic link named
/// `hubctl` as `/usr/bin/hubctl` is, answers as hubctl, and under its own name as the agent.
@Suite struct MultiCallTests {
    @Test func hubdRunThroughALinkNamedHubctlIsTheCommandLine() async throws {
        let links = try TemporaryDirectory(prefix: "hub-links")
        try FileManager.default.createSymbolicLink(
            atPath: links.file("hubctl"), withDestinationPath: try builtProduct("hubd"))
        let state = try TemporaryDirectory(prefix: "hub-state")
        var environment = ProcessInfo.processInfo.environment
        environment["HUB_STATE_DIR"] = state.path
        environment.removeValue(forKey: "HUB_CONFIG")
        environment.removeValue(forKey: "HUB_SENSORS_TOPIC_TEMPLATE")

        let help = try await runProcess(links.file("hubctl"), ["--help"], environment: environment)
        #expect(help.status == 0)
        #expect(help.standardOutput.contains("USAGE: hubctl"))
        let added = try await runProcess(links.file("hubctl"), ["sensors", "add", "kitchen"], environment: environment)
        #expect(added.status == 0, "\(added.standardError)")
        let listed = try await runProcess(links.file("hubctl"), ["sensors", "list"], environment: environment)
        #expect(listed.standardOutput.contains("kitchen"))
    }

    @Test func hubdUnderItsOwnNameIsTheAgent() async throws {
        let help = try await runProcess(try builtProduct("hubd"), ["--help"])
        #expect(help.standardOutput.contains("USAGE: hubd"))
        #expect(!help.standardOutput.contains("USAGE: hubctl"))
        let version = try await runProcess(try builtProduct("hubd"), ["--version"])
        #expect(version.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) == SensorHubVersion.current)
    }
}
