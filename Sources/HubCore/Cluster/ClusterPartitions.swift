import HubSupport

/// How a cluster's agents share the sensors (docs/cluster.md). Each sensor belongs to one of `count` partitions, by
/// a stable hash of its topic. A partition is one MQTT session of its own (a client id of its own, kept by the
/// broker while nobody is connected), subscribed to its sensors' topics; one agent at a time holds it (the lease
/// `partition:NN`) and applies its messages in the order the broker delivers them. So every message that can change
/// a sensor reaches one agent, through one session, in the broker's order, whichever agent that is now.
///
/// Which agent should hold which partition is the same answer at every agent that sees the same live agents:
/// rendezvous hashing (each partition ranks the agents by a hash of the pair) with bounded loads (no agent takes
/// more than its share, rounded up), so an agent that comes or goes moves few partitions.
///
/// A value type with no I/O: `PartitionKeeper` feeds it the agents the database says are alive.
public struct ClusterPartitions: Sendable, Hashable {
    /// Every cluster's: the count is part of the sessions' identity (a sensor's partition is a hash modulo it), so
    /// it must be the same at every agent of every version. 24 shares evenly over 1, 2, 3, 4, 6, 8 or 12 agents.
    public static let standard = ClusterPartitions(count: 24)

    public let count: Int

    public init(count: Int) {
        precondition(count > 0, "a cluster has at least one partition")
        self.count = count
    }

    /// The partition of the sensor on `topic`.
    public func partition(ofSensorTopic topic: String) -> Int {
        Int(Self.mixed(StableHash.of(topic)) % UInt64(count))
    }

    /// The name of the lease on `partition`, as `sensorhub_leases` and `hubctl status` show it: `partition:07`.
    public static func duty(_ partition: Int) -> String {
        partition < 10 ? "partition:0\(partition)" : "partition:\(partition)"
    }

    /// The partition a lease is on; nil for another duty.
    public static func partition(ofDuty duty: String) -> Int? {
        guard duty.hasPrefix("partition:") else { return nil }
        return Int(duty.dropFirst("partition:".count))
    }

    /// Which partitions each of `agents` should hold: every partition exactly once, no agent more than
    /// `count / agents` rounded up. The same for the same set of names in any order; empty for no agents.
    public func assignment(agents: some Sequence<String>) -> [String: [Int]] {
        let names = Set(agents).sorted()
        guard !names.isEmpty else { return [:] }
        let capacity = (count + names.count - 1) / names.count
        var held = Dictionary(uniqueKeysWithValues: names.map { ($0, [Int]()) })
        for partition in 0..<count {
            let ranked = names.map { (name: $0, score: Self.mixed(StableHash.of($0, String(partition)))) }
                .sorted { $0.score != $1.score ? $0.score > $1.score : $0.name < $1.name }
            // Some agent always has room: capacity × agents ≥ count.
            let owner = ranked.first { held[$0.name, default: []].count < capacity }!.name
            held[owner, default: []].append(partition)
        }
        return held
    }

    /// MurmurHash3's finaliser: every bit of the hash depends on every bit of FNV-1a's, whose low bits alone are weak.
    static func mixed(_ value: UInt64) -> UInt64 {
        var x = value
        x ^= x >> 33
        x &*= 0xff51_afd7_ed55_8ccd
        x ^= x >> 33
        x &*= 0xc4ce_b9fe_1a85_ec53
        x ^= x >> 33
        return x
    }
}
