import Foundation
import HubCore
import HubRemote
import HubSupport
import Logging
import Mosquitto
import ServiceLifecycle

/// In a cluster: holds this agent's share of the partitions (`ClusterPartitions`, docs/cluster.md). At every renewal,
/// and at once when another agent announces a change, it reads which agents are alive, works out which partitions are
/// this agent's, gives up the others (their client closed first, so what it took and did not commit goes to the next
/// holder), asks for its own, and connects to the session of each it was granted: the broker sends what it kept for
/// the session while nobody held it, in order, and the subscriptions service subscribes the session to its sensors'
/// topics. Ingest applies each session's messages under the partition's lease (`consumePartition`), and takes on its
/// sensors' rows (`catchUp`), after which this agent watches their silence.
///
/// A partition's client does not reconnect by itself: a connection the broker closed may have been taken over by the
/// partition's next holder (same client id), so this service connects again only while the partition's lease is
/// this agent's. A lease that could not be renewed is given up when it runs out by this agent's clock. On a graceful
/// stop the agent first says it is leaving (the others stop counting it), then gives every partition up and says so:
/// the others take them within a round trip, not a lease.
final class PartitionKeeper: Service, Sendable {
    private let keeper: LeaseKeeper
    private let connection: BrokerConnection
    private let ingest: Ingest
    private let shared: SharedIngest
    private let subscriptions: Subscriptions.Inputs
    private let logger: Logger
    private let held = Locked<[Int: Held]>([:])
    /// Rung to look again now: another agent's announcement, a partition's client that closed.
    private let soon = Doorbell()
    /// Opened once this agent's whole share is connected (or its share is nothing): the agent's own connection says
    /// the hub is ready after that (or after a lease without), so the sessions exist before anyone counts on them.
    private let firstShare: Latch

    struct Held: Sendable {
        var lease: LeaseState
        var client: MosquittoClient?
        /// Takes the client's messages until it closes.
        var task: Task<Void, Never>?
        /// Connections that failed in a row, and when to try again.
        var failures = 0
        var retryAt: ContinuousClock.Instant?
    }

    init(
        keeper: LeaseKeeper, connection: BrokerConnection, ingest: Ingest, shared: SharedIngest,
        subscriptions: Subscriptions.Inputs, firstShare: Latch, logger: Logger
    ) {
        self.firstShare = firstShare
        self.keeper = keeper
        self.connection = connection
        self.ingest = ingest
        self.shared = shared
        self.subscriptions = subscriptions
        self.logger = logger
    }

    private var database: ClusterDatabase { keeper.database }
    private var partitions: ClusterPartitions { shared.partitions }

    func run() async {
        let changes = database.changes(logger: logger)
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await _ in changes {
                    self.soon.ring()
                    self.keeper.renewSoon()
                }
            }
            await cancelWhenGracefulShutdown {
                while !Task.isCancelled {
                    await self.tick()
                    await self.soon.wait(until: self.nextLook())
                }
            }
            // Not counted among the live agents any more, then every partition given up and announced.
            await keeper.markLeaving()
            let all = held.withLock { Set($0.keys) }
            await release(all, because: "hubd is stopping")
            group.cancelAll()
        }
    }

    /// The next renewal, a retry that comes due or a lease that runs out, whichever is first.
    private func nextLook() -> ContinuousClock.Instant {
        var next = ContinuousClock.now + database.settings.renewal
        held.withLock { held in
            for entry in held.values {
                if let retry = entry.retryAt, entry.client == nil { next = min(next, retry) }
                if let until = entry.lease.heldUntil { next = min(next, until) }
            }
        }
        return next
    }

    /// One look: the live agents, this agent's share, what to give up, what to ask for, what to connect.
    private func tick() async {
        let me = database.settings.agent
        let alive: [String]
        do {
            alive = try await database.agents().filter(\.alive).map(\.name)
        } catch {
            logger.debug("could not list the cluster's agents", metadata: ["error": "\(error)"])
            await closeLapsed()
            return
        }
        // Leaving: its share is nothing, and the others no longer count it.
        let mine = keeper.isLeaving ? [] : Set(partitions.assignment(agents: alive + [me])[me] ?? [])
        let surplus = held.withLock { Set($0.keys).subtracting(mine) }
        if !surplus.isEmpty { await release(surplus, because: "the live agents share the partitions anew") }
        guard !mine.isEmpty else { return firstShare.open() }
        let sent = ContinuousClock.now
        let granted: [String: Int64?]
        do {
            granted = try await database.renew(
                wanted: mine.map(ClusterPartitions.duty), started: keeper.started, leaving: keeper.isLeaving)
        } catch {
            // Nothing changes: a lease held runs out by this agent's clock, not at the first failure.
            logger.debug("could not renew the partitions' leases", metadata: ["error": "\(error)"])
            await closeLapsed()
            return
        }
        let lease = database.settings.lease
        var attach: [(partition: Int, epoch: Int64)] = []
        var stale: [MosquittoClient] = []
        var unwatched: [Int] = []
        held.withLock { held in
            for partition in mine.sorted() {
                let epoch = granted[ClusterPartitions.duty(partition)] ?? nil
                var entry = held[partition] ?? Held(lease: LeaseState(lease: lease))
                let before = entry.lease.epoch
                entry.lease.renewed(sentAt: sent, epoch: epoch)
                guard let epoch else {
                    // Another agent holds it: it gives it up once it has worked out the same share.
                    held[partition] = nil
                    unwatched.append(partition)
                    if let client = entry.client { stale.append(client) }
                    continue
                }
                // Taken by another agent and given back since: the client (if it is still open) works under the old
                // epoch, so its steps are refused; a new one takes over.
                if before != nil && before != epoch {
                    unwatched.append(partition)
                    if let client = entry.client { stale.append(client) }
                    entry.client = nil
                }
                held[partition] = entry
                if entry.client == nil && (entry.retryAt ?? sent) <= sent { attach.append((partition, epoch)) }
            }
        }
        unwatch(unwatched)
        for client in stale { await client.disconnect() }
        // Side by side: a new agent's share is connected in one round trip to the broker, not one after another.
        await withTaskGroup(of: Void.self) { group in
            for (partition, epoch) in attach { group.addTask { await self.attach(partition, epoch: epoch) } }
        }
        // Ready once its whole share is connected: a joining agent's comes as the others give it up.
        if held.withLock({ held in mine.allSatisfy { held[$0]?.client != nil } }) { firstShare.open() }
    }

    /// Connects to `partition`'s session (while its lease is still held) and has its messages consumed, and its
    /// sensors' rows taken on, until the client closes.
    private func attach(_ partition: Int, epoch: Int64) async {
        guard let configuration = connection.partitionConfiguration(partition),
            held.withLock({ $0[partition]?.lease.isHeld(at: .now) ?? false })
        else { return }
        let client = MosquittoClient(configuration: configuration, logger: logger)
        let sessionPresent: Bool
        do {
            sessionPresent = try await client.connect()
        } catch {
            let retry = held.withLock { held -> Duration in
                let failures = (held[partition]?.failures ?? 0) + 1
                let pause = min(Duration.milliseconds(250) * (1 << min(failures, 5)), .seconds(5))
                held[partition]?.failures = failures
                held[partition]?.retryAt = .now + pause
                return pause
            }
            logger.warning(
                "could not connect to a partition's session; trying again",
                metadata: ["partition": "\(partition)", "error": "\(error)", "retry_in": "\(retry)"])
            return
        }
        let fence = PostgresRegistry.Fence(database.settings, duty: ClusterPartitions.duty(partition), epoch: epoch)
        let isHeld: @Sendable () -> Bool = { self.isHeld(partition, by: client) }
        let kept = held.withLock { held -> Bool in
            // Given up, or lost, while connecting.
            guard held[partition]?.lease.epoch == epoch, held[partition]?.client == nil else { return false }
            held[partition]?.client = client
            held[partition]?.failures = 0
            held[partition]?.retryAt = nil
            return true
        }
        guard kept else {
            await client.disconnect()
            return
        }
        let partitionHeld = HeldPartition(
            index: partition, client: client, fence: fence, sessionIsNew: !sessionPresent, isHeld: isHeld)
        let task = Task {
            await withTaskGroup(of: Void.self) { inner in
                // Closed by the broker (restarted, or the partition's next holder connected with its client id):
                // no reconnect here; the next look connects again if the partition is still this agent's.
                inner.addTask {
                    for await event in client.events {
                        if case .disconnected = event { break }
                        if case .closed = event { return }
                    }
                    await client.disconnect()
                }
                inner.addTask {
                    _ = await self.ingest.consumePartition(partitionHeld, self.shared)
                    // Nobody takes its messages now: what it had not confirmed goes to the session's next connection.
                    await client.disconnect()
                }
                inner.addTask { await self.catchUp(partition, client: client) }
            }
            self.subscriptions.detachPartition(partition, client)
            let current = self.held.withLock { held -> Bool in
                guard held[partition]?.client === client else { return false }
                held[partition]?.client = nil
                held[partition]?.retryAt = .now + .milliseconds(500)
                return true
            }
            // Its sensors' silence is watched again once a new client has caught up (one that replaced this one
            // already said so itself).
            if current { self.unwatch([partition]) }
            self.soon.ring()
        }
        held.withLock { held in
            if held[partition]?.client === client { held[partition]?.task = task }
        }
        await subscriptions.attachPartition(partition, client)
        logger.notice(
            "took a partition",
            metadata: [
                "partition": "\(partition)", "epoch": "\(epoch)", "session_present": "\(sessionPresent)",
                "agent": "\(database.settings.agent)",
            ])
    }

    /// Takes on the rows of `partition`'s sensors (tried again every second while that fails), then watches their
    /// silence, while `isHeld`.
    private func catchUp(_ partition: Int, client: MosquittoClient) async {
        while isHeld(partition, by: client) {
            if await ingest.catchUp(partition: partition, shared) {
                // Under the same lock that gives it up or replaces its client.
                let now = ContinuousClock.now
                held.withLock { held in
                    guard let entry = held[partition], entry.client === client, entry.lease.isHeld(at: now) else {
                        return
                    }
                    shared.held.withLock { _ = $0.insert(partition) }
                }
                return
            }
            try? await Task.sleep(for: .seconds(1))
        }
    }

    /// Whether `partition` is held, by this agent's clock, with `client` connected to its session.
    private func isHeld(_ partition: Int, by client: MosquittoClient) -> Bool {
        let now = ContinuousClock.now
        return held.withLock { held in
            guard let entry = held[partition] else { return false }
            return entry.client === client && entry.lease.isHeld(at: now)
        }
    }

    /// No longer watches the silence of `partitions`' sensors (given up, lost, or closed).
    private func unwatch(_ partitions: some Sequence<Int>) {
        shared.held.withLock { $0.subtract(partitions) }
    }

    /// Closes the clients of partitions whose lease ran out by this agent's clock (it could not renew them): another
    /// agent may hold them soon.
    private func closeLapsed() async {
        let now = ContinuousClock.now
        let lapsed = held.withLock { held -> [Held] in
            let keys = held.filter { !$0.value.lease.isHeld(at: now) }.map(\.key)
            shared.held.withLock { $0.subtract(keys) }
            return keys.compactMap { held.removeValue(forKey: $0) }
        }
        guard !lapsed.isEmpty else { return }
        logger.warning(
            "could not renew partitions' leases in time; closed their sessions", metadata: ["count": "\(lapsed.count)"])
        for entry in lapsed {
            await entry.client?.disconnect()
            await entry.task?.value
        }
    }

    /// Gives up `partitions`: their clients closed, what their steps had in hand committed (or left to the next
    /// holder), their leases released and announced.
    private func release(_ partitions: Set<Int>, because reason: String) async {
        let entries = held.withLock { held in
            shared.held.withLock { $0.subtract(partitions) }
            return partitions.compactMap { held.removeValue(forKey: $0) }
        }
        guard !entries.isEmpty else { return }
        // Side by side: each waits for its last step.
        await withTaskGroup(of: Void.self) { group in
            for entry in entries {
                group.addTask {
                    await entry.client?.disconnect()
                    await entry.task?.value
                }
            }
        }
        do {
            try await database.release(partitions.map(ClusterPartitions.duty))
            logger.notice(
                "gave up partitions",
                metadata: ["partitions": "\(partitions.sorted())", "reason": "\(reason)"])
        } catch {
            logger.warning(
                "could not give up partitions; the others take them when their leases run out",
                metadata: ["partitions": "\(partitions.sorted())", "error": "\(PostgresRegistry.reason(error))"])
        }
    }
}
