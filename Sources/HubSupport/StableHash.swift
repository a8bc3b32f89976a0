/// FNV-1a, 64 bits: a hash that is the same in every process, run and platform (Swift's `Hasher` is seeded anew
/// each run), for what is written down or agreed on between processes: derived ids, a message's digest, a sensor's
/// partition.
package struct StableHash: Sendable, Hashable {
    package private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    package init() {}

    package mutating func add(_ byte: UInt8) {
        value = (value ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
    }

    package mutating func add<Bytes: Sequence<UInt8>>(_ bytes: Bytes) {
        for byte in bytes { add(byte) }
    }

    /// The hash of `parts`, each followed by a zero byte (so that `"ab", "c"` and `"a", "bc"` differ).
    package static func of(_ parts: String...) -> UInt64 {
        var hash = StableHash()
        for part in parts {
            hash.add(part.utf8)
            hash.add(0)
        }
        return hash.value
    }
}
