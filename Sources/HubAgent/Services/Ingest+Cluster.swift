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
    /// Told after a step committed new events: the router claims their notifications.
    let outboxChanged: @Sendable () -> Void
    /// How a client of its own connects to read retained statuses (`Ingest+Reread.swift`); nil: never.
    var rereadConfiguration: (@Sendable () -> MosquittoConfiguration)?
}

/// A cluster's shared ingest. A shared subscription hands one sensor's messages to different agents, so no agent's
/// tracker has a sensor's whole story: every change is made in a step that locks the sensors' rows, catches the
/// tracker up with them, applies the messages, and commits the rows and the new events in one transaction. Only
/// then are the records journaled here (for the history, Home Assistant and `remote:`) and the messages
/// acknowledged to the broker.
extension Ingest {
    /// Takes a client's messages a batch at a time (what arrived while the last batch was being committed: a group
    /// commit). A batch that cannot be committed is tried again, with back-off, until it is or hubd stops.
    func consumeShared(_ client: MosquittoClient, _ shared: SharedIngest) async {
        let confirms = client.holdsAcknowledgements
        var messages = client.messages.makeAsyncIterator()
        while let batch = await messages.nextBatch() {
            var topics = Set<String>()
            var (applied, others): ([MQTTMessage], [MQTTMessage]) = ([], [])
            tracker.withLock { tracker in
                for message in batch {
                    guard let changed = tracker.topicsChanged(byMessageOn: message.topic) else {
                        others.append(message)
                        continue
                    }
                    topics.formUnion(changed)
                    applied.append(message)
                }
            }
            // A device discovery listens for, Home Assistant's birth, or a topic nobody uses.
            for message in others { account(.rejected(.unknownTopic), of: message, recorded: nil) }
            if !applied.isEmpty {
                let applied = applied
                // A message the broker sends again (its agent died before acknowledging it) is not applied twice.
                let step = { @Sendable (tracker: inout SensorTracker, committedBefore: Set<Int>) in
                    let results = applied.map { message -> (SensorTracker.Outcome, RecordedReading?) in
                        if message.qos != .atMostOnce && committedBefore.contains(message.packetID) {
                            return (.rejected(.committedBefore), nil)
                        }
                        let outcome = tracker.ingest(
                            topic: message.topic, payload: message.payload, retained: message.retain, time: .now,
                            now: .now)
                        return (outcome, outcome.reading.map { tracker.recorded($0, topic: message.topic) })
                    }
                    return (results, results.flatMap(\.0.events))
                }
                let deliveries = Self.deliveries(applied, session: client.configuration.clientID ?? "")
                // A batch of several is a queue this agent is working through: another agent may have committed
                // newer messages of its sensors meanwhile.
                let lagging = applied.count > 1
                guard let (results, fresh) = await commitUntilDone(topics, shared, deliveries, lagging, step) else {
                    logger.error(
                        """
                        hubd is stopping before these messages could be committed; the broker sends them again \
                        unless it had their acknowledgements (after confirmation_timeout)
                        """,
                        metadata: ["messages": "\(applied.count)"])
                    return
                }
                for (message, (outcome, recorded)) in zip(applied, results) {
                    account(outcome, of: message, recorded: recorded, fresh: fresh)
                }
            }
            // The client acknowledges the batch to the broker once it is committed and journaled here.
            if confirms, let last = batch.last {
                let number = last.number
                journal.whenDurable(journal.lastPosition) { client.confirm(through: number) }
            }
        }
    }

    /// Takes an adopted session's messages (`SessionAdopter`) until its client closes.
    func consumeAdopted(_ client: MosquittoClient) async {
        guard let shared else { return }
        await consumeShared(client, shared)
    }

    /// `commit`, tried again after 0.5 s, 1 s, … 5 s while it fails; nil when hubd stops first.
    private func commitUntilDone<T: Sendable>(
        _ topics: Set<String>, _ shared: SharedIngest, _ deliveries: PostgresRegistry.Deliveries?, _ lagging: Bool,
        _ step: @escaping @Sendable (inout SensorTracker, Set<Int>) -> (T, [SensorEvent])
    ) async -> (T, fresh: Set<String>)? {
        var pause = Duration.milliseconds(500)
        while true {
            do {
                return try await commit(topics, shared, deliveries: deliveries, lagging: lagging, step)
            } catch {
                errors?.record("could not commit \(topics.count) sensors' statuses to the store: \(error)")
                if Task.isShuttingDownGracefully || Task.isCancelled { return nil }
                try? await Task.sleep(for: pause)
                pause = min(pause * 2, .seconds(5))
            }
        }
    }

    /// One step: locks the rows of `topics`, catches the tracker up with them, runs `step` on it, and commits the
    /// rows it changed with the events it made; then journals the records here, with only the events the database
    /// did not have (a message applied twice makes none). Returns what `step` returned and the ids of those events.
    /// When it throws, nothing was committed, and the tracker's next step on these sensors takes their rows as they
    /// are. Sensors whose rows another agent had changed a moment ago (or, when `lagging`, in the last seconds) may
    /// have been committed out of order: they are read again from the retained messages (`Ingest+Reread.swift`).
    func commit<T: Sendable>(
        _ topics: Set<String>, _ shared: SharedIngest, deliveries: PostgresRegistry.Deliveries? = nil,
        lagging: Bool = false,
        _ step: @escaping @Sendable (inout SensorTracker, _ committedBefore: Set<Int>) -> (T, [SensorEvent])
    ) async throws(StoreError) -> (T, fresh: Set<String>) {
        let taken = Locked<(T, [JournalRecord], contended: [String], observed: [SensorEvent])?>(nil)
        let fresh = try await shared.registry.ingest(
            onTopics: Array(topics), hub: shared.hub, deliveries: deliveries, notifications: shared.notifications
        ) { [tracker] document, committedBefore in
            tracker.withLock { tracker in
                let (now, time) = (ContinuousClock.now, Timestamp.now)
                var contended: [String] = []
                var observed: [SensorEvent] = []
                for sensor in document.sensors {
                    guard let events = tracker.catchUp(with: sensor, now: now, time: time) else { continue }
                    observed += events
                    // Another agent changed it while this one worked through a queue, or a moment ago: their messages
                    // may be out of order.
                    let ago = sensor.lastUpdated.map { last in
                        time.millisecondsSince1970 - last.millisecondsSince1970
                    }
                    if (ago ?? Int64.max) < (lagging ? Self.laggingWindow : Self.contentionWindow) {
                        contended.append(sensor.topic)
                    }
                }
                let (result, stepEvents) = step(&tracker, committedBefore)
                let events = observed + stepEvents
                let records = tracker.takeRecords(events: events)
                for record in records { document.record(record) }
                taken.withLock { $0 = (result, records, contended, observed) }
                return events
            }
        }
        guard let (result, records, contended, observed) = taken.withLock({ $0 }) else {
            throw .unavailable(location: shared.registry.location, reason: "the database has no registry")
        }
        noteContended(contended)
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

    /// The silence check of the agent that holds the `silence` duty: the sensors whose deadline passed, looked at
    /// again under their rows' locks (another agent may have heard from them), in one step. The other agents tick
    /// the breaches they saw begin.
    func checkSilence(_ shared: SharedIngest) async {
        guard checksSilence() else {
            // Breaches this agent saw begin: it alerts on those whose `for:` is over, under their rows (another
            // agent's value there may have ended the breach, or its alert be raised already).
            let due = tracker.withLock { tracker in
                tracker.compactDeadlines()
                return tracker.dueThresholds(time: .now)
            }
            guard !due.isEmpty else { return }
            do {
                let (events, fresh) = try await commit(due, shared) { tracker, _ in
                    let events = tracker.tickThresholds(time: .now, among: due)
                    return (events, events)
                }
                note(events, fresh: fresh)
            } catch {
                errors?.record("could not commit \(due.count) sensors' threshold alerts to the store: \(error)")
            }
            return
        }
        // Those a check that could not be committed left: their rows decide again.
        let retried = silenceRetries.withLock { $0 }
        let (candidates, candidateTopics) = tracker.withLock { $0.takeSilenceCandidates(now: .now) }
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
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            func add(_ byte: UInt8) { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
            for byte in message.topic.utf8 { add(byte) }
            add(0)
            for byte in message.payload { add(byte) }
            return (message.packetID, String(hash, radix: 16))
        }
        guard !messages.isEmpty else { return nil }
        return PostgresRegistry.Deliveries(session: session, messages: messages)
    }
}
