import Foundation
import HubCore
import HubSupport
import HubTestKit
import Testing

/// The TEMIS UV-index page read tolerantly, each day placed at the place's solar noon, and hostile pages refused
/// with a clear error.
@Suite struct TEMISPageTests {
    static let deBilt = GeoPoint(latitude: 52.1, longitude: 5.18)!

    /// Shaped like the page: a header table, a body table whose third cell holds `<dl><dd>` and the data table with
    /// the location heading, the header row in `<i>`, the day rows with `&nbsp;`, attributes and odd spacing, then
    /// rows that are not data (a footnote, an archive link) and more tables after.
    static let page = """
        <!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 4.01 Transitional//EN">
        <html><head><title>TEMIS -- UV index and UV dose -- nrt</title>
        <style type="text/css"> td { font-size: 10pt } /* <tr><td>1 Jan 2000</td> */ </style>
        <script>var rows = "<tr><td>2 Jan 2000</td><td>9.9</td><td>300 DU</td></tr>";</script>
        </head>
        <BODY bgcolor="#FFFFFF">
        <table width="100%" cellpadding=0><tr><td><a href="/"><img src="/images/temis_logo.gif" alt="TEMIS >>"></a></td>
        <td><h1>Tropospheric Emission Monitoring Internet Service</h1></td></tr></table>
        <table border=0 width="100%">
        <tr>
          <td valign=top width=150><table><tr><td><a href="/uvradiation/">UV radiation</a></td></tr>
            <tr><td><a href="/protocols/">Ozone</a></td></tr></table></td>
          <td width=20>&nbsp;</td>
          <td valign=top>
          <!-- the forecast table: <tr><td>3 Jan 2000</td><td>1.0</td><td>300 DU</td></tr> -->
          <dl><dd>
          <table border=0 cellpadding=2 CELLSPACING=0>
          <tr><td colspan=3><h2>De Bilt &nbsp;(52.10&deg;N, 5.18&deg;E)</h2></td></tr>
          <tr>
            <td align=left ><i>&nbsp;<br>&nbsp; Date</i> </td>
            <td align=right><i>UV <br>&nbsp; index</i> </td>
            <td align=right><i>ozone <br>column</i> </td>
          </tr>
          <TR><TD align=right nowrap>&nbsp; 12 Jun 2014 </TD>
            <TD align=right nowrap> 7.3 </TD>
            <TD align=right nowrap>&nbsp;  324.5 DU </TD></TR>
          <tr><td align=right nowrap>&#160;13&nbsp;Jun&nbsp;2014</td><td align="right">7.5</td><td>318.2&nbsp;DU</td>
          <tr><td align=right nowrap>14 jun 2014</td>
              <td align=right nowrap>
                 6.9
              </td>
              <td align=right nowrap>335.0 du</td></tr>
          <tr><td>15 Jun 2014</td><td><b>7.1</b></td><td><font color="#000080">329.9</font> DU</td></tr>
          <tr><td colspan=3>&nbsp;</td></tr>
          <tr><td colspan=3><font size=-1>Values at local solar noon; clear sky.</font></td></tr>
          <tr><td colspan=3><a href="archives.php?lon=5.18&amp;lat=52.1">Archive for 2014</a></td></tr>
          </table>
          </dd></dl>
          </td>
        </tr>
        </table>
        <table><tr><td>Last modified: 12 June 2014</td><td>&copy; KNMI/ESA</td></tr></table>
        </body></html>
        """

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
