import Foundation
import HubCore
import HubSupport
import Logging
import Mosquitto
import ServiceLifecycle

/// Where events go after ingest. Each sink takes them without blocking: the router queues them, the history
/// batches them. Adding a sink is one service conforming to this, listed in `Hub`.
protocol EventSink: Sendable {
    func accept(_ event: SensorEvent)
    /// A particulate reading of `sensor` (most sinks have no use for it).
    func accept(_ reading: ParticulateReading, of sensor: String)
}

extension EventSink {
    func accept(_ reading: ParticulateReading, of sensor: String) {}
}

/// Messages become statuses and events: every message of the connected client goes through the tracker (a value
/// type with the rules), every event it causes goes to the sinks, and silence is checked four times a second.
///
/// Owns the tracker: the subscriptions service asks it to follow the registry, the store writer takes what changed,
/// snapshots read it. One lock, no actor hop per message.
final class Ingest: Service, Sendable {
    private let tracker: Locked<SensorTracker>
    private let counters = Locked(Counters())
    private let rejections = Locked<[Rejection: LogThrottle]>([:])
    private let clients: AsyncStream<MosquittoClient>
    private let sinks: [any EventSink]
    private let logger: Logger

    struct Counters {
        var messages = 0
        var changes = 0
        var rejected: [String: Int] = [:]
    }

    /// - Parameter clients: each client the connection makes, in turn; it finishes the stream when it stops.
    init(tracker: SensorTracker, clients: AsyncStream<MosquittoClient>, sinks: [any EventSink], logger: Logger) {
        self.tracker = Locked(tracker)
        self.clients = clients
        self.sinks = sinks
        self.logger = logger
    }

    /// Until the connection has closed for good and the service is asked to stop: every message that arrived before
    /// the client closed is ingested.
    func run() async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await every(.milliseconds(250)) { self.checkSilence() } }
            for await client in clients { await consume(client) }
            try? await gracefulShutdown()
            group.cancelAll()
        }
    }

    private func consume(_ client: MosquittoClient) async {
        for await message in client.messages {
            let outcome = tracker.withLock {
                $0.ingest(
                    topic: message.topic, payload: message.payload, retained: message.retain, time: .now, now: .now)
            }
            switch outcome {
            case .event(let event):
                counters.withLock {
                    $0.messages += 1
                    $0.changes += 1
                }
                emit(event)
            case .particulate(let reading, let sensor, let events):
                counters.withLock {
                    $0.messages += 1
                    $0.changes += events.count
                }
                for sink in sinks { sink.accept(reading, of: sensor) }
                for event in events { emit(event) }
            case .unchanged:
                counters.withLock { $0.messages += 1 }
            case .rejected(let reason):
                counters.withLock {
                    $0.messages += 1
                    $0.rejected[reason.rawValue, default: 0] += 1
                }
                noteRejection(reason, topic: message.topic, size: message.payload.count)
            }
        }
    }

    /// Logs a rejected message: the first of each kind, then at most one line every ten seconds with a count.
    private func noteRejection(_ reason: Rejection, topic: String, size: Int) {
        guard let report = rejections.withLock({ $0[reason, default: LogThrottle()].note() }) else { return }
        logger.warning(
            "rejected a message",
            metadata: [
                "reason": "\(reason.rawValue)", "topic": "\(topic)", "bytes": "\(size)",
                "rejected_since_last_report": "\(report)",
            ])
    }

    private func emit(_ event: SensorEvent) {
        logger.info(
            "sensor event",
            metadata: [
                "sensor": "\(event.sensor)", "event": "\(event.kind.rawValue)", "from": "\(event.oldStatus)",
                "to": "\(event.newStatus)", "topic": "\(event.topic)",
            ])
        for sink in sinks { sink.accept(event) }
    }

    private func checkSilence() {
        let events = tracker.withLock { $0.checkSilence(now: .now, time: .now) }
        guard !events.isEmpty else { return }
        counters.withLock { $0.changes += events.count }
        for event in events { emit(event) }
    }

    // MARK: - For the other services

    /// Follows the registry's sensors; returns the subscriptions that needs.
    func follow(_ document: DefaultsDocument) -> SensorTracker.Delta {
        tracker.withLock { $0.follow(document, now: .now) }
    }

    /// Every topic the hub must be subscribed to.
    var topics: [String] { tracker.withLock { $0.topics } }

    var sensorCount: Int { tracker.withLock { $0.count } }

    /// Applies the settings that can change while running (SIGHUP).
    func apply(_ configuration: HubConfiguration) {
        tracker.withLock {
            $0.maximumStatusLength = configuration.maximumStatusLength
            $0.setDefaultSilenceTimeout(configuration.silenceTimeout, now: .now)
        }
    }

    /// The statuses changed since the last call, to write back.
    func takeDirty() -> [(topic: String, status: String, lastUpdated: Timestamp?)] {
        tracker.withLock { $0.takeDirty() }
    }

    /// Statuses a failed write could not save: the next flush tries again.
    func markDirty(_ topics: [String]) {
        tracker.withLock { $0.markDirty(topics) }
    }

    /// Adds what ingest knows to `snapshot`.
    func fill(_ snapshot: inout HubSnapshot, statuses: Bool) {
        tracker.withLock { snapshot.take($0, statuses: statuses) }
        let counted = counters.withLock { $0 }
        snapshot.counters.messages = counted.messages
        snapshot.counters.changes = counted.changes
        snapshot.counters.rejected = counted.rejected
    }
}
