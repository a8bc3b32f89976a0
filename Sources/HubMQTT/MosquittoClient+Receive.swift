import Foundation
import HubSupport
import Mosquitto

extension MosquittoClient {
    /// Subscribes to `batches` (one SUBSCRIBE each), hands every message to `take`, and returns once the broker has
    /// sent the retained messages and `duration` has passed. A marker published after the subscriptions comes back
    /// after the retained messages, so "at once" needs no guess (`hubctl discover`, `hubctl ha`, the dashboard's
    /// discovery).
    public func receive(
        subscribing batches: [[String]], for duration: Duration, _ take: @escaping @Sendable (MQTTMessage) -> Void
    ) async throws {
        let marker = "sensorhub/hubctl/\(UUID().uuidString)"
        let markerBack = Locked(false)
        let doorbell = Doorbell()
        let batches = batches.filter { !$0.isEmpty }
        for (index, filters) in batches.enumerated() {
            try await subscribe(filters + (index == batches.count - 1 ? [marker] : []), qos: .atLeastOnce)
        }
        if batches.isEmpty { try await subscribe([marker], qos: .atLeastOnce) }
        let deadline = ContinuousClock.now + duration
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for await message in self.messages {
                    if message.topic == marker {
                        markerBack.withLock { $0 = true }
                        doorbell.ring()
                    } else {
                        take(message)
                    }
                }
            }
            try await publish(topic: marker, payload: "retained messages sent", qos: .atLeastOnce)
            let timeout = configuration.operationTimeout
            await doorbell.wait(until: .now + timeout)
            guard markerBack.withLock({ $0 }) else {
                group.cancelAll()
                throw MosquittoError.timeout(operation: "the broker's retained messages", after: timeout)
            }
            try? await Task.sleep(until: deadline)
            group.cancelAll()
        }
    }
}
