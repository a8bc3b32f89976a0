import Foundation
import HubCore
import HubSupport
import HubTestKit
import Logging
import Testing

@testable import HubNotify

/// A router built from a `notifiers:` YAML section, running until `body` returns.
func withRouter<T: Sendable>(
    _ yaml: String, directory: TemporaryDirectory, before: (NotificationRouter) -> Void = { _ in },
    publish: MQTTPublish? = nil, log: LogRecorder? = nil, progress: (@Sendable (Int) -> Void)? = nil,
    _ body: (NotificationRouter) async throws -> T
) async throws -> T {
    let configuration = try NotifierConfiguration.parse(yaml, file: directory.file("hubd.yaml"))
    var logger = log.map { recorder in Logger(label: "test") { _ in recorder.handler() } } ?? Logger(label: "test")
    logger.logLevel = .debug
    let router = try NotificationRouter(
        configuration: configuration, stateDirectory: directory.path, logger: logger, publish: publish,
        progress: progress)
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

/// What reading a configuration with one backend `x`, written `backend` (YAML flow), says is wrong; `""` when
/// nothing is.
func backendError(_ backend: String) -> String {
    do {
        _ = try NotifierConfiguration.read(
            try ConfigNode.parse("notifiers:\n  backends:\n    x: \(backend)\n", environment: [:]))
        return ""
    } catch {
        return "\(error)"
    }
}

func event(
    _ sensor: String, _ old: String = "closed", _ new: String = "open", kind: SensorEvent.Kind = .changed
) -> SensorEvent {
    SensorEvent(
        id: SensorEvent.randomID(), kind: kind, sensor: sensor, topic: "home/\(sensor)", oldStatus: old, newStatus: new,
        time: .now)
}

/// Keeps every log line a logger made, with its level, for tests that check what was logged how.
final class LogRecorder: Sendable {
    struct Line: Sendable {
        var level: Logger.Level
        var message: String
        var metadata: [String: String]
    }

    private let lines = Locked<[Line]>([])

    var all: [Line] { lines.withLock { $0 } }

    func handler() -> some LogHandler { Handler(recorder: self) }

    private struct Handler: LogHandler {
        let recorder: LogRecorder
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let metadata = self.metadata.merging(event.metadata ?? [:]) { $1 }.mapValues(\.description)
            recorder.lines.withLock {
                $0.append(Line(level: event.level, message: event.message.description, metadata: metadata))
            }
        }
    }
}
