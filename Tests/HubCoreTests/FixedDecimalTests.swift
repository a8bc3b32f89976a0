import Foundation
import HubSupport
import Testing

/// `FixedDecimal.text` against C's `%.*f` (Foundation's `String(format:)`, which it replaces where a value is
/// formatted per message): the same text for every value a sensor's reading can be.
struct FixedDecimalTests {
    func printf(_ value: Double, _ places: Int) -> String { String(format: "%.\(places)f", value) }

    /// Ties (exactly half way in binary) round to even as printf does; a value just off a tie in binary goes the way
    /// its exact value says; a negative value that rounds to zero keeps its sign; zeros, tiny and the largest values.
    @Test(arguments: [
        0.125, 0.375, 2.5, 3.5, -2.5, 0.5, 1.5, 1.005, 2.675, 0.05, 0.15, 0.25, 0.35, 22.45, 1e12, -1e12,
        999_999.999_999_5, 0, -0.0, -0.01, -0.04, 5e-324, -5e-324, 1e-300, 0.1, 21.65, 0.000_000_5, 0.000_001_5,
        123_456.789_012_3,
    ])
    func edgesAreWrittenAsPrintfWritesThem(value: Double) {
        for places in 0...6 {
            #expect(FixedDecimal.text(value, places: places) == printf(value, places), "\(value) with \(places)")
        }
    }

    /// 200,000 values across the magnitudes a reading has, with 0 to 6 places.
    @Test func randomValuesAreWrittenAsPrintfWritesThem() {
        var generator = SystemRandomNumberGenerator()
        var mismatches: [String] = []
        for index in 0..<200_000 {
            let magnitude = Double.random(in: -7...12, using: &generator)
            var value = (Double.random(in: 1..<10, using: &generator) * pow(10, magnitude.rounded(.down)))
            if index % 2 == 1 { value = -value }
            // Every fourth a value written with few decimals, as sensors publish (22.45, 1013.2): ties are near.
            if index % 4 == 0 { value = (value * 1000).rounded() / 1000 }
            if value.magnitude > 1e12 { continue }
            let places = index % 7
            let ours = FixedDecimal.text(value, places: places)
            let theirs = printf(value, places)
            if ours != theirs { mismatches.append("\(value) with \(places): \(ours) against \(theirs)") }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(10))")
    }

    /// Past what a sensor's value is (ValueFormat.largestNumber, 6 places): printf's own text.
    @Test func outsideTheRangeItIsPrintfs() {
        #expect(FixedDecimal.text(1e20, places: 1) == printf(1e20, 1))
        #expect(FixedDecimal.text(1.5, places: 9) == printf(1.5, 9))
        #expect(FixedDecimal.text(.infinity, places: 1) == printf(.infinity, 1))
        #expect(FixedDecimal.text(.nan, places: 2) == printf(.nan, 2))
    }
}
