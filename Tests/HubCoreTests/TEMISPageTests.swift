import Foundation
import HubCore
import HubSupport
import HubTestKit
import Testing

/// The TEMIS UV-index page read tolerantly, each day placed at the place's solar noon, and hostile pages refused
/// with a clear error.
@Suite struct TEMISPageTests {
    static let deBilt = GeoPoint(latitude: 52.1, longitude: 5.18)!

    /// The TEMIS-shaped page, its days 12 to 15 Jun 2014 (one copy, in HubTestKit).
    static let page = UVFixtures.temisPage()

    static func read(_ html: String, place: GeoPoint = deBilt) throws(TEMISPageError) -> TEMISPage {
        try TEMISPage(html: Array(html.utf8), place: place)
    }

    @Test func readsEveryDayRow() throws {
        let page = try Self.read(Self.page)
        #expect(page.location == "De Bilt (52.10°N, 5.18°E)")
        #expect(page.days.map(\.day.description) == ["2014-06-12", "2014-06-13", "2014-06-14", "2014-06-15"])
        #expect(page.days.map(\.uvIndex.value) == [7.3, 7.5, 6.9, 7.1])
        #expect(page.days.map(\.ozone) == [324.5, 318.2, 335.0, 329.9])
    }

    /// Each day's values hold at the place's solar noon: in De Bilt about 11:40 UTC in June — not midnight, not
    /// 12:00 on any clock.
    @Test func daysAreAtSolarNoon() throws {
        let page = try Self.read(Self.page)
        for day in page.days {
            #expect(day.solarNoon == SolarDay(place: Self.deBilt, day: day.day).solarNoon)
            let minutes = day.solarNoon.timeIntervalSince(day.day.startUTC) / 60
            let window: ClosedRange<Double> = 698...703  // 11:38 to 11:43 UTC
            #expect(window.contains(minutes), "\(day.day): \(minutes) min after 0h UTC")
        }
        // Far west, the same date's noon is late in the UTC day.
        let honolulu = try Self.read(Self.page, place: GeoPoint(latitude: 21.31, longitude: -157.86)!)
        #expect(honolulu.days[0].solarNoon.timeIntervalSince(honolulu.days[0].day.startUTC) / 3600 > 22)
    }

    @Test func rowsInAnyTableOrder() throws {
        let minimal = """
            <?xml version="1.0"?><!DOCTYPE html>
            <table><tr><th>Date</th><th>UV index</th><th>ozone column</th></tr>
            <tr><td colspan=3>UV < 3 is low, 8 <= UV is very high</td></tr>
            <tr><td>02 Feb 2024</td><td>1.2</td><td>380.0 DU</td></tr>
            <tr><td>01 February 2024</td><td>1.1</td><td>390</td></tr></table>
            """
        let page = try Self.read(minimal)
        #expect(page.days.map(\.day.description) == ["2024-02-01", "2024-02-02"])
        #expect(page.location == nil)
    }

    /// Hostile pages: each refused with the error that says why.
    @Test func hostilePages() {
        let cut = String(Self.page.prefix(upTo: Self.page.range(of: "335.0")!.lowerBound))
        let cutAfterRow = String(Self.page.prefix(upTo: Self.page.range(of: "<tr><td>15 Jun")!.lowerBound))
        let cases: [(String, String, (TEMISPageError) -> Bool)] = [
            ("empty", "", { $0 == .noTable }),
            ("no table", "<html><body><h1>503 Service Unavailable</h1></body></html>", { $0 == .noTable }),
            (
                "binary", String(decoding: (0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 37) }, as: UTF8.self),
                {
                    $0 == .noTable || $0 == .noRows
                }
            ),
            (
                "no rows", "<table><tr><td>Date</td><td>UV index</td></tr><tr><td>n/a</td></tr></table>",
                { $0 == .noRows }
            ),
            ("cut in a row", cut, { if case .truncated = $0 { true } else { false } }),
            ("cut between rows", cutAfterRow, { if case .truncated = $0 { true } else { false } }),
            ("bad index", Self.page.replacingOccurrences(of: "> 7.3 <", with: "> 7,3 <"), Self.badRow),
            ("nan index", Self.page.replacingOccurrences(of: "> 7.3 <", with: "> nan <"), Self.badRow),
            ("index 45", Self.page.replacingOccurrences(of: "> 7.3 <", with: "> 45.0 <"), Self.badRow),
            ("ozone 0", Self.page.replacingOccurrences(of: "324.5 DU", with: "0 DU"), Self.badRow),
            ("ozone 5000", Self.page.replacingOccurrences(of: "324.5 DU", with: "5000.0 DU"), Self.badRow),
            ("ozone 1e3", Self.page.replacingOccurrences(of: "324.5 DU", with: "1e3 DU"), Self.badRow),
            ("no ozone", "<table><tr><td>1 Jan 2024</td><td>0.5</td></tr></table>", Self.badRow),
            ("date twice", Self.page.replacingOccurrences(of: "13&nbsp;Jun", with: "12&nbsp;Jun"), Self.badRow),
            ("bad date", "<table><tr><td>31 Feb 2024</td><td>0.5</td><td>300 DU</td></tr></table>", { $0 == .noRows }),
        ]
        for (name, html, expected) in cases {
            do {
                let page = try Self.read(html)
                Issue.record("\(name): read \(page.days.count) days")
            } catch {
                #expect(expected(error), "\(name): \(error)")
                #expect(!error.description.isEmpty)
            }
        }
        let large = [UInt8](repeating: UInt8(ascii: "<"), count: TEMISPage.maximumSize + 1)
        #expect(throws: TEMISPageError.tooLarge(TEMISPage.maximumSize + 1)) {
            try TEMISPage(html: large, place: Self.deBilt)
        }
    }

    /// Pages as large as accepted, made of what makes a reader work hardest, are read (or refused) at once.
    /// Pages of the largest size taken, made of what could make a reader slow (unclosed markup, entities, an endless
    /// comment, rows by the thousand), are read or refused: no crash, no hang (the time limit; how fast is no test's
    /// business). Run off Swift's cooperative threads: seconds of work on one of a 2-core machine's two would stall
    /// every other test's timers.
    @Test(.timeLimit(.minutes(1))) func largeHostilePagesAreReadOrRefused() async {
        let size = TEMISPage.maximumSize
        let pages = [
            String(repeating: "<", count: size), String(repeating: "<a ", count: size / 3),
            String(repeating: "<table>", count: size / 7), String(repeating: "<tr><td>", count: size / 8),
            String(repeating: "&amp;", count: size / 5), "<!--" + String(repeating: "-", count: size - 4),
            String(repeating: "<td>1 Jan 2024</td><td>1.0</td><td>300 DU</td>", count: size / 50),
        ]
        let read = await DispatchQueue.global().run { pages.map { (try? Self.read($0)) != nil } }
        // None holds a week of distinct days: every one is refused, with a reason (the tests above say which).
        #expect(read == Array(repeating: false, count: pages.count))
    }

    static func badRow(_ error: TEMISPageError) -> Bool { if case .badRow = error { true } else { false } }

    /// Random mutations of the page (seeded: a failure can be replayed) never crash the reader: each is read or
    /// refused. Off the cooperative threads, like the test above.
    @Test func mutationsNeverCrash() async {
        let bytes = Array(Self.page.utf8)
        let outcomes = await DispatchQueue.global().run {
            var generator = SplitMix64(seed: 20_261_125)
            var read = 0
            var refused = 0
            for _ in 0..<300 {
                var mutated = bytes
                for _ in 0..<Int.random(in: 1...20, using: &generator) {
                    let index = Int.random(in: 0..<mutated.count, using: &generator)
                    switch Int.random(in: 0..<3, using: &generator) {
                    case 0: mutated[index] = UInt8.random(in: 0...255, using: &generator)
                    case 1: mutated.remove(at: index)
                    default: mutated.insert(Array("<>&;\"'".utf8).randomElement(using: &generator)!, at: index)
                    }
                }
                if (try? TEMISPage(html: mutated, place: Self.deBilt)) != nil { read += 1 } else { refused += 1 }
            }
            return (read, refused)
        }
        // Tolerant (a mutation in the markup around the rows still reads) and strict (one in a row is refused).
        #expect(outcomes.0 > 0 && outcomes.1 > 0, "read \(outcomes.0), refused \(outcomes.1)")
    }
}
