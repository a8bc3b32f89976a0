import Foundation
import HubCore
import HubRemote
import HubSupport
import Logging
import Mosquitto

/// Where a cluster's agents commit what their messages change (docs/cluster.md): the registry's rows in PostgreSQL,
/// the events tagged `hub`, and their notifications in the cluster's outbox.
struct SharedIngest: Sendable {
    let registry: PostgresRegistry
    /// The hub name the cluster's events carry (`HubConfiguration.storeHub`: the group's name), as the history's.
    let hub: String
    /// The outbox's rows for new events (the router's rules), written in the step that commits them.
    let notifications: @Sendable ([SensorEvent], RateLimits) async throws -> [PostgresOutbox.Row]
    /// Those of a step's new events that are queued for the cluster's alert book (the router's alerting rules').
    let alerting: @Sendable ([SensorEvent]) -> [SensorEvent]
    /// Told after a step committed new events: the router claims their notifications.
    let outboxChanged: @Sendable () -> Void
    let partitions = ClusterPartitions.standard
    /// The partitions this agent holds and has caught up with (`PartitionKeeper`): it watches their sensors' silence.
    let held = Locked<Set<Int>>([])

    /// Whether the sensor on a topic is in a partition this agent holds now.
    func owned() -> @Sendable (String) -> Bool {
        let (held, partitions) = (held.withLock { $0 }, partitions)
        return { held.contains(partitions.partition(ofSensorTopic: $0)) }
    }
}

/// A partition's session as this agent holds it (`PartitionKeeper`).
struct HeldPartition: Sendable {
    let index: Int
    let client: MosquittoClient
    /// The partition's lease at the epoch this agent was granted it: a step commits only while it still holds that.
    let fence: PostgresRegistry.Fence
    /// The broker had no session for the partition's client when it connected.
    let sessionIsNew: Bool
    /// Whether this agent may still work on it (its lease not run out by this agent's clock, not given up).
    let isHeld: @Sendable () -> Bool
}

/// A cluster's ingest. Each partition's session brings its sensors' messages to the one agent that holds it, in the
/// broker's order; the agent applies them a batch at a time in a step that locks their rows, catches the tracker up
/// with them (another agent held the partition before), checks that it still holds the partition, and commits the rows and the new events in one transaction. Only then are the
/// records journaled here (for the history, Home Assistant and `remote:`) and the messages acknowledged to the
/// broker.
extension Ingest {
    /// Applies a partition's messages a batch at a time (what arrived while the last batch was being committed: a
    /// group commit) until its client closes. A batch that can't be committed is tried again, with back-off, while
    /// the partition is held. Returns false when a step found that another agent holds the partition now: the
    /// caller closes the client, and the broker sends what was not acknowledged to that agent.
    func consumePartition(_ partition: HeldPartition, _ shared: SharedIngest) async -> Bool {
        let (client, partitions, index) = (partition.client, shared.partitions, partition.index)
        let owned: @Sendable (String) -> Bool = { partitions.partition(ofSensorTopic: $0) == index }
        let session = client.configuration.clientID ?? ""
        var sessionIsNew = partition.sessionIsNew
        var messages = client.messages.makeAsyncIterator()
        while let batch = await messages.nextBatch() {
            var topics = Set<String>()
            var (applied, others): ([MQTTMessage], [MQTTMessage]) = ([], [])
            tracker.withLock { tracker in
                for message in batch {
                    guard let changed = tracker.topicsChanged(byMessageOn: message.topic, owned: owned) else {
                        others.append(message)
                        continue
                    }
                    topics.formUnion(changed)
                    applied.append(message)
                }
            }
            // A sensor removed, or moved to another partition's topics, since the session subscribed.
            for message in others { rejectUnknown(message) }
            if !applied.isEmpty {
                let applied = applied
                // A message the broker sends again (the last holder died before acknowledging it) is not applied
                // twice.
                let step = { @Sendable (tracker: inout SensorTracker, committedBefore: Set<Int>) in
                    let results = applied.map { message -> (SensorTracker.Outcome, RecordedReading?) in
                        if message.qos != .atMostOnce && committedBefore.contains(message.packetID) {
                            return (.rejected(.redelivered), nil)
                        }
                        let outcome = tracker.ingest(
                            topic: message.topic, payload: message.payload, retained: message.retain, time: .now,
                            now: .now, owned: owned)
                        return (outcome, outcome.reading.map { tracker.recorded($0, topic: message.topic) })
                    }
                    return (results, results.flatMap(\.0.events))
                }
                var deliveries = Self.deliveries(applied, session: session)
                deliveries?.sessionIsNew = sessionIsNew
                switch await commitUntilDone(
                    topics, shared, deliveries, partition.fence, keepTrying: partition.isHeld, step)
                {
                case .committed(let results, let fresh):
                    if deliveries != nil { sessionIsNew = false }
                    for (message, (outcome, recorded)) in zip(applied, results) {
                        account(outcome, of: message, recorded: recorded, fresh: fresh)
                    }
                case .notHeld:
                    logger.notice(
                        "another agent holds this partition now; its messages not acknowledged here go to it",
                        metadata: ["partition": "\(index)", "messages": "\(applied.count)"])
                    return false
                case .stopped:
                    logger.notice(
                        """
                        stopped before these messages could be committed; the broker sends them to the partition's \
                        next holder
                        """,
                        metadata: ["partition": "\(index)", "messages": "\(applied.count)"])
                    return true
                }
            }
            // The client acknowledges the batch to the broker once it is committed and journaled here.
            if let last = batch.last {
                let number = last.number
                journal.afterCommit { client.confirm(through: number) }
            }
        }
        return true
    }

    /// Counts and logs a message no sensor (of this partition) takes, without offering it to the listeners: they
    /// hear their topics on the agent's own connection.
    private func rejectUnknown(_ message: MQTTMessage) {
        counters.withLock {
            $0.messages += 1
            $0.rejected[Rejection.unknownTopic.rawValue, default: 0] += 1
        }
        noteRejection(.unknownTopic, topic: message.topic, size: message.payload.count)
    }

    enum StepResult<T: Sendable>: Sendable {
        case committed(T, fresh: Set<String>)
        /// Another agent holds the fence's lease now: nothing was committed.
        case notHeld
        /// hubd is stopping, or `keepTrying` said no, before it could be committed.
        case stopped
    }

    /// `commit`, tried again after 0.5 s, 1 s, … 5 s while it fails and `keepTrying` says so.
    private func commitUntilDone<T: Sendable>(
        _ topics: Set<String>, _ shared: SharedIngest, _ deliveries: PostgresRegistry.Deliveries?,
        _ fence: PostgresRegistry.Fence?, keepTrying: @Sendable () -> Bool,
        _ step: @escaping @Sendable (inout SensorTracker, Set<Int>) -> (T, [SensorEvent])
    ) async -> StepResult<T> {
        var pause = Duration.milliseconds(500)
        while true {
            do {
                guard let (result, fresh) = try await commit(topics, shared, deliveries: deliveries, fence: fence, step)
                else { return .notHeld }
                return .committed(result, fresh: fresh)
            } catch {
                errors?.record("could not commit \(topics.count) sensors' statuses to the store: \(error)")
                if Task.isShuttingDownGracefully || Task.isCancelled || !keepTrying() { return .stopped }
                try? await Task.sleep(for: pause)
                pause = min(pause * 2, .seconds(5))
                if !keepTrying() { return .stopped }
            }
        }
    }

    /// One step: locks the rows of `topics`, catches the tracker up with them, runs `step` on it, and commits the
    /// rows it changed with the events it made; then journals the records here, with only the events the database
    /// did not have (a message applied twice makes none). Returns what `step` returned and the ids of those events;
    /// nil, with nothing applied or committed, when this agent no longer holds `fence`. When it throws, nothing was
    /// committed, and the tracker's next step on these sensors takes their rows as they are.
    func commit<T: Sendable>(
        _ topics: Set<String>, _ shared: SharedIngest, deliveries: PostgresRegistry.Deliveries?,
        fence: PostgresRegistry.Fence?,
        _ step: @escaping @Sendable (inout SensorTracker, _ committedBefore: Set<Int>) -> (T, [SensorEvent])
    ) async throws(StoreError) -> (T, fresh: Set<String>)? {
        let taken = Locked<(T, [JournalRecord], observed: [SensorEvent])?>(nil)
        let committed = try await shared.registry.ingest(
            onTopics: Array(topics), hub: shared.hub, deliveries: deliveries, fence: fence,
            notifications: shared.notifications, alerting: shared.alerting
        ) { [tracker] document, committedBefore in
            tracker.withLock { tracker in
                let (now, time) = (ContinuousClock.now, Timestamp.now)
                var observed: [SensorEvent] = []
                for sensor in document.sensors {
                    guard let events = tracker.catchUp(with: sensor, now: now, time: time) else { continue }
                    observed += events
                }
                let (result, stepEvents) = step(&tracker, committedBefore)
                let events = observed + stepEvents
                let records = tracker.takeRecords(events: events)
                for record in records { document.record(record) }
                taken.withLock { $0 = (result, records, observed) }
                return events
            }
        }
        guard let fresh = committed else { return nil }
        guard let (result, records, observed) = taken.withLock({ $0 }) else {
            throw .unavailable(location: shared.registry.location, reason: "the database has no registry")
        }
        if !fresh.isEmpty { shared.outboxChanged() }
        let ids = Set(fresh.map(\.id))
        journal.append(
            records.map { record in
                var record = record
                record.events.removeAll { !ids.contains($0.id) }
                return record
            })
        // Alerts that seeing another agent's values raised or cleared here: counted and logged like a message's.
        note(observed, fresh: ids)
        return (result, ids)
    }

    /// Takes on what the store holds for a partition's sensors, in steps of 500: the agent that held the partition
    /// before committed their statuses, and their silence deadlines are armed from their last updates. Returns
    /// whether it could (the database answered).
    func catchUp(partition: Int, _ shared: SharedIngest) async -> Bool {
        let topics = tracker.withLock { $0.topics(by: shared.partitions)[partition] }.sorted()
        for start in stride(from: 0, to: topics.count, by: 500) {
            let chunk = Set(topics[start..<min(start + 500, topics.count)])
            do {
                _ = try await commit(chunk, shared) { _, _ in ((), []) }
            } catch {
                errors?.record("could not read partition \(partition)'s sensors from the store: \(error)")
                return false
            }
        }
        return true
    }

    /// `commit` for work that is not a partition's messages (a silence check, thresholds, a session from the API):
    /// under the rows' locks only, whichever agent holds the sensors' partition.
    func commit<T: Sendable>(
        _ topics: Set<String>, _ shared: SharedIngest,
        _ step: @escaping @Sendable (inout SensorTracker, _ committedBefore: Set<Int>) -> (T, [SensorEvent])
    ) async throws(StoreError) -> (T, fresh: Set<String>) {
        guard let committed = try await commit(topics, shared, deliveries: nil, fence: nil, step) else {
            throw .database(location: shared.registry.location, reason: "a step without a lease was refused")
        }
        return committed
    }

    /// A cluster's silence check: the sensors of the partitions this agent holds whose deadline passed (and those
    /// with a threshold waiting for its `for:` or a session a gap may end), looked at again under their rows' locks, in
    /// one step. Each partition's holder checks its own sensors: its tracker has their every message.
    func checkSilence(_ shared: SharedIngest) async {
        let owned = shared.owned()
        // Those a check that could not be committed left: their rows decide again.
        let retried = silenceRetries.withLock { retries in
            retries = retries.filter(owned)
            return retries
        }
        let (candidates, candidateTopics) = tracker.withLock { $0.takeSilenceCandidates(now: .now, owned: owned) }
        let due = candidates.union(retried)
        let topics = candidateTopics.union(retried)
        guard !topics.isEmpty else { return }
        do {
            let (events, fresh) = try await commit(topics, shared) { tracker, _ in
                let events = tracker.silence(topics, due: due, now: .now, time: .now)
                return (events, events)
            }
            silenceRetries.withLock { $0.subtract(retried) }
            note(events, fresh: fresh)
        } catch {
            // The step may have marked them offline in the tracker: the next check takes their rows again.
            silenceRetries.withLock { $0.formUnion(due) }
            errors?.record("could not commit a silence check to the store: \(error)")
        }
    }

    /// `session(_:sensor:)` in a cluster: committed in a step of its own.
    func session(_ action: SessionAction, sensor name: String, _ shared: SharedIngest) async throws
        -> SensorTracker.Outcome
    {
        guard let topic = tracker.withLock({ $0.topic(ofSensor: name) }) else { return .rejected(.unknownTopic) }
        let (outcome, fresh) = try await commit([topic], shared) { tracker, _ in
            let outcome = tracker.session(action, topic: topic, time: .now)
            return (outcome, outcome.events)
        }
        note(outcome.events, fresh: fresh)
        return outcome
    }

    /// The QoS 1/2 messages of `batch` by packet id, in the order they arrived (one packet id once: its last
    /// message), with a digest of their topic and payload (FNV-1a, 64 bits): what tells a message the broker sent
    /// again from another that reuses its packet id.
    static func deliveries(_ batch: [MQTTMessage], session: String) -> PostgresRegistry.Deliveries? {
        var last: [Int: Int] = [:]
        for (index, message) in batch.enumerated() where message.qos != .atMostOnce { last[message.packetID] = index }
        let messages = batch.indices.filter { last[batch[$0].packetID] == $0 }.map { index -> (Int, String) in
            let message = batch[index]
            let digest = RecentDeliveries.digest(topic: message.topic, payload: message.payload)
            return (message.packetID, String(digest, radix: 16))
        }
        guard !messages.isEmpty else { return nil }
        return PostgresRegistry.Deliveries(session: session, messages: messages)
    }
}
