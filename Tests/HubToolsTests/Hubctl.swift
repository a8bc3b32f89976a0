import Foundation
import HubTestKit

/// Runs the built `hubctl` as a user would, with a state directory of its own (never /var/lib/sensorhub) and
/// UTC as the time zone, so that output can be compared exactly.
struct Hubctl: Sendable {
    let executable: String
    let state: TemporaryDirectory

    init() throws {
        executable = try builtProduct("hubctl")
        state = try TemporaryDirectory(prefix: "hub-state")
    }

    var storePath: String { state.file("defaults.json") }

    var environment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["HUB_STATE_DIR"] = state.path
        environment["TZ"] = "UTC"
        environment.removeValue(forKey: "HUB_SENSORS_TOPIC_TEMPLATE")
        environment.removeValue(forKey: "HUB_CONFIG")
        return environment
    }

    func run(_ arguments: String..., input: String? = nil) async throws -> ProcessOutput {
        try await run(arguments, input: input)
    }

    func run(_ arguments: [String], input: String? = nil) async throws -> ProcessOutput {
        try await runProcess(executable, arguments, input: input, environment: environment)
    }
}
