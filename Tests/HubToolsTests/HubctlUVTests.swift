import Foundation
import HubTestKit
import Testing

/// `hubctl uv` run as a process: its output for a known place and date, its JSON, its defaults from hubd.yaml, and
/// the errors that name the option at fault.
@Suite(.timeLimit(.minutes(2)))
struct HubctlUVTests {
    let hubctl: Hubctl

    init() throws {
        hubctl = try Hubctl()
    }

    @Test func worksOutTheDay() async throws {
        let result = try await hubctl.run(
            "uv", "--lat", "52.1", "--lon", "5.18", "--date", "2024-06-21", "--now", "2024-06-21T14:00:00Z")
        #expect(result.status == 0, "\(result.standardError)")
        let lines = result.standardOutput.split(separator: "\n").map(String.init)
        #expect(lines.contains("Place:        52.1000° N, 5.1800° E"))
        #expect(lines.contains("Date:         2024-06-21"))
        // PyEphem: transit 11:41:12, rising 03:18:37, setting 20:03:45 UTC (TZ=UTC here: local is UTC).
        #expect(lines.contains { $0.hasPrefix("Solar noon:   11:41:1") && $0.hasSuffix("local, UTC+00:00)") })
        #expect(lines.contains { $0.hasPrefix("Sunrise:      03:1") })
        #expect(lines.contains { $0.hasPrefix("Sunset:       20:0") })
        #expect(lines.contains("Ozone:        300.0 DU (climatological default; --ozone sets the day's)"))
        #expect(lines.contains { $0.hasPrefix("UV index now: ") && $0.contains("at 14:00:00 UTC") })
        #expect(lines.contains("UV index max: 9.1 (Very High) at solar noon, zenith 28.7°"))
        #expect(lines.contains { $0.hasPrefix("SKIN TYPE") && $0.contains("SUNBURN") && $0.contains("VITAMIN D") })
        // Type I at 9.06: 200 / (9.06 × 1.5) ≈ 14.7 → 15 min (rounded up); vitamin D, a quarter MED: 4 min.
        #expect(lines.contains("I          200 J/m²   15 min   4 min"))
    }

    @Test func json() async throws {
        let result = try await hubctl.run(
            "uv", "--lat", "-33.87", "--lon", "151.21", "--date", "2024-12-21", "--ozone", "280", "--json", "--now",
            "2024-06-01T00:00:00Z")
        #expect(result.status == 0, "\(result.standardError)")
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
        #expect(object["date"] as? String == "2024-12-21")
        #expect(object["ozone"] as? Double == 280)
        #expect(object["ozoneIsDefault"] as? Bool == false)
        #expect(object["maximumBand"] as? String == "Extreme")
        #expect(object["now"] == nil)  // not today
        #expect((object["solarNoon"] as? String)?.hasPrefix("2024-12-21T01:5") == true)
        #expect((object["skinTypes"] as? [[String: Any]])?.count == 6)
    }

    @Test func polarNight() async throws {
        let result = try await hubctl.run("uv", "--lat", "78.22", "--lon", "15.65", "--date", "2024-12-21")
        #expect(result.status == 0)
        #expect(result.standardOutput.contains("Sunrise:      none: the Sun stays down all day (polar night)"))
        #expect(result.standardOutput.contains("UV index max: 0.0 (Low)"))
        #expect(result.standardOutput.contains("No UV: the Sun does not rise above the horizon."))
    }

    @Test func placeFromTheConfiguration() async throws {
        let config = hubctl.state.file("hubd.yaml")
        try "uv:\n  latitude: 1.35\n  longitude: 103.82\n  ozone: 260\n".write(
            toFile: config, atomically: true, encoding: .utf8)
        let result = try await hubctl.run("uv", "--config", config, "--date", "2024-03-20")
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardOutput.contains("Place:        1.3500° N, 103.8200° E"))
        #expect(result.standardOutput.contains("Ozone:        260.0 DU\n"))

        try "uv:\n  latitude: 1.35\n".write(toFile: config, atomically: true, encoding: .utf8)
        let half = try await hubctl.run("uv", "--config", config)
        #expect(half.status == 78)
        #expect(half.standardError.contains("uv.latitude needs uv.longitude too"))
    }

    @Test func badInputNamesTheOption() async throws {
        let cases: [([String], String)] = [
            (["--lat", "95", "--lon", "0"], "--lat must be from -90 to 90"),
            (["--lat", "10", "--lon", "-181"], "--lon must be from -180 to 180"),
            (["--lat", "nan", "--lon", "0"], "--lat must be from -90 to 90"),
            (["--lat", "north", "--lon", "0"], "--lat"),
            (["--lat", "10"], "give --lat and --lon together"),
            (["--lat", "10", "--lon", "0", "--date", "2024-02-30"], "--date must be a real date written YYYY-MM-DD"),
            (["--lat", "10", "--lon", "0", "--date", "21/06/2024"], "--date must be a real date"),
            (["--lat", "10", "--lon", "0", "--ozone", "5000"], "--ozone must be from 50 to 700 DU"),
            // A negative number is the option's value, refused for its range (not "Missing value for '--ozone'").
            (["--lat", "10", "--lon", "0", "--ozone", "-5"], "--ozone must be from 50 to 700 DU, not -5.0"),
            (["--lat", "10", "--lon", "0", "--altitude", "-501"], "--altitude must be from -500 to 9000 metres"),
            ([], "give --lat and --lon (or uv.latitude and uv.longitude in hubd.yaml)"),
        ]
        for (arguments, message) in cases {
            let result = try await hubctl.run(["uv"] + arguments)
            #expect(result.status == 64, "\(arguments): \(result.status)")
            #expect(result.standardError.contains(message), "\(arguments): \(result.standardError)")
        }
    }

    /// Below sea level is inside the documented -500…9000 m, written as people write it (`--altitude -200`).
    @Test func aNegativeAltitudeIsAValue() async throws {
        let low = try await hubctl.run(
            "uv", "--lat", "31.5", "--lon", "35.5", "--date", "2024-06-21", "--altitude", "-200", "--json")
        #expect(low.status == 0, "\(low.standardError)")
        let object = try JSONSerialization.jsonObject(with: Data(low.standardOutput.utf8)) as? [String: Any]
        #expect(object?["altitude"] as? Double == -200, "\(low.standardOutput)")
    }

    @Test func helpHasAnExample() async throws {
        let result = try await hubctl.run("uv", "--help")
        #expect(result.status == 0)
        #expect(result.standardOutput.contains("hubctl uv --lat 52.1 --lon 5.18"))
    }
}
