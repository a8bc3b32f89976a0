import HubSupport

/// The QoS 1/2 messages an MQTT session delivered lately, by the broker's packet id, each with a digest of its topic
/// and payload. The broker sends a message again, with the same packet id, when it had no acknowledgement for it: the
/// hub (or a cluster agent) died after applying it and before its PUBACK left, or the PUBACK was lost with the
/// connection. Such a message is known here, and acknowledged without being applied again.
///
/// **Why 4,096.** A message sent again is one the broker had sent and not had acknowledged, so it is among the last
/// few the session received (Mosquitto has at most `max_inflight_messages`, 20 by default, unacknowledged to an
/// MQTT 3.1.1 client, and the Receive Maximum to an MQTT 5 one: hubd asks for 200); the broker hands packet ids out
/// in turn and reuses one only after 65,535 others. So ids more than 4,096 behind the newest are forgotten, and a
/// reused id is never taken for a message sent again. The cluster keeps its sessions' ids by the same rule in
/// `sensorhub_deliveries`; one hub keeps them in its journal.
public struct RecentDeliveries: Sendable, Hashable {
    /// How far behind the newest packet id one is kept.
    public static let span = 4096

    /// Packet id → digest.
    public private(set) var digests: [Int: UInt64] = [:]
    /// The packet id recorded last.
    public private(set) var newest: Int?

    public init() {}

    /// A digest of what a message says: the same in every process and run (it is written down).
    public static func digest(topic: String, payload: [UInt8]) -> UInt64 {
        var hash = StableHash()
        hash.add(topic.utf8)
        hash.add(0)
        hash.add(payload)
        return hash.value
    }

    /// Whether the message with `packet` and `digest` was delivered before (and is being sent again).
    public func contains(packet: Int, digest: UInt64) -> Bool { digests[packet] == digest }

    public mutating func record(packet: Int, digest: UInt64) {
        digests[packet] = digest
        newest = packet
        // Pruned in bulk: at most twice the span is held.
        if digests.count > 2 * Self.span { digests = digests.filter { Self.isRecent($0.key, newest: packet) } }
    }

    /// The broker has no session any more (CONNACK said so): it hands the ids out from 1 again.
    public mutating func forgetAll() {
        digests = [:]
        newest = nil
    }

    public var isEmpty: Bool { digests.isEmpty }

    /// Those kept, oldest first (the newest last): what a journal compaction writes down.
    public var inOrder: [(packet: Int, digest: UInt64)] {
        guard let newest else { return [] }
        return digests.filter { Self.isRecent($0.key, newest: newest) }
            .sorted { Self.behind($0.key, newest: newest) > Self.behind($1.key, newest: newest) }
            .map { ($0.key, $0.value) }
    }

    /// How many ids `packet` is behind `newest`, counting round the 65,535 the broker uses.
    static func behind(_ packet: Int, newest: Int) -> Int { ((newest - packet) % 65535 + 65535) % 65535 }

    /// Within the span behind the newest, or a little ahead of it (ids of one batch recorded out of order).
    static func isRecent(_ packet: Int, newest: Int) -> Bool {
        let distance = behind(packet, newest: newest)
        return distance <= span || distance >= 65535 - span
    }
}
