import Foundation
import HubCore
import HubTestKit
import Testing

/// NOAA's solar position algorithm against Meeus's worked examples and against PyEphem, an independent
/// implementation (XEphem's libastro: VSOP87, its own nutation and aberration), at places in both hemispheres, the
/// tropics and high latitudes, at equinoxes, solstices and ordinary days.
@Suite struct SolarPositionTests {
    /// Meeus, *Astronomical Algorithms* (2nd ed.), Example 25.a: the Sun on 1992 October 13.0 TD (JDE 2448908.5).
    /// The example's time is dynamical time; NOAA's code takes UT. Fed the same number, the two only differ in what
    /// the number means (TD − UT was about 59 s in 1992, under 0.001° of the Sun's motion), so the values compare
    /// directly.
    @Test func meeusExample25a() {
        let sun = SolarCoordinates(julianDay: 2_448_908.5)
        #expect(abs(sun.julianCentury - -0.072183436) < 1e-9)
        #expect(abs(sun.geometricMeanLongitude - 201.80720) < 0.00001)
        #expect(abs(sun.meanAnomaly - 278.99397) < 0.00001)
        #expect(abs(sun.eccentricity - 0.016711668) < 1e-9)
        #expect(abs(sun.equationOfCentre - -1.89732) < 0.00001)
        #expect(abs(sun.trueLongitude - 199.90988) < 0.00001)
        #expect(abs(sun.apparentLongitude - 199.90895) < 0.00001)
        // ε₀ = 23°26′24.83″; corrected for nutation, 23.43999°.
        #expect(abs(sun.meanObliquity - (23 + 26 / 60.0 + 24.83 / 3600)) < 0.00001)
        #expect(abs(sun.obliquity - 23.43999) < 0.00001)
        // α = 198.38083° = 13h 13m 31.4s, δ = −7.78507° = −7° 47′ 06″.
        #expect(abs(sun.rightAscension - 198.38083) < 0.00001)
        #expect(abs(sun.declination - -7.78507) < 0.00001)
    }

    /// Meeus Example 28.b: the equation of time on 1992 October 13.0 TD with Smart's formula (28.3), the one NOAA
    /// uses, is +13m 42.7s; the rigorous method of Example 28.a gives +13m 42.6s.
    @Test func meeusExample28b() {
        let seconds = SolarCoordinates(julianDay: 2_448_908.5).equationOfTime * 60
        #expect(abs(seconds - (13 * 60 + 42.7)) < 0.1)
        #expect(abs(seconds - (13 * 60 + 42.6)) < 0.2)
    }

    /// Places and dates for the comparison with PyEphem.
    static let places: [(name: String, latitude: Double, longitude: Double)] = [
        ("De Bilt", 52.1, 5.18), ("Sydney", -33.87, 151.21), ("Quito", -0.18, -78.47), ("Singapore", 1.35, 103.82),
        ("Honolulu", 21.31, -157.86), ("Buenos Aires", -34.6, -58.38), ("Auckland", -36.85, 174.76),
        ("Los Angeles", 34.05, -118.24), ("Anchorage", 61.22, -149.9), ("Reykjavik", 64.15, -21.94),
        ("Tromsø", 69.65, 18.96), ("Longyearbyen", 78.22, 15.65), ("McMurdo", -77.85, 166.67),
        ("Nairobi", -1.29, 36.82), ("Kiritimati", 1.87, -157.4),
    ]
    static let dates = [
        "2024-03-20", "2024-06-21", "2024-09-22", "2024-12-21", "2025-02-14", "2031-07-30", "1995-11-03",
    ]
    static let hours = [0, 6, 9, 12, 15, 18, 21]

    struct Case {
        let name: String
        let place: GeoPoint
        let day: CalendarDay
        let instant: Date
    }

    static var cases: [Case] {
        places.flatMap { place in
            dates.flatMap { date in
                hours.map { hour in
                    let day = CalendarDay(date)!
                    return Case(
                        name: "\(place.name) \(date) \(hour)h",
                        place: GeoPoint(latitude: place.latitude, longitude: place.longitude)!, day: day,
                        instant: day.startUTC.addingTimeInterval(Double(hour) * 3600))
                }
            }
        }
    }

    /// Zenith within 0.1°, solar noon within 1 min, sunrise and sunset within 2 min of PyEphem; polar days and nights
    /// the same. Prints the largest differences found.
    @Test(.timeLimit(.minutes(5))) func againstPyEphem() async throws {
        let cases = Self.cases
        let input = cases.map { item -> [String: Any] in
            [
                "lat": item.place.latitude, "lon": item.place.longitude, "date": item.day.description,
                "instant": ISO8601DateFormatter().string(from: item.instant),
            ]
        }
        let result = try await PythonPeers.run(
            "Tests/Peers/solar_reference.py", [],
            input: String(decoding: try JSONSerialization.data(withJSONObject: input), as: UTF8.self))
        try #require(result.status == 0, "solar_reference.py failed: \(result.standardError)")
        let answers = try #require(
            try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [[String: Any]])
        try #require(answers.count == cases.count)

        let parse = ISO8601DateFormatter()
        parse.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        var worst = (zenith: 0.0, noon: 0.0, event: 0.0)
        var where_ = (zenith: "", noon: "", event: "")
        var events = 0
        for (item, answer) in zip(cases, answers) {
            let zenith = SolarPosition(place: item.place, date: item.instant).zenith
            let zenithError = abs(zenith - (answer["zenith"] as! Double))
            #expect(zenithError < 0.1, "\(item.name): zenith \(zenith)° against \(answer["zenith"]!)°")
            if zenithError > worst.zenith { (worst.zenith, where_.zenith) = (zenithError, item.name) }

            let day = SolarDay(place: item.place, day: item.day)
            let noon = try #require(parse.date(from: answer["noon"] as! String))
            let noonError = abs(day.solarNoon.timeIntervalSince(noon))
            #expect(noonError < 60, "\(item.name): solar noon \(day.solarNoon) against \(noon)")
            if noonError > worst.noon { (worst.noon, where_.noon) = (noonError, item.name) }

            switch (day.daylight, answer["polar"] as? String) {
            case (.risesAndSets(let sunrise, let sunset), nil):
                for (ours, key) in [(sunrise, "sunrise"), (sunset, "sunset")] {
                    let theirs = try #require(parse.date(from: answer[key] as! String))
                    let error = abs(ours.timeIntervalSince(theirs))
                    #expect(error < 120, "\(item.name): \(key) \(ours) against \(theirs)")
                    if error > worst.event { (worst.event, where_.event) = (error, "\(item.name) \(key)") }
                    events += 1
                }
            case (.polarDay, "day"), (.polarNight, "night"):
                break
            case (let ours, let theirs):
                Issue.record("\(item.name): \(ours) against PyEphem's \(theirs ?? "sunrise and sunset")")
            }
        }
        print(
            String(
                format:
                    "SolarPositionTests against PyEphem, %d instants and %d sunrises/sunsets: max zenith error %.4f° (%@), max solar noon error %.1f s (%@), max sunrise/sunset error %.1f s (%@)",
                cases.count, events, worst.zenith, where_.zenith, worst.noon, where_.noon, worst.event, where_.event))
    }

    @Test func polarDayAndNight() {
        let svalbard = GeoPoint(latitude: 78.22, longitude: 15.65)!
        #expect(SolarDay(place: svalbard, day: CalendarDay("2024-06-21")!).daylight == .polarDay)
        #expect(SolarDay(place: svalbard, day: CalendarDay("2024-12-21")!).daylight == .polarNight)
        let mcMurdo = GeoPoint(latitude: -77.85, longitude: 166.67)!
        #expect(SolarDay(place: mcMurdo, day: CalendarDay("2024-06-21")!).daylight == .polarNight)
        #expect(SolarDay(place: mcMurdo, day: CalendarDay("2024-12-21")!).daylight == .polarDay)
        // The poles themselves and the date line: no NaN anywhere.
        for (latitude, longitude) in [(90.0, 0.0), (-90.0, 180.0), (0.0, -180.0), (89.999, 180.0)] {
            let place = GeoPoint(latitude: latitude, longitude: longitude)!
            for date in Self.dates {
                let day = SolarDay(place: place, day: CalendarDay(date)!)
                #expect(day.solarNoon.timeIntervalSince1970.isFinite)
                if case .risesAndSets(let sunrise, let sunset) = day.daylight {
                    #expect(sunrise < day.solarNoon && day.solarNoon < sunset)
                }
                let position = day.noonPosition
                #expect(position.zenith.isFinite && position.azimuth.isFinite && position.apparentZenith.isFinite)
            }
        }
    }

    /// The solar noon of a date belongs to that date at the place: early in the UTC day far east, late far west.
    @Test func solarNoonOfThePlacesDate() {
        let day = CalendarDay("2024-06-21")!
        let east = SolarDay(place: GeoPoint(latitude: 1.87, longitude: 172.9)!, day: day).solarNoon
        let west = SolarDay(place: GeoPoint(latitude: 1.87, longitude: -157.4)!, day: day).solarNoon
        #expect(east.timeIntervalSince(day.startUTC) / 3600 < 1)
        #expect(west.timeIntervalSince(day.startUTC) / 3600 > 22)
        // At noon the hour angle is 0 and the Sun due south (north of the tropic) or north.
        let position = SolarPosition(
            place: GeoPoint(latitude: 52.1, longitude: 5.18)!,
            date: SolarDay(
                place: GeoPoint(latitude: 52.1, longitude: 5.18)!, day: day
            ).solarNoon)
        #expect(abs(position.hourAngle) < 0.01)
        #expect(abs(position.azimuth - 180) < 0.05)
        #expect(abs(position.zenith - (52.1 - position.sun.declination)) < 0.001)
        // Refraction lifts the Sun: the apparent zenith is smaller, by about 34′ at the horizon.
        #expect(position.apparentZenith < position.zenith)
        #expect(abs(SolarPosition.refraction(elevation: 0) - 1735.0 / 3600) < 1e-9)
    }

    @Test func calendarDays() {
        #expect(CalendarDay("2024-02-29") != nil)
        for bad in ["2023-02-29", "2024-13-01", "2024-00-10", "2024-6-1", "24-06-01", "2024-06-01x", "", "２０２４-06-01"] {
            #expect(CalendarDay(bad) == nil, "\(bad)")
        }
        for text in ["1970-01-01", "2000-02-29", "2024-12-31", "1899-03-01", "2100-03-01"] {
            let day = CalendarDay(text)!
            #expect(CalendarDay(day.startUTC) == day)
            #expect(CalendarDay(day.startUTC.addingTimeInterval(86_399)) == day)
            #expect(day.description == text)
        }
        #expect(CalendarDay("1970-01-02")!.daysSince1970 == 1)
    }

    @Test func placesOutOfRange() {
        #expect(GeoPoint(latitude: 90.1, longitude: 0) == nil)
        #expect(GeoPoint(latitude: 0, longitude: -180.5) == nil)
        #expect(GeoPoint(latitude: .nan, longitude: 0) == nil)
        #expect(GeoPoint(latitude: -33.87, longitude: 151.21)?.description == "33.8700° S, 151.2100° E")
    }
}
