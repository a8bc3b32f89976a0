import Foundation
import HubCore
import Testing

@Suite struct TimestampTests {
    @Test(arguments: [
        ("2026-11-22T10:03:00.000Z", Int64(1_795_341_780_000)),
        ("1970-01-01T00:00:00.000Z", 0),
        ("1969-12-31T23:59:59.999Z", -1),
        ("2000-02-29T12:00:00.500Z", 951_825_600_500),
    ])
    func roundTrip(text: String, milliseconds: Int64) {
        #expect(Timestamp(iso8601: text)?.millisecondsSince1970 == milliseconds)
        #expect(Timestamp(millisecondsSince1970: milliseconds).iso8601 == text)
    }

    @Test func otherFormsOfTheSameInstant() {
        let instant = Timestamp(iso8601: "2026-11-22T10:03:00.000Z")
        #expect(Timestamp(iso8601: "2026-11-22T10:03:00Z") == instant)
        #expect(Timestamp(iso8601: "2026-11-22T11:03:00.000+01:00") == instant)
        #expect(Timestamp(iso8601: "2026-11-22T10:03:00.000123Z") == instant)
    }

    @Test(arguments: [
        "2026-02-30T00:00:00Z", "2026-13-01T00:00:00Z", "2026-11-22", "2026-11-22T25:00:00Z",
        "2026-11-22T10:03:00", "yesterday", "2026-11-22T10:03:00.Z", "",
    ])
    func rejected(text: String) {
        #expect(Timestamp(iso8601: text) == nil)
    }

    @Test func agreesWithFoundation() {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        for milliseconds in stride(from: Int64(-2_000_000_000_000), to: 4_000_000_000_000, by: 123_456_789_012) {
            let timestamp = Timestamp(millisecondsSince1970: milliseconds)
            #expect(timestamp.iso8601 == formatter.string(from: timestamp.date))
        }
    }
}
