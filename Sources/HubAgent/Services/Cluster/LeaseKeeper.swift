import Foundation
import HubCore
import HubRemote
import HubSupport
import Logging
import ServiceLifecycle

/// In a cluster (`cluster:` in hubd.yaml): says every renewal (a third of the lease) that this agent is alive, and
/// holds those of its duties no live agent holds — what must be done once however many agents run. A service asks
/// `holds(_:)` before doing one. A holder that can't renew gives its duties up when its lease (less a margin) has run
/// out by its own clock, before the database could hand them on; a graceful stop gives them up at once, so another
/// agent takes them at its next renewal. Takeover after a holder dies: within the lease plus one renewal.
final class LeaseKeeper: Service, Sendable {
    /// What must be done by one agent of the cluster, by the name its lease has.
    struct Duty: Hashable, Sendable {
        let rawValue: String

        /// Saying the hub is `online` (each agent's will says `offline` when it dies, though the others run).
        static let availability = Duty(rawValue: "availability")
        /// Home Assistant's discovery configs and the hub's availability for it.
        static let homeAssistant = Duty(rawValue: "homeassistant")
        /// Adding the devices heard on the broker.
        static let discovery = Duty(rawValue: "discovery")
        /// Keeping the alert book (`ClusterAlertBook`), and listening for people's buttons.
        static let alerts = Duty(rawValue: "alerts")

        /// Driving the SDS011 that makes the sensor `name`, wherever it is plugged in.
        static func sds011(_ name: String) -> Duty { Duty(rawValue: "sds011:" + name) }
        /// Polling the feed `name`.
        static func feed(_ name: String) -> Duty { Duty(rawValue: "feed:" + name) }
        /// Publishing the UV index of the sensor `name`.
        static func uv(_ name: String) -> Duty { Duty(rawValue: "uv:" + name) }
    }

    let database: ClusterDatabase
    private let wanted: [Duty]
    /// When this agent started, as its renewals say.
    let started = Timestamp.now
    private let leases: Locked<[Duty: LeaseState]>
    /// Rung to renew now rather than at the next renewal (another agent announced a change).
    private let soon = Doorbell()
    /// Stopping: it keeps its duties until it gives them up, but is no longer counted among the live agents.
    private let leaving = Locked(false)
    private let logger: Logger

    init(database: ClusterDatabase, duties: [Duty], logger: Logger) {
        self.database = database
        wanted = duties
        let lease = database.settings.lease
        leases = Locked(Dictionary(uniqueKeysWithValues: duties.map { ($0, LeaseState(lease: lease)) }))
        self.logger = logger
    }

    /// Whether this agent may do `duty` now.
    func holds(_ duty: Duty) -> Bool {
        let now = ContinuousClock.now
        return leases.withLock { $0[duty]?.isHeld(at: now) ?? false }
    }

    /// What work on `duty` is fenced with while this agent holds it: the lease at the epoch it was granted.
    func fence(of duty: Duty) -> PostgresRegistry.Fence? {
        let now = ContinuousClock.now
        let epoch = leases.withLock { leases in leases[duty].flatMap { $0.isHeld(at: now) ? $0.epoch : nil } }
        return epoch.map { PostgresRegistry.Fence(database.settings, duty: duty.rawValue, epoch: $0) }
    }

    /// The duties held now, by name.
    var held: [String] {
        let now = ContinuousClock.now
        return leases.withLock { leases in leases.filter { $0.value.isHeld(at: now) }.map(\.key.rawValue).sorted() }
    }

    /// Renews at once: another agent joined, is leaving or gave up leases.
    func renewSoon() { soon.ring() }

    /// Says at once, and at each renewal until it stops, that this agent is leaving: the others stop counting it among
    /// the agents that share the partitions, and take those it gives up.
    func markLeaving() async {
        leaving.withLock { $0 = true }
        do {
            _ = try await database.renew(wanted: [], started: started, leaving: true)
        } catch {
            logger.warning(
                "could not tell the cluster this agent is leaving; the others see it when its lease runs out",
                metadata: ["error": "\(PostgresRegistry.reason(error))"])
        }
    }

    /// Whether `markLeaving()` was called.
    var isLeaving: Bool { leaving.withLock { $0 } }

    func run() async {
        await cancelWhenGracefulShutdown { await self.renewUntilCancelled() }
        let before = held
        leases.withLock { leases in for duty in wanted { leases[duty]?.release() } }
        report(from: before)
        do {
            try await database.leave()
        } catch {
            logger.warning(
                "could not give up the cluster's leases; the other agents take them when they run out",
                metadata: ["error": "\(PostgresRegistry.reason(error))"])
            await database.close()
        }
    }

    private func renewUntilCancelled() async {
        var failures = 0
        while !Task.isCancelled {
            let before = held
            let sent = ContinuousClock.now
            do {
                let granted = try await database.renew(
                    wanted: wanted.map(\.rawValue), started: started, leaving: isLeaving)
                leases.withLock { leases in
                    for duty in wanted { leases[duty]?.renewed(sentAt: sent, epoch: granted[duty.rawValue] ?? nil) }
                }
                if failures > 0 { logger.notice("renewing the cluster's leases again", metadata: [:]) }
                failures = 0
            } catch {
                failures += 1
                if failures == 1 {
                    logger.warning(
                        "cannot renew the cluster's leases; duties held are given up when their lease runs out",
                        metadata: ["error": "\(PostgresRegistry.reason(error))"])
                }
            }
            report(from: before)
            await soon.wait(until: .now + database.settings.renewal)
        }
    }

    /// Logs the duties taken and given up since `before`.
    private func report(from before: [String]) {
        let now = held
        for duty in now where !before.contains(duty) {
            logger.notice("took a cluster duty", metadata: ["duty": "\(duty)", "agent": "\(database.settings.agent)"])
        }
        for duty in before where !now.contains(duty) {
            logger.notice(
                "gave up a cluster duty", metadata: ["duty": "\(duty)", "agent": "\(database.settings.agent)"])
        }
    }
}
