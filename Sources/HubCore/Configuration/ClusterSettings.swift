/// hubd.yaml's `cluster` section: this agent is one of several that share the sensors out (each holds some of the
/// partitions, `ClusterPartitions`) and the registry (`store:`, which it needs), and take turns at what must be done
/// once (the hub's availability, Home Assistant's configs, discovery) through leases in that database.
///
/// ```yaml
/// store: postgres://sensorhub@db.lan/building
/// cluster:
///   group: building-a       # the cluster's name in the agents' tables and its partitions' MQTT client ids
///   agent: hub-1            # this agent, unique in the group; the machine's host name by default
///   lease: 15s              # a duty of an agent that stops renewing moves after this (5 s to 5 min)
/// ```
public struct ClusterSettings: Sendable, Hashable {
    public var group: String
    public var agent: String
    /// How long a lease lasts unless renewed; agents renew (and heartbeat) every third of it.
    public var lease: Duration = .seconds(15)

    public init(group: String, agent: String) {
        self.group = group
        self.agent = agent
    }

    /// How often a holder renews its leases and every agent says it is alive.
    public var renewal: Duration { lease / 3 }

    /// Reads the section; `nil` when it is absent. `hasStore`: whether `store:` names a database.
    static func read(_ node: ConfigNode, hasStore: Bool, hostName: String = RemoteSettings.hostName)
        throws(ConfigurationError) -> ClusterSettings?
    {
        guard node.isSet else { return nil }
        try node.allow(keys)
        let expected = "1 to 64 letters, digits, '.', '_' or '-'"
        guard let group = try node["group"].value(expected, { RemoteSettings.isValidHubName($0) ? $0 : nil }) else {
            throw node["group"].invalid("missing: the agents' group, like building-a")
        }
        var settings = ClusterSettings(group: group, agent: hostName)
        if let agent = try node["agent"].value(expected, { RemoteSettings.isValidHubName($0) ? $0 : nil }) {
            settings.agent = agent
        } else if !RemoteSettings.isValidHubName(hostName) {
            throw node["agent"].invalid("missing, and the host name '\(hostName)' can't be an agent's name: set it")
        }
        if let lease = try node["lease"].duration(in: .seconds(5)...(.seconds(300))) { settings.lease = lease }
        guard hasStore else {
            throw node.invalid("needs store: postgres://… (the database the agents share)")
        }
        return settings
    }
}
