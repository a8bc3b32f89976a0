import Foundation
import HubCore
import HubTestKit
import Testing

/// What hubd's UV source publishes, worked out with no I/O: where the ozone comes from, today's row of the TEMIS
/// page at the computed solar noon, the forecast, and the payload's members.
@Suite struct UVSourceReadingTests {
    static let deBilt = GeoPoint(latitude: 52.1, longitude: 5.18)!
    /// 13 Jun 2014, 11:00 UTC: the page's second day, near noon in De Bilt.
    static let now = Date(timeIntervalSince1970: 1_402_657_200)

    static func page() throws -> TEMISPage {
        try TEMISPage(html: Array(UVFixtures.temisPage().utf8), place: deBilt)
    }

    @Test func theOzoneIsTodaysRowElseConfiguredElseTheDefault() throws {
        var settings = UVSettings()
        let fromPage = UVSourceReading(settings: settings, place: Self.deBilt, now: Self.now, page: try Self.page())
        #expect(fromPage.ozone == 318.2 && fromPage.ozoneSource == .temis)
        #expect(fromPage.forecast.map(\.day.description) == ["2014-06-13", "2014-06-14", "2014-06-15"])
        #expect(
            fromPage.solarNoon
                == SolarDay(place: Self.deBilt, day: CalendarDay(year: 2014, month: 6, day: 13)!).solarNoon)
        #expect(fromPage.maximum >= fromPage.index && fromPage.maximum.value > 7)

        settings.ozone = 350
        let later = Self.now.addingTimeInterval(30 * 86_400)
        let configured = UVSourceReading(settings: settings, place: Self.deBilt, now: later, page: try Self.page())
        #expect(configured.ozone == 350 && configured.ozoneSource == .configured && configured.forecast.isEmpty)
        let fallback = UVSourceReading(settings: UVSettings(), place: Self.deBilt, now: Self.now, page: nil)
        #expect(fallback.ozone == 300 && fallback.ozoneSource == .default)
    }

    @Test func thePayload() throws {
        let reading = UVSourceReading(settings: UVSettings(), place: Self.deBilt, now: Self.now, page: try Self.page())
        let status = UVSourceReading.TEMISStatus(fetched: Self.now, failures: 2, lastError: "HTTP 503")
        let json = try #require(
            try JSONSerialization.jsonObject(with: Data(reading.payload(temis: status).utf8)) as? [String: Any])
        #expect(json["uvi"] as? Double == (reading.index.value * 100).rounded() / 100)
        #expect(json["ozone"] as? Double == 318.2 && json["ozone_source"] as? String == "temis")
        #expect(json["solar_noon"] as? String == Timestamp(reading.solarNoon).iso8601)
        #expect(json["erythema_minutes_type2"] is Double && json["vitamin_d_minutes_type2"] is Double)
        #expect(json["temis_failures"] as? Int == 2 && json["temis_error"] as? String == "HTTP 503")
        let forecast = try #require(json["forecast"] as? [[String: Any]])
        #expect(forecast.first?["date"] as? String == "2014-06-13" && forecast.first?["temis_uvi"] as? Double == 7.5)
        #expect(forecast.first?["band"] as? String == UVIndex(forecast.first?["max_uvi"] as? Double ?? 0).band.rawValue)
        // Without TEMIS: no TEMIS members.
        let plain = reading.payload(temis: nil)
        #expect(!plain.contains("temis_") && !plain.contains("forecast"))
    }
}
