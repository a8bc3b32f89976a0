import HubCore
import HubRemote
import Logging

/// A cluster as `hubctl status` shows it: the group, and every agent the database knows with what it holds.
struct ClusterView {
    var group: String
    var agents: [ClusterDatabase.Agent]
    /// Why the agents could not be read (the database is down).
    var problem: String?

    /// The configuration's cluster, read from its database; `nil` when there is none.
    static func read(_ configuration: HubConfiguration) async -> ClusterView? {
        guard let cluster = configuration.cluster, let server = configuration.store else { return nil }
        var logger = Logger(label: "hubctl")
        logger.logLevel = .warning
        let database = ClusterDatabase(server: server, settings: cluster, logger: logger)
        do {
            let agents = try await database.agents()
            await database.close()
            return ClusterView(group: cluster.group, agents: agents)
        } catch {
            await database.close()
            return ClusterView(group: cluster.group, agents: [], problem: PostgresRegistry.reason(error))
        }
    }

    /// `Cluster  block-a: 2 of 3 agents alive`, then a line an agent.
    func fields() -> [(String, String)] {
        if let problem { return [("Cluster", "\(group): the agents can't be read: \(problem)")] }
        let alive = agents.filter(\.alive).count
        var fields = [("Cluster", "\(group): \(alive) of \(agents.count) agents alive")]
        for agent in agents {
            let text =
                agent.alive
                ? "alive since \(Output.absolute(agent.started)), holds \(Self.held(agent.duties))"
                    + " (version \(agent.version))"
                : "gone (last seen \(Output.absolute(agent.lastSeen)))"
            fields.append(("  " + Output.shown(agent.name), text))
        }
        return fields
    }

    /// `availability, homeassistant; partitions 0, 3, 7 (3 of 24)`: the duties, then the partitions in one phrase.
    static func held(_ duties: [String]) -> String {
        let partitions = duties.compactMap(ClusterPartitions.partition(ofDuty:)).sorted()
        var parts = duties.filter { ClusterPartitions.partition(ofDuty: $0) == nil }
        if !partitions.isEmpty {
            parts.append(
                "partitions \(partitions.map(String.init).joined(separator: ", ")) "
                    + "(\(partitions.count) of \(ClusterPartitions.standard.count))")
        }
        return parts.isEmpty ? "nothing" : parts.joined(separator: ", ")
    }

    /// `"cluster": {"group": …, "agents": [{"name", "alive", "duties", "lastSeen", "version"}]}` members.
    func write(into writer: inout JSONWriter, first: inout Bool) {
        writer.key("cluster", first: &first)
        var member = true
        writer.raw("{")
        writer.key("group", first: &member)
        writer.string(group)
        writer.key("problem", first: &member)
        if let problem { writer.string(problem) } else { writer.raw("null") }
        writer.key("agents", first: &member)
        writer.raw("[")
        for (index, agent) in agents.enumerated() {
            if index > 0 { writer.raw(",") }
            var field = true
            writer.raw("{")
            writer.key("name", first: &field)
            writer.string(agent.name)
            writer.key("alive", first: &field)
            writer.bool(agent.alive)
            writer.key("duties", first: &field)
            writer.strings(agent.duties)
            writer.key("lastSeen", first: &field)
            writer.string(agent.lastSeen.description)
            writer.key("version", first: &field)
            writer.string(agent.version)
            writer.raw("}")
        }
        writer.raw("]}")
    }
}
