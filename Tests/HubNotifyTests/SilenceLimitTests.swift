import HubCore
import Testing

@testable import HubNotify

/// What a silence may be (issue 51: 10,000 silences, 64 KB comments, `endsAt: 9999-12-31` and `startsAt: 1970` were
/// all taken): each limit refused, naming it, by hubctl and the API (`Silence.check`) and again by the book.
@Suite struct SilenceLimitTests {
    static let now = Timestamp(millisecondsSince1970: 1_796_000_000_000)

    static func silence(
        matchers: [String] = ["sensor=door*"], from start: Int64 = 0, hours: Int64 = 2, comment: String = "painting",
        by: String = "ana"
    ) -> Silence {
        Silence(
            id: "s", matchers: matchers.map { try! Silence.Matcher(parsing: $0) },
            startsAt: now.adding(milliseconds: start), endsAt: now.adding(milliseconds: start + hours * 3_600_000),
            createdBy: by, comment: comment)
    }

    static func refusal(_ silence: Silence, inForce: Int = 0) -> String? {
        do {
            try silence.check(inForce: inForce, now: now)
            return nil
        } catch {
            return error.description
        }
    }

    @Test func aHouseholdsSilenceIsTaken() {
        #expect(Self.refusal(Self.silence()) == nil)
        #expect(Self.refusal(Self.silence(hours: 90 * 24)) == nil)
        #expect(Self.refusal(Self.silence(from: -60_000)) == nil)
    }

    @Test(arguments: [
        (silence(hours: 90 * 24 + 1), 0, "the longest is 90 days"),
        (silence(from: -1_796_000_000_000), 0, "in the past"),
        (silence(from: 400 * 86_400_000), 0, "more than 365 days ahead"),
        (silence(comment: String(repeating: "x", count: 65_536)), 0, "at most 500"),
        (silence(by: String(repeating: "x", count: 101)), 0, "at most 100 characters"),
        (silence(matchers: (0..<11).map { "room=r\($0)" }), 0, "1 to 10 matchers"),
        (silence(matchers: ["sensor=" + String(repeating: "d", count: 201)]), 0, "longer than 200 characters"),
        (silence(), 100, "the most the hub keeps (100)"),
    ])
    func eachLimitIsRefusedNamingIt(_ silence: Silence, _ inForce: Int, _ expected: String) {
        let refusal = Self.refusal(silence, inForce: inForce)
        #expect(refusal?.contains(expected) == true, "\(refusal ?? "taken")")
    }

    /// Two asked at once past the limit, or a request written by hand: the book refuses it too.
    @Test func theBookRefusesWhatIsPastTheLimits() {
        var book = AlertBook()
        for index in 0..<100 {
            var silence = Self.silence()
            silence.id = "s\(index)"
            #expect(book.apply(.silence(silence), now: Self.now) == "silence added")
        }
        var more = Self.silence()
        more.id = "one more"
        #expect(book.apply(.silence(more), now: Self.now).hasPrefix("refused: there are 100 silences"))
        var long = Self.silence(hours: 100 * 24)
        long.id = "long"
        var other = AlertBook()
        #expect(other.apply(.silence(long), now: Self.now).contains("the longest is 90 days"))
        #expect(book.silences.count == 100 && other.silences.isEmpty)
    }
}
