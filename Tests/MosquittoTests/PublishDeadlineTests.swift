import Foundation
import HubTestKit
import Mosquitto
import Testing

/// A publish's timeout is kept by the client's network thread (`Deadlines`), with no timer of its own.
@Suite struct PublishDeadlineTests {
    /// A broker that stops answering (SIGSTOP: the connection stays open) fails a QoS 1 publish at its own
    /// timeout, not the configuration's; once the broker is back, the next publish goes through.
    @Test func aPublishTheBrokerDoesNotAnswerFailsAtItsTimeout() async throws {
        try await withBroker { broker in
            let configuration = MosquittoConfiguration.test(broker) { $0.operationTimeout = .seconds(60) }
            try await withClient(configuration) { connected in
                let client = connected.client
                try await client.publish(topic: "hub/said", payload: "before", qos: .atLeastOnce)
                broker.pause()
                defer { broker.resume() }
                let started = ContinuousClock.now
                let publishing = Task { () -> MosquittoError? in
                    do throws(MosquittoError) {
                        try await client.publish(
                            topic: "hub/said", payload: "paused", qos: .atLeastOnce, timeout: .milliseconds(400))
                        return nil
                    } catch {
                        return error
                    }
                }
                // Not kept, it would wait for ever: cancelled after 5 s, it ends as cancelled, not timed out.
                let watchdog = Task {
                    try await Task.sleep(for: .seconds(5))
                    publishing.cancel()
                }
                let failure = await publishing.value
                watchdog.cancel()
                let waited = ContinuousClock.now - started
                guard case .timeout = failure else {
                    Issue.record("the publish ended with \(String(describing: failure)), not its timeout")
                    return
                }
                #expect(waited >= .milliseconds(350) && waited < .seconds(5), "\(waited)")
                broker.resume()
                try await client.publish(topic: "hub/said", payload: "after", qos: .atLeastOnce)
            }
        }
    }
}
