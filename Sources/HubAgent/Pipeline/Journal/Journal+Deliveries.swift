import HubCore
import Mosquitto

// The packet ids the journal keeps with the changes of the messages they came with (`RecentDeliveries`): a message
// the broker sends again after a crash, or after a connection dropped with its PUBACK, is known and not applied twice.
extension Journal {
    /// A QoS 1/2 message as the journal keeps it: its packet id and digest (`RecentDeliveries`).
    public struct Delivery: Sendable, Hashable {
        public var packet: Int
        public var digest: UInt64
        /// The first message of a session the broker made anew: the ids kept before are forgotten first.
        public var sessionIsNew: Bool

        public init(packet: Int, digest: UInt64, sessionIsNew: Bool = false) {
            self.packet = packet
            self.digest = digest
            self.sessionIsNew = sessionIsNew
        }
    }

    /// Whether the message `delivery` describes was applied before: the broker sends it again because no
    /// acknowledgement reached it (hubd died after journaling it, or the connection dropped with the PUBACK).
    public func wasApplied(_ delivery: Delivery) -> Bool {
        guard !delivery.sessionIsNew else { return false }
        return state.withLock { state in
            let wanted = (delivery.packet, delivery.digest)
            if state.pendingDeliveries.contains(where: { $0 == wanted }) { return true }
            if state.committingDeliveries.contains(where: { $0 == wanted }) { return true }
            return !state.pendingAnew && !state.committingAnew
                && state.deliveries.contains(packet: delivery.packet, digest: delivery.digest)
        }
    }

    /// `{"delivered":[812,813],"digests":["9f…","2c…"]}` and a newline.
    static func deliveriesLine(_ deliveries: [(packet: Int, digest: UInt64)], anew: Bool = false) -> [UInt8] {
        var writer = JSONWriter(capacity: 40 + deliveries.count * 26, compact: true)
        var first = true
        writer.raw("{")
        writer.key("delivered", first: &first)
        writer.raw("[")
        for (index, delivery) in deliveries.enumerated() {
            if index > 0 { writer.raw(",") }
            writer.number(delivery.packet)
        }
        writer.raw("]")
        writer.key("digests", first: &first)
        writer.strings(deliveries.map { String($0.digest, radix: 16) })
        if anew {
            writer.key("anew", first: &first)
            writer.raw("true")
        }
        writer.raw("}\n")
        return writer.bytes
    }

}

extension Journal.Delivery {
    init(_ message: MQTTMessage) {
        self.init(
            packet: message.packetID, digest: RecentDeliveries.digest(topic: message.topic, payload: message.payload),
            sessionIsNew: message.sessionIsNew)
    }
}

extension RecentDeliveries {
    /// Takes a journal line of packet ids (`Journal.deliveriesLine`); false when `entry` is no such line.
    mutating func replay(_ entry: JournalRecord.Line) -> Bool {
        guard let packets = entry.delivered, let digests = entry.digests, packets.count == digests.count else {
            return false
        }
        if entry.anew == true { forgetAll() }
        for (packet, digest) in zip(packets, digests) {
            guard let digest = UInt64(digest, radix: 16) else { continue }
            record(packet: packet, digest: digest)
        }
        return true
    }
}
