import Foundation
import HubCore
import HubSupport
import Logging
import Mosquitto
import ServiceLifecycle

/// Keeps the broker's subscriptions equal to the registry's sensors: the only service that subscribes and
/// unsubscribes, one change at a time, so a new client's "subscribe everything" can't race a removal. It watches
/// the registry (inotify on its file, or the database's notifications), has ingest follow each change, and hands new broker settings to the connection.
///
/// After each connection, once the backlog the broker kept has drained, it subscribes to every sensor once more:
/// the broker sends each retained status again, so hubd ends on the newest one even when the broker dropped the
/// retained replies to the first subscription (its `max_queued_messages` full of older statuses) or sent again,
/// after a restart, statuses hubd had already moved past.
final class Subscriptions: Service, Sendable {
    enum Input: Sendable {
        case storeChanged
        /// A newly connected client: subscribe it to every sensor, then say so.
        case attach(MosquittoClient, ResumeOnce)
        case detach
        /// A reconnected client has its subscriptions back.
        case restored(MosquittoClient)
        /// The backlog after `client` connected has drained: time for the second pass.
        case settled(MosquittoClient)
        /// In a cluster: a partition's newly connected client; subscribe it to its sensors' topics, then say so.
        case attachPartition(Int, MosquittoClient, ResumeOnce)
        /// In a cluster: a partition's client closed.
        case detachPartition(Int, MosquittoClient)
    }

    /// Where the connection (and the registry watcher) send their inputs; made before either service.
    struct Inputs: Sendable {
        let stream: AsyncStream<Input>
        let continuation: AsyncStream<Input>.Continuation

        init() {
            (stream, continuation) = AsyncStream.makeStream(of: Input.self)
        }

        /// Has `client` subscribed to every sensor; returns once it is, or at once if the service is gone or the
        /// caller cancelled (a continuation that nobody resumes would hang the connection loop).
        func attach(_ client: MosquittoClient) async {
            await send { .attach(client, $0) }
        }

        /// Has a partition's `client` subscribed to the partition's sensors' topics; returns once it is, or at once
        /// if the service is gone or the caller cancelled.
        func attachPartition(_ partition: Int, _ client: MosquittoClient) async {
            await send { .attachPartition(partition, client, $0) }
        }

        func detachPartition(_ partition: Int, _ client: MosquittoClient) {
            continuation.yield(.detachPartition(partition, client))
        }

        private func send(_ input: (ResumeOnce) -> Input) async {
            let subscribed = ResumeOnce()
            await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    subscribed.set(continuation)
                    if case .terminated = self.continuation.yield(input(subscribed)) { subscribed.resume() }
                }
            } onCancel: {
                subscribed.resume()
            }
        }

        func detach() { continuation.yield(.detach) }

        func restored(_ client: MosquittoClient) { continuation.yield(.restored(client)) }
    }

    private let inputs: Inputs
    private let store: any RegistryStore
    private let ingest: Ingest
    private let connection: BrokerConnection
    private let qos: MQTTQoS
    /// The listeners' topic filters (discovery's, Home Assistant's birth), subscribed to after the sensors', batch
    /// by batch (discovery's device lists first).
    private let listenerFilters: [[String]]
    /// Told of each registry followed, and whether a new client has just subscribed to it.
    private let followed: (@Sendable (DefaultsDocument, _ newClient: Bool) -> Void)?
    /// The registry version whose sensors ingest follows: set here when it reads one, and moved on by `StoreWriter`
    /// to the version each flush of statuses makes from it.
    private let followedVersion: Locked<RegistryVersion?>
    private let errors: ErrorRecorder
    private let logger: Logger
    /// In a cluster, how the sensors are shared out: their topics are subscribed on the partitions' clients, not on
    /// the agent's own connection. `nil` for a hub on its own.
    private let partitions: ClusterPartitions?
    /// `sensors.subscribe`: each sensor topic, or the filters that cover them.
    private let mode: SubscribeMode
    /// The covering filters the current client holds; empty when it holds each sensor topic.
    private let cover = Locked<Set<String>>([])

    init(
        inputs: Inputs, store: any RegistryStore, ingest: Ingest, connection: BrokerConnection, qos: Int,
        listenerFilters: [[String]] = [], followed: (@Sendable (DefaultsDocument, Bool) -> Void)? = nil,
        followedVersion: Locked<RegistryVersion?> = Locked(nil),
        partitions: ClusterPartitions? = nil, mode: SubscribeMode = .auto, errors: ErrorRecorder,
        logger: Logger
    ) {
        self.mode = mode
        self.partitions = partitions
        self.followedVersion = followedVersion
        self.listenerFilters = listenerFilters
        self.followed = followed
        self.inputs = inputs
        self.store = store
        self.ingest = ingest
        self.connection = connection
        self.qos = MQTTQoS(rawValue: Int32(qos)) ?? .atLeastOnce
        self.errors = errors
        self.logger = logger
    }

    func run() async {
        let changes = store.changes(logger: logger)
        let continuation = inputs.continuation
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await _ in changes { continuation.yield(.storeChanged) }
            }
            var client: MosquittoClient?
            var partitionClients: [Int: MosquittoClient] = [:]
            for await input in inputs.stream.cancelOnGracefulShutdown() {
                switch input {
                case .storeChanged:
                    // hubd's own status flush, every flush interval while statuses change: statuses are not what
                    // this service follows, and reading the registry back cost a decode of every sensor and held
                    // ingest's lock through a follow of every sensor (a 100,000-sensor registry, each flush).
                    guard await !isFollowed() else { break }
                    await applyStore(to: client)
                    await reconcile(partitionClients)
                    releaseIfLarge()
                case .attachPartition(let partition, let newClient, let done):
                    partitionClients[partition] = newClient
                    await reconcile([partition: newClient])
                    done.resume()
                    group.addTask { await self.settle(newClient) }
                case .detachPartition(let partition, let closed):
                    if partitionClients[partition] === closed { partitionClients[partition] = nil }
                case .attach(let newClient, let done):
                    client = newClient
                    // Changes made while there was no client are in the store: read it first (unless it is the file
                    // followed already and nobody needs the document: 100,000 sensors decode in a third of a second).
                    let known = followed == nil ? await isFollowed() : false
                    let document = known ? nil : await applyStore(to: nil)
                    await subscribeSensors(on: newClient)
                    for filters in listenerFilters { await subscribe(filters, on: newClient) }
                    if let document { followed?(document, true) }
                    done.resume()
                    releaseIfLarge()
                    group.addTask { await self.settle(newClient) }
                    if partitions == nil { group.addTask { await self.watchFloods(newClient) } }
                case .restored(let restoredClient):
                    group.addTask { await self.settle(restoredClient) }
                case .settled(let settledClient):
                    if let (partition, partitionClient) = partitionClients.first(where: { $0.value === settledClient }),
                        partitionClient.isConnected, let partitions
                    {
                        // After the backlog the broker kept for the session: every topic once more, so each retained
                        // status the broker dropped (its queue for the session full) comes after it.
                        let topics = ingest.topics(by: partitions)[partition].sorted()
                        guard !topics.isEmpty else { break }
                        await subscribe(topics, on: partitionClient)
                        logger.info(
                            "subscribed a partition again for the newest retained statuses",
                            metadata: ["partition": "\(partition)", "topics": "\(topics.count)"])
                        break
                    }
                    // Disconnected since (quiet because the broker is gone): the reconnect's own pass follows.
                    guard partitions == nil, let client, client === settledClient, client.isConnected else { break }
                    let (topics, filters) = await subscribeSensors(on: client)
                    logger.info(
                        "subscribed again for the newest retained statuses",
                        metadata: ["topics": "\(topics)", "filters": "\(filters)"])
                case .detach:
                    client = nil
                }
            }
            // The connection stopped before this service (it starts after it): nobody waits for an attach now.
            continuation.finish()
            group.cancelAll()
        }
    }

    /// Whether the registry is at a version whose sensors ingest follows already (hubd's own flush of statuses). The
    /// version was taken under the writers' lock. A file's inode can't be another's while it exists: another writer's
    /// file matches only if two writes replaced it within one tick of the file clock, the second of the same size and
    /// on the first's freed inode.
    private func isFollowed() async -> Bool {
        guard let followed = followedVersion.withLock({ $0 }), let current = await store.version() else { return false }
        return current.hasSameSensors(as: followed)
    }

    /// After a large registry was read, or subscribed to whole: what that took is freed memory now.
    private func releaseIfLarge() {
        guard let size = followedVersion.withLock({ $0?.byteCount }), size >= FreedMemory.worthReleasingAfter else {
            return
        }
        FreedMemory.release()
    }

    /// Reads the store and follows it: subscriptions for added and removed sensors, a reconnect for new broker
    /// settings. A damaged store is reported and the last good registry kept.
    @discardableResult
    private func applyStore(to client: MosquittoClient?) async -> DefaultsDocument? {
        let document: DefaultsDocument
        do {
            let (version, read) = try await store.read(ifChangedFrom: nil)
            document = read ?? DefaultsDocument()
            followedVersion.withLock { $0 = version }
        } catch {
            errors.record("the registry can't be read, so changes to it are not followed: \(error)")
            return nil
        }
        let delta = ingest.follow(document)
        if let client, !delta.isEmpty {
            let added = sensorFilters(delta.subscribe)
            await subscribe(added, on: client)
            // Under covering filters a new sensor's topic is subscribed on its own only for its retained status (the
            // broker queues that before it reads the next packet), then dropped where a filter covers it: a topic
            // held twice would bring each message twice. A removed sensor's topic may stay covered; ingest drops
            // what comes on it.
            let covering = cover.withLock { $0 }
            let covered = added.filter { topic in covering.contains { TopicRules.matches(filter: $0, topic: topic) } }
            if !covered.isEmpty {
                do {
                    try await client.unsubscribe(covered)
                } catch {
                    errors.record("could not unsubscribe from \(covered.count) covered topics: \(error)")
                }
            }
            if !delta.unsubscribe.isEmpty {
                do {
                    try await client.unsubscribe(sensorFilters(delta.unsubscribe))
                } catch {
                    errors.record("could not unsubscribe from \(delta.unsubscribe.count) topics: \(error)")
                }
            }
            logger.info(
                "followed the registry",
                metadata: ["subscribed": "\(delta.subscribe.count)", "unsubscribed": "\(delta.unsubscribe.count)"])
        }
        connection.follow(document.broker)
        if client != nil { followed?(document, false) }
        return document
    }

    /// Waits for a quiet second (`FloodWatch.isQuiet`: the backlog the broker kept, and the retained statuses, have
    /// come; at most a minute), then asks for the second pass.
    private func settle(_ client: MosquittoClient) async {
        guard await quietSecond(counting: { self.ingest.messageCount }, within: .seconds(60)) != nil else { return }
        inputs.continuation.yield(.settled(client))
    }

    /// The broker's queue for hubd counts the messages waiting beyond those in flight (20 by default), connected or
    /// not, and drops what comes past `max_queued_messages` (1,000 by default): a flood faster than hubd's journal
    /// commits can cost some sensors their newest status even while hubd is connected (FaultTests, 2026-11-28: a
    /// broker restart with hubd back before the publishers). So after a flood of live messages (`FloodWatch`;
    /// retained replays, which the pass itself brings, do not count), once a second has passed quietly, the second
    /// pass runs again: each sensor's retained newest status comes after the flood. From the first quiet second
    /// after the connection (the first pass's, `settle`) until the client is closed.
    ///
    /// It sleeps on `Ingest.floodBell`, every 500th live message, and looks once a second only while a flood lasts
    /// (and for the first quiet second): at a home's 4 statuses a second its look once a second, and `settle`'s four
    /// a second in hubd's first minute, were the timers that woke hubd (perf probe on libdispatch's
    /// `dispatch_after_f`, the sleeping function read from the task's async context: `bench/timers.sh`).
    private func watchFloods(_ client: MosquittoClient) async {
        // The backlog the broker kept for the session is the first pass's (`settle`): counted from after it.
        guard await quietSecond(client) != nil else { return }
        var watch = FloodWatch()
        while !client.isClosed && !Task.isCancelled {
            await ingest.floodBell.wait(until: nil)
            let count = ingest.liveMessages.load(ordering: .relaxed)
            guard watch.rang(count: count, at: .now) else { continue }
            guard let end = await quietSecond(client) else { return }
            watch.reset()
            logger.notice(
                "a burst may have overflowed the broker's queue for hubd; subscribing again for the newest statuses",
                metadata: ["messages": "\(end - count + FloodWatch.step)"])
            inputs.continuation.yield(.settled(client))
        }
    }

    /// Returns the live messages' count once a quiet second has passed (`FloodWatch.isQuiet`), or nil when the
    /// client closed first or the task was cancelled.
    private func quietSecond(_ client: MosquittoClient) async -> Int? {
        await quietSecond(counting: { self.ingest.liveMessages.load(ordering: .relaxed) }, unless: { client.isClosed })
    }

    /// Looks at `count` once a second and returns it after the first quiet second (`FloodWatch.isQuiet`), or once
    /// `limit` has passed; nil when the task was cancelled, or `givenUp` first.
    private func quietSecond(
        counting count: () -> Int, unless givenUp: () -> Bool = { false }, within limit: Duration? = nil
    ) async -> Int? {
        let deadline = limit.map { ContinuousClock.now + $0 }
        var last = count()
        while !givenUp() {
            guard (try? await Task.sleep(for: .seconds(1))) != nil else { return nil }
            let now = count()
            if FloodWatch.isQuiet(now - last) || deadline.map({ .now >= $0 }) == true { return now }
            last = now
        }
        return nil
    }

    /// Subscribes `client` to every sensor's topic, or to the filters that cover them (`sensors.subscribe`);
    /// returns how many topics, and how many filters that took.
    @discardableResult
    private func subscribeSensors(on client: MosquittoClient) async -> (topics: Int, filters: Int) {
        let topics = sensorFilters(ingest.topics)
        let covering = mode.covers(topics.count)
        var filters = covering ? TopicCover.filters(covering: topics) : topics
        // Only wildcard filters cover: a topic kept whole is a sensor's own subscription, which a removal takes away.
        var wildcards = Set(filters.filter { $0.contains("+") })
        if covering {
            logger.info(
                "subscribing through covering filters",
                metadata: [
                    "topics": "\(topics.count)", "filters": "\(filters.count)",
                    "first": "\(filters.prefix(5).joined(separator: " "))",
                ])
        }
        if await !subscribe(filters, on: client), covering {
            // Refused (a broker's access rules may forbid wildcards): each topic then, or the sensors would be deaf.
            logger.warning(
                "covering filters refused; subscribing to each sensor topic", metadata: ["topics": "\(topics.count)"])
            filters = topics
            wildcards = []
            await subscribe(topics, on: client)
        }
        // Filters an earlier pass held and this one does not (the mode, or the sensors, changed meanwhile).
        let dropped = cover.withLock { cover in
            defer { cover = wildcards }
            return cover.subtracting(wildcards)
        }
        ingest.coversTopics.store(!wildcards.isEmpty, ordering: .relaxed)
        if !dropped.isEmpty {
            do {
                try await client.unsubscribe(dropped.sorted())
            } catch {
                errors.record("could not unsubscribe from \(dropped.count) covering filters: \(error)")
            }
        }
        return (topics.count, filters.count)
    }

    /// The filters for sensors' topics on the agent's own connection: the topics themselves; none in a cluster, where
    /// the partitions' clients subscribe to them (`reconcile`).
    private func sensorFilters(_ topics: [String]) -> [String] {
        partitions == nil ? topics : []
    }

    /// Makes each partition client's subscriptions the topics of the partition's sensors: subscribes the new ones
    /// (the broker sends their retained statuses) and unsubscribes the ones no sensor of the partition uses.
    private func reconcile(_ clients: [Int: MosquittoClient]) async {
        guard let partitions, !clients.isEmpty else { return }
        let wanted = ingest.topics(by: partitions)
        for (partition, client) in clients.sorted(by: { $0.key < $1.key }) {
            let have = Set(client.subscriptions.keys)
            let added = wanted[partition].subtracting(have)
            let removed = have.subtracting(wanted[partition])
            await subscribe(added.sorted(), on: client)
            guard !removed.isEmpty else { continue }
            do {
                try await client.unsubscribe(removed.sorted())
            } catch {
                errors.record("could not unsubscribe partition \(partition) from \(removed.count) topics: \(error)")
            }
        }
    }

    /// Subscribes `client` to `topics`; false (recorded) when that failed.
    @discardableResult
    private func subscribe(_ topics: [String], on client: MosquittoClient) async -> Bool {
        guard !topics.isEmpty else { return true }
        do {
            try await client.subscribe(topics, qos: qos)
            return true
        } catch {
            errors.record("could not subscribe to \(topics.count) topics: \(error)")
            return false
        }
    }
}
