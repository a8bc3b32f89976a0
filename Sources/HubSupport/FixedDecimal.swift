import Foundation

/// A number with a fixed count of digits after its point, as C's `%.*f` writes it, without Foundation's
/// `String(format:)`: that one builds an `NSString` through CoreFoundation's format parser for each number, and the
/// thermometers' values took 4 % of hubd's CPU at a home's rate in it (perf, `bench/home.sh`'s load).
public enum FixedDecimal {
    /// `value` with `places` digits after the point, as `String(format: "%.<places>f", value)` writes it: the exact
    /// binary value rounded half to even, and a sign on a negative value that rounds to zero (`-0.0`). Values past
    /// 10¹² or more than 6 places are handed to `String(format:)` (what the sensors' values never are).
    public static func text(_ value: Double, places: Int) -> String {
        guard value.isFinite, value.magnitude <= 1e12, (0...6).contains(places) else {
            return String(format: "%.\(places)f", value)
        }
        // |value| = significand × 2^exponent, exactly; times 10^places, then shifted back with the rounding.
        let biased = Int(value.exponentBitPattern)
        let significand = UInt128(value.significandBitPattern) | (biased == 0 ? 0 : 1 << 52)
        let shift = 1075 - max(biased, 1)  // at least 13: |value| ≤ 10¹² < 2^40
        let scaled = significand * UInt128(powersOfTen[places])  // < 2^53 × 10^6 < 2^73
        var rounded: UInt128 = 0
        if shift < 128 {
            rounded = scaled >> shift
            let rest = scaled & ((1 << shift) - 1)
            let half: UInt128 = 1 << (shift - 1)
            if rest > half || (rest == half && rounded & 1 == 1) { rounded += 1 }
        }  // else scaled < 2^73 ≤ half: rounds to 0
        var digits = String(UInt64(rounded))  // ≤ 10¹⁸ + 1
        if places > 0 {
            if digits.count <= places { digits = String(repeating: "0", count: places + 1 - digits.count) + digits }
            digits.insert(".", at: digits.index(digits.endIndex, offsetBy: -places))
        }
        return value.sign == .minus ? "-" + digits : digits
    }

    private static let powersOfTen: [UInt64] = [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000]
}
