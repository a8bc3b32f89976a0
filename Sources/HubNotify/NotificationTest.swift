import Foundation
import HubCore
import HubSupport
import Logging

/// `hubctl notify test`: one direct attempt per backend, nothing queued, retried or written to the outbox.
public enum NotificationTest {
    public struct Outcome: Sendable {
        public var backend: String
        public var type: String
        /// One per device for push backends, else one; `target` is the device id.
        public var results: [(target: String?, result: DeliveryResult)]
        public var elapsed: Duration
    }

    /// Sends `event` to each of `backends` (all when empty) through its real backend, concurrently.
    public static func run(
        configuration: NotifierConfiguration, backends: [String], event: SensorEvent, stateDirectory: String,
        logger: Logger, publish: MQTTPublish?
    ) async throws(ConfigurationError) -> [Outcome] {
        let specs = configuration.backends.filter { backends.isEmpty || backends.contains($0.name) }
        var notifiers: [(BackendSpec, any Notifier)] = []
        for spec in specs {
            notifiers.append(
                (spec, try spec.makeNotifier(stateDirectory: stateDirectory, logger: logger, publish: publish)))
        }
        let id = event.id
        return await withTaskGroup(of: Outcome.self) { group in
            for (spec, notifier) in notifiers {
                group.addTask {
                    let start = ContinuousClock.now
                    let rule = NotificationRule(name: "test", backends: [spec.name])
                    let (title, body) = rule.render(event, id: id)
                    let notification = Notification(
                        id: id, backend: spec.name, rule: "test", event: event, title: title, body: body)
                    var results: [(target: String?, result: DeliveryResult)] = []
                    var copies: [Notification] = []
                    do {
                        copies = try notifier.expand(notification)
                    } catch {
                        results.append((nil, .failed(reason: "\(error)")))
                    }
                    for copy in copies {
                        let result =
                            await withTimeout(spec.policy.timeout) { await notifier.send(copy) }
                            ?? .retry(reason: "timed out: no answer within \(DurationText.format(spec.policy.timeout))")
                        results.append((copy.target, result))
                    }
                    await notifier.shutdown()
                    return Outcome(backend: spec.name, type: spec.type, results: results, elapsed: .now - start)
                }
            }
            var outcomes: [Outcome] = []
            for await outcome in group { outcomes.append(outcome) }
            return outcomes.sorted { $0.backend < $1.backend }
        }
    }
}

extension NotificationRouter {
    /// One direct attempt through `backend` as configured now (the dashboard's "send a test"), as `hubctl notify
    /// test` makes: nothing queued, retried or written to the outbox; the mqtt backend publishes on hubd's own
    /// connection.
    public func test(_ backend: String, event: SensorEvent) async throws(ConfigurationError) -> [NotificationTest
        .Outcome]
    {
        try await NotificationTest.run(
            configuration: configuration, backends: [backend], event: event, stateDirectory: stateDirectory,
            logger: logger, publish: publish)
    }
}
