import Foundation
import HubCore
import HubSupport
import Logging
import Mosquitto
import ServiceLifecycle
import Synchronization

/// Where readings go besides the journal's records (the queues to a PostgreSQL store, durable on their own), without
/// blocking. The history takes them with statuses and events from the journal (`JournalConsumer`): a new sink of
/// events is one service conforming to that, named in `Hub`.
protocol ReadingSink: Sendable {
    func accept(_ reading: RecordedReading)
}

/// A service that listens to topics of its own on the hub's connection (device discovery's, Home Assistant's
/// birth): the subscriptions service subscribes to its filters, ingest offers it every message no sensor takes.
protocol TopicListener: Sendable {
    /// Its topic filters, subscribed to after the sensors' topics, one batch after another.
    var filters: [[String]] { get }
    /// Takes a message on a topic no sensor uses; returns whether it was one of its own. Must not block.
    func offer(topic: String, payload: [UInt8], retained: Bool) -> Bool
}

/// Messages become statuses and events: every message of the connected client goes through the tracker (a value
/// type with the rules), every status it changes goes to the journal with the events the change caused, and silence
/// is looked for when a sensor's deadline passes (`Ingest+Silence.swift`).
///
/// Owns the tracker: the subscriptions service asks it to follow the registry, snapshots read it. One lock, no actor
/// hop per message.
final class Ingest: Service, Sendable {
    let tracker: Locked<SensorTracker>
    let counters = Locked(Counters())
    /// Messages taken that were not retained replays (what publishers sent since): how `Subscriptions` sees a flood.
    let liveMessages = Atomic<Int>(0)
    /// Whether the hub subscribes through covering filters (`sensors.subscribe`): a message they bring on a topic
    /// no sensor uses is expected then, counted as `not_a_sensor` and not logged.
    let coversTopics = Atomic<Bool>(false)
    /// Rung at every `FloodWatch.step`th of those: what the watch for floods sleeps on.
    let floodBell = Doorbell()
    private let rejections = Locked<[Rejection: LogThrottle]>([:])
    private let clients: AsyncStream<MosquittoClient>
    let journal: Journal
    private let readings: [any ReadingSink]
    /// Take the messages on topics no sensor uses (`discovery:`, Home Assistant's birth).
    private let listeners: [any TopicListener]
    /// In a cluster: where every change is committed before it is journaled here (`Ingest+Cluster.swift`).
    let shared: SharedIngest?
    /// In a cluster: sensors a silence check could not commit, looked at again by the next.
    let silenceRetries = Locked<Set<String>>([])
    let errors: ErrorRecorder?
    let logger: Logger
    /// When a hub on its own looks for silent sensors next (`Ingest+Silence.swift`), and what wakes it sooner.
    let silencePlan = Locked(SilencePlan())
    let silenceBell = Doorbell()
    /// `sensors.sync_delay`: how long a burst's `fsync` may wait for the next bursts'.
    let syncDelay: Locked<Duration>

    struct Counters {
        var messages = 0
        var changes = 0
        var rejected: [String: Int] = [:]
    }

    /// - Parameter clients: each client the connection makes, in turn; it finishes the stream when it stops.
    init(
        tracker: SensorTracker, clients: AsyncStream<MosquittoClient>, journal: Journal, readings: [any ReadingSink],
        listeners: [any TopicListener] = [],
        syncDelay: Duration = .zero, shared: SharedIngest? = nil, errors: ErrorRecorder? = nil, logger: Logger
    ) {
        self.syncDelay = Locked(syncDelay)
        self.shared = shared
        self.errors = errors
        self.tracker = Locked(tracker)
        self.clients = clients
        self.journal = journal
        self.readings = readings
        self.listeners = listeners
        self.logger = logger
    }

    /// Until the connection has closed for good and the service is asked to stop: every message that arrived before
    /// the client closed is ingested, journaled, and handed to the journal's consumers.
    func run() async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                if let shared = self.shared {
                    await every(Self.silenceCadence) { await self.checkSilence(shared) }
                } else {
                    await self.watchSilence()
                }
            }
            for await client in clients { await consume(client) }
            try? await gracefulShutdown()
            group.cancelAll()
        }
        await journal.flushed()
    }

    private func consume(_ client: MosquittoClient) async {
        // In a cluster the sensors' messages come through the partitions' sessions (`consumePartition`); this
        // agent's own connection hears the listeners' topics only.
        if shared != nil {
            for await message in client.messages { account(.rejected(.unknownTopic), of: message, recorded: nil) }
            return
        }
        // On the network thread, each burst as it is read: applied, journaled and written there, routed from the
        // written records, and confirmed once flushed to disk, so that its acknowledgements go out from that thread.
        // No hand-off between threads on the way. The `fsync` is shared: the thread reads on while a burst waits
        // for it, up to `sensors.sync_delay` or `putOffAtMost` messages.
        let holds = client.holdsAcknowledgements
        let putOff = Locked(PutOff())
        await client.consumeOnNetworkThread(
            { batch in
                for message in batch { self.apply(message, holds: holds) }
                guard let last = batch.last else { return nil }
                let delay = self.syncDelay.withLock { $0 }
                let held = holds ? batch.count(where: { $0.qos != .atMostOnce }) : 0
                // Read for each burst: a reconnect may have fallen back to MQTT 3.1.1.
                let most = client.receiveWindow.map { min(max(1, $0 / 2), Self.putOffAtMost) } ?? 0
                let due = putOff.withLock { putOff -> ContinuousClock.Instant? in
                    putOff.through = last.number
                    putOff.count += held
                    guard held > 0, delay > .zero, putOff.count < most else { return nil }
                    let since = putOff.since ?? .now
                    putOff.since = since
                    return since + delay
                }
                // Written (and routed); flushed to disk now unless the `fsync` can wait for the next bursts.
                guard self.journal.commitNow(syncing: due == nil) else { return due }
                self.confirm(client, putOff)
                return nil
            },
            due: {
                self.journal.syncNow()
                self.confirm(client, putOff)
            })
    }

    /// How many held messages a burst's `fsync` waits for at most: below any broker's window of unacknowledged
    /// messages, and half of it where the broker says (the broker stops sending at it, and they would wait out
    /// `sync_delay`): hubd's Receive Maximum is 200, which Mosquitto takes; EMQX takes the lower of it and its own
    /// `max_inflight`, 32 by default. In MQTT 3.1.1 the window is the broker's `max_inflight_messages`, which hubd
    /// can't know: nothing is put off. 64: a home's 4 statuses a second share an `fsync` for the whole 10 s
    /// (`bench/home.sh`), where 16 made one every 4 s.
    static let putOffAtMost = 64

    /// What the network thread's consumer has taken and not confirmed: how many held messages, since when, up to
    /// which message.
    private struct PutOff {
        var count = 0
        var since: ContinuousClock.Instant?
        var through = 0
    }

    /// Everything taken is durable (its changes and its messages' ids): the client acknowledges it to the broker.
    private func confirm(_ client: MosquittoClient, _ putOff: Locked<PutOff>) {
        let through = putOff.withLock { putOff in
            defer { putOff = PutOff(through: putOff.through) }
            return putOff.through
        }
        if through > 0 { client.confirm(through: through) }
    }

    /// Applies one message to the tracker and appends what it changed to the journal, for the burst's commit.
    /// - Parameter holds: whether the client holds acknowledgements until confirmed.
    private func apply(_ message: MQTTMessage, holds: Bool) {
        if !message.retain, liveMessages.add(1, ordering: .relaxed).newValue % FloodWatch.step == 0 {
            floodBell.ring()
        }
        // A held message is journaled with its packet id: one the broker sends again (no acknowledgement reached it
        // before hubd died, or before the connection dropped) is known, acknowledged, and not applied twice.
        let delivery = !holds || message.qos == .atMostOnce ? nil : Journal.Delivery(message)
        if let delivery, journal.wasApplied(delivery) {
            account(.rejected(.redelivered), of: message, recorded: nil)
            return
        }
        let (outcome, recorded, records) = changeTracker { tracker in
            let outcome = tracker.ingest(
                topic: message.topic, payload: message.payload, retained: message.retain, time: .now, now: .now)
            let recorded = outcome.reading.map { tracker.recorded($0, topic: message.topic) }
            var records = tracker.takeRecords(events: outcome.events)
            // The reading goes with its sensor's record: the history takes it from the journal.
            if let recorded, let index = records.firstIndex(where: { $0.topic == message.topic }) {
                records[index].reading = recorded
            }
            return (outcome, recorded, records)
        }
        journal.append(records, delivery: delivery, scheduling: false)
        account(outcome, of: message, recorded: recorded)
    }

    /// Counts and logs what a message did, hands its reading to the sinks, and offers a message on a topic no sensor
    /// uses to the listeners.
    /// - Parameter fresh: the ids of the events a cluster's step committed (it finds some committed already); nil
    ///   outside a cluster, where every event is new (and the hot path filters nothing).
    func account(
        _ outcome: SensorTracker.Outcome, of message: MQTTMessage, recorded: RecordedReading?,
        fresh: Set<String>? = nil
    ) {
        switch outcome {
        case .event(let event):
            let made = fresh?.contains(event.id) ?? true
            counters.withLock {
                $0.messages += 1
                if made { $0.changes += 1 }
            }
            if made { log(event) }
        case .events(let events):
            note(events, fresh: fresh, messages: 1)
        case .reading(_, _, let events):
            note(events, fresh: fresh, messages: 1)
            if let recorded { for sink in readings { sink.accept(recorded) } }
        case .unchanged:
            counters.withLock { $0.messages += 1 }
        case .rejected(.unknownTopic)
        where listeners.contains(where: {
            $0.offer(topic: message.topic, payload: message.payload, retained: message.retain)
        }):
            // A device discovery listens for (not a sensor yet), or Home Assistant's birth.
            counters.withLock { $0.messages += 1 }
        case .rejected(.unknownTopic) where coversTopics.load(ordering: .relaxed):
            counters.withLock {
                $0.messages += 1
                $0.rejected[Self.notASensor, default: 0] += 1
            }
        case .rejected(let reason):
            counters.withLock {
                $0.messages += 1
                $0.rejected[reason.rawValue, default: 0] += 1
            }
            noteRejection(reason, topic: message.topic, size: message.payload.count)
        }
    }

    /// What a covering filter brought on a topic no sensor uses is counted as (`rejected`, not logged).
    static let notASensor = "not_a_sensor"

    /// Counts `messages` and the events of `events` that are new (those in `fresh`, every one without it), and logs
    /// each of those.
    func note(_ events: [SensorEvent], fresh: Set<String>? = nil, messages: Int = 0) {
        let made = fresh.map { fresh in events.filter { fresh.contains($0.id) } } ?? events
        counters.withLock {
            $0.messages += messages
            $0.changes += made.count
        }
        for event in made { log(event) }
    }

    /// Logs a rejected message: the first of each kind, then at most one line every ten seconds with a count.
    func noteRejection(_ reason: Rejection, topic: String, size: Int) {
        guard let report = rejections.withLock({ $0[reason, default: LogThrottle()].note() }) else { return }
        logger.warning(
            "rejected a message",
            metadata: [
                "reason": "\(reason.rawValue)", "topic": "\(topic)", "bytes": "\(size)",
                "rejected_since_last_report": "\(report)",
            ])
    }

    func log(_ event: SensorEvent) {
        logger.info(
            "sensor event",
            metadata: [
                "sensor": "\(event.sensor)", "event": "\(event.kind.rawValue)", "from": "\(event.oldStatus)",
                "to": "\(event.newStatus)", "topic": "\(event.topic)", "id": "\(event.id)",
            ])
    }

    func checkSilence() {
        let (events, records) = changeTracker { tracker in
            let events = tracker.checkSilence(now: .now, time: .now)
            return (events, tracker.takeRecords(events: events))
        }
        guard !events.isEmpty else { return }
        journal.append(records)
        note(events)
    }

    // MARK: - For the other services

    /// Follows the registry's sensors; returns the subscriptions that needs.
    func follow(_ document: DefaultsDocument) -> SensorTracker.Delta {
        changeTracker { $0.follow(document, now: .now) }
    }

    /// Starts or stops a mobile sensor's recording session (the API's): journaled like a control message's (in a
    /// cluster, committed first).
    func session(_ action: SessionAction, sensor name: String) async throws -> SensorTracker.Outcome {
        if let shared { return try await session(action, sensor: name, shared) }
        let (outcome, records) = changeTracker { tracker -> (SensorTracker.Outcome, [JournalRecord]) in
            guard let topic = tracker.topic(ofSensor: name) else { return (.rejected(.unknownTopic), []) }
            let outcome = tracker.session(action, topic: topic, time: .now)
            return (outcome, tracker.takeRecords(events: outcome.events))
        }
        journal.append(records)
        note(outcome.events)
        return outcome
    }

    /// Every topic the hub must be subscribed to.
    var topics: [String] { tracker.withLock { $0.topics } }

    /// In a cluster: the topics each partition's session must be subscribed to.
    func topics(by partitions: ClusterPartitions) -> [Set<String>] { tracker.withLock { $0.topics(by: partitions) } }

    var sensorCount: Int { tracker.withLock { $0.count } }

    /// Messages taken since start.
    var messageCount: Int { counters.withLock { $0.messages } }

    /// Applies the settings that can change while running (SIGHUP).
    func apply(_ configuration: HubConfiguration) {
        changeTracker {
            $0.maximumStatusLength = configuration.maximumStatusLength
            $0.setDefaultSilenceTimeout(configuration.silenceTimeout, now: .now)
            $0.setThresholds(configuration.thresholds)
            $0.setSessionRules(configuration.sessions)
        }
        syncDelay.withLock { $0 = configuration.syncDelay }
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
