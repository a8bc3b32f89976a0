import Foundation
import HubCore
import HubTestKit
import Logging
import Testing

@testable import HubNotify

/// A router built from a `notifiers:` YAML section, running until `body` returns.
func withRouter<T: Sendable>(
    _ yaml: String, directory: TemporaryDirectory, before: (NotificationRouter) -> Void = { _ in },
    publish: MQTTPublish? = nil, _ body: (NotificationRouter) async throws -> T
) async throws -> T {
    let configuration = try NotifierConfiguration.parse(yaml, file: directory.file("hubd.yaml"))
    var logger = Logger(label: "test")
    logger.logLevel = .debug
    let router = try NotificationRouter(
        configuration: configuration, stateDirectory: directory.path, logger: logger, publish: publish)
    before(router)
    let task = Task { await router.run() }
    do {
        let result = try await body(router)
        task.cancel()
        await task.value
        return result
    } catch {
        task.cancel()
        await task.value
        throw error
    }
}

/// Waits until `condition` holds, polling; fails the test after `timeout`.
func eventually(
    _ what: String, within timeout: Duration = .seconds(20), _ condition: () throws -> Bool
) async throws {
    let deadline = ContinuousClock.now + timeout
    while try !condition() {
        guard ContinuousClock.now < deadline else { throw TestKitError("timed out waiting for \(what)") }
        try await Task.sleep(for: .milliseconds(20))
    }
}

func event(
    _ sensor: String, _ old: String = "closed", _ new: String = "open", kind: NotificationEvent.Kind = .changed
) -> NotificationEvent {
    NotificationEvent(kind: kind, sensor: sensor, topic: "home/\(sensor)", oldStatus: old, newStatus: new, time: .now)
}

/// The JSON lines of a file, decoded.
func jsonLines(_ path: String) -> [[String: Any]] {
    guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [] }
    return text.split(separator: "\n").compactMap {
        try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
    }
}
