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

func event(
    _ sensor: String, _ old: String = "closed", _ new: String = "open", kind: SensorEvent.Kind = .changed
) -> SensorEvent {
    SensorEvent(id: SensorEvent.randomID(), kind: kind, sensor: sensor, topic: "home/\(sensor)", oldStatus: old, newStatus: new, time: .now)
}
