import Foundation
import HubCore
import HubRemote
import HubSupport
import Logging
import Mosquitto
import ServiceLifecycle

/// In a cluster: takes over the MQTT session of an agent that stopped or died. Its persistent session keeps its turn
/// of the shared subscriptions (Mosquitto queues that agent's share for it), so without this its share of a burst
/// would wait for it to come back. The agent that takes the `adopt:<agent>` lease connects with the other's client
/// id, takes what was queued and what keeps coming through the same shared ingest (which does not care who takes a
/// message), and lets go when the agent is alive again: its own connection takes the session back (the broker
/// disconnects the adopting one, which does not reconnect), and whatever the adopting client had not had committed
/// is sent to the agent again (acknowledgements are held until a commit).
final class SessionAdopter: Service, Sendable {
    private let keeper: LeaseKeeper
    private let connection: BrokerConnection
    private let ingest: Ingest
    private let logger: Logger
    private let adoptions = Locked<[String: Adoption]>([:])

    struct Adoption: Sendable {
        var lease: LeaseState
        var client: MosquittoClient?
        /// Takes the client's messages until it is disconnected.
        var task: Task<Void, Never>?
    }

    init(keeper: LeaseKeeper, connection: BrokerConnection, ingest: Ingest, logger: Logger) {
        self.keeper = keeper
        self.connection = connection
        self.ingest = ingest
        self.logger = logger
    }

    private var database: ClusterDatabase { keeper.database }

    func run() async {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                await self.tick()
                try? await Task.sleep(for: self.database.settings.renewal)
            }
        }
        let adopted = adoptions.withLock { adoptions in
            defer { adoptions = [:] }
            return adoptions
        }
        for adoption in adopted.values {
            await adoption.client?.disconnect()
            await adoption.task?.value
        }
        try? await database.release(adopted.keys.map(Self.duty))
    }

    static func duty(_ agent: String) -> String { "adopt:\(agent)" }

    /// One renewal: lets go of agents alive again, asks for the leases on those that are not, and connects as the
    /// ones it holds.
    private func tick() async {
        let me = database.settings.agent
        let agents: [ClusterDatabase.Agent]
        do {
            agents = try await database.agents()
        } catch {
            logger.debug("could not list the cluster's agents", metadata: ["error": "\(error)"])
            return
        }
        let gone = agents.filter { !$0.alive && $0.name != me }.map(\.name)
        let back = adoptions.withLock { adoptions in adoptions.keys.filter { !gone.contains($0) } }
        for agent in back { await letGo(agent, because: "it is alive again") }
        if !back.isEmpty { try? await database.release(back.map(Self.duty)) }
        guard !gone.isEmpty else { return }
        let sent = ContinuousClock.now
        let granted: [String: Int64?]
        do {
            granted = try await database.renew(wanted: gone.map(Self.duty), started: keeper.started)
        } catch {
            // Nothing changes: a lease held runs out by this agent's clock (`LeaseState`), not at the first failure.
            logger.debug("could not renew the adoption leases", metadata: ["error": "\(error)"])
            let now = ContinuousClock.now
            let lapsed = adoptions.withLock { adoptions in
                adoptions.filter { !$0.value.lease.isHeld(at: now) && $0.value.client != nil }.map(\.key)
            }
            for agent in lapsed { await letGo(agent, because: "its lease ran out unrenewed") }
            return
        }
        let lease = database.settings.lease
        for agent in gone {
            let (held, client) = adoptions.withLock { adoptions in
                var adoption = adoptions[agent] ?? Adoption(lease: LeaseState(lease: lease))
                adoption.lease.renewed(sentAt: sent, epoch: granted[Self.duty(agent)] ?? nil)
                adoptions[agent] = adoption
                return (adoption.lease.isHeld(at: .now), adoption.client)
            }
            if held && client == nil {
                await adopt(agent)
            } else if !held {
                await letGo(agent, because: "another agent holds its lease")
                adoptions.withLock { _ = $0.removeValue(forKey: agent) }
            }
        }
    }

    private func adopt(_ agent: String) async {
        let client = MosquittoClient(configuration: connection.adoptionConfiguration(agent: agent), logger: logger)
        do {
            try await client.connect()
        } catch {
            logger.warning(
                "could not connect as a stopped agent to take its share",
                metadata: ["agent": "\(agent)", "error": "\(error)"])
            return
        }
        logger.notice("took over a stopped agent's MQTT session", metadata: ["agent": "\(agent)"])
        adoptions.withLock { $0[agent]?.client = client }
        let task = Task {
            await withTaskGroup(of: Void.self) { inner in
                // Disconnected (the agent came back and took its session, or the broker went): no reconnect.
                inner.addTask {
                    for await event in client.events {
                        if case .disconnected = event { break }
                        if case .closed = event { return }
                    }
                    await client.disconnect()
                }
                inner.addTask { await self.ingest.consumeAdopted(client) }
            }
            self.adoptions.withLock { adoptions in
                if adoptions[agent]?.client === client { adoptions[agent]?.client = nil }
            }
            self.logger.notice("let go of a stopped agent's MQTT session", metadata: ["agent": "\(agent)"])
        }
        adoptions.withLock { adoptions in
            if adoptions[agent]?.client === client { adoptions[agent]?.task = task }
        }
    }

    private func letGo(_ agent: String, because reason: String) async {
        guard let adoption = adoptions.withLock({ $0.removeValue(forKey: agent) }), let client = adoption.client
        else { return }
        logger.info("letting go of an adopted MQTT session", metadata: ["agent": "\(agent)", "reason": "\(reason)"])
        await client.disconnect()
        await adoption.task?.value
    }
}
