import HubCore
import Testing

/// Named ranges of a numeric sensor's value: parsing, the band of a value at the edges, the text round trip, the
/// built-in tables, and the format that carries them.
@Suite struct ValueBandsTests {
    @Test func parsesAndNamesValues() throws {
        let bands = try ValueBands(" 0 = Low , 3=Moderate,6=High,8=Very High,11=Extreme")
        #expect(bands.names == ["Low", "Moderate", "High", "Very High", "Extreme"])
        #expect(bands.bands[1] == ValueBands.Band(lower: 3, name: "Moderate"))
        let cases: [(Double, String)] = [
            (-5, "Low"), (0, "Low"), (2.99, "Low"), (3, "Moderate"), (5.9, "Moderate"), (6, "High"),
            (10.99, "Very High"),
            (11, "Extreme"), (1e9, "Extreme"),
        ]
        for (value, name) in cases { #expect(bands.name(for: value) == name, "\(value)") }
        #expect(bands.description == "0=Low,3=Moderate,6=High,8=Very High,11=Extreme")
    }

    @Test(arguments: ["0=Low,3=Moderate", "-10.5=cold,0=fresh,21.25=warm", "5=only", "0=Ünïcode ☀️,1e3=big"])
    func theTextRoundTrips(text: String) throws {
        let bands = try ValueBands(text)
        #expect(try ValueBands(bands.description) == bands)
    }

    @Test(arguments: [
        ("", "band 1 '' is not 'lower=name'"),
        ("0=Low,", "band 2 '' is not 'lower=name'"),
        ("Low", "band 1 'Low' is not 'lower=name'"),
        ("x=Low", "band 1: 'x' is not a number"),
        ("nan=Low", "band 1: 'nan' is not a number"),
        ("inf=Low", "band 1: 'inf' is not a number"),
        ("0=", "band 1 has no name after '='"),
        ("0=  ", "band 1 has no name after '='"),
        ("0=a=b", "band 1: the name 'a=b' contains '='"),
        ("0=Low,0=Moderate", "band 2: 0 is not above 0"),
        ("3=Low,2.5=Moderate", "band 2: 2.5 is not above 3"),
        ("0=Low,1=Low", "band 2: 'Low' names two bands"),
        ("0=a\u{1B}[31m", "band 1: the name contains a control character (U+001B)"),
        ("0=a\u{202E}b", "band 1: the name contains an invisible formatting character (U+202E)"),
    ])
    func badTextIsRefusedSayingWhy(text: String, reason: String) {
        #expect {
            try ValueBands(text)
        } throws: { error in
            "\(error)".hasPrefix(reason)
        }
    }

    @Test func atMostTwentyBandsWithShortNames() throws {
        let twenty = (0..<20).map { "\($0)=b\($0)" }.joined(separator: ",")
        #expect(try ValueBands(twenty).bands.count == 20)
        #expect(throws: ValueBands.Problem.self) { try ValueBands(twenty + ",20=b20") }
        #expect(throws: ValueBands.Problem.self) { try ValueBands("0=" + String(repeating: "x", count: 65)) }
    }

    /// WHO's bands on the unrounded value agree with the rounded index's band, and `UVIndex` reads them.
    @Test func whoUVMatchesTheRoundedIndex() {
        for tenths in 0...200 {
            let value = Double(tenths) / 10
            #expect(ValueBands.whoUV.name(for: value) == UVIndex(value).band.rawValue, "\(value)")
            #expect(ValueBands.whoUV.name(for: value) == UVBand(UVIndex(value).rounded).rawValue, "\(value)")
        }
        #expect(ValueBands.whoUV.name(for: 2.49) == "Low" && ValueBands.whoUV.name(for: 2.5) == "Moderate")
        #expect(ValueBands.whoUV.description == "0=Low,2.5=Moderate,5.5=High,7.5=Very High,10.5=Extreme")
    }

    @Test func psiAndUSAQI() {
        let psi: [(Double, String)] = [
            (0, "Good"), (50, "Good"), (51, "Moderate"), (100, "Moderate"), (101, "Unhealthy"), (200, "Unhealthy"),
            (201, "Very Unhealthy"), (300, "Very Unhealthy"), (301, "Hazardous"),
        ]
        for (value, name) in psi { #expect(ValueBands.psi.name(for: value) == name, "\(value)") }
        for index in [0, 50, 51, 100, 101, 150, 151, 200, 201, 300, 301, 500] {
            #expect(ValueBands.usAQI.name(for: Double(index)) == AQI.category(index).name, "\(index)")
        }
    }

    /// The format's `bands` field: parsed as the others are, `''` clears, a bad one names the field.
    @Test func theFormatsBandsField() throws {
        func fields(_ bands: String?) throws(DeviceFieldError) -> ValueFormat {
            try ValueFormat.fields(
                value: "uvi", map: nil, unit: "UVI", decimals: "1", range: nil, bands: bands, knownDefaults: false)
        }
        #expect(try fields("0=Low,3=High").bands == ValueBands("0=Low,3=High"))
        #expect(try fields("").bands == nil)
        #expect(try fields(nil).bands == nil)
        #expect {
            try fields("3=a,1=b")
        } throws: { error in
            "\(error)" == "bands band 2: 1 is not above 3"
        }
    }

    /// With bands the status is the band, the number the reading, kept as the `value` attribute.
    @Test func aBandedFormatDecodes() throws {
        let format = ValueFormat(path: try ValuePath("uvi"), unit: "UVI", decimals: 1, bands: .whoUV)
        let decoded = try format.decode(#"{"uvi": 6.24, "value": "x", "max_today": 7.1}"#, numeric: true).get()
        #expect(decoded.status == "High" && decoded.number == 6.24)
        #expect(decoded.attributes.map(\.name) == ["value", "max_today"])
        #expect(decoded.attributes["value"] == .number(6.24))
        let plain = try ValueFormat(bands: .psi).decode("57", numeric: true).get()
        #expect(plain.status == "Moderate" && plain.number == 57 && plain.attributes["value"] == .number(57))
        // A status sensor's value is no number: bands leave it alone.
        #expect(try format.decode(#"{"uvi": "on"}"#, numeric: false).get().status == "on")
    }

    @Test func aBandedSensorShowsTheBandAndTheValue() throws {
        var sensor = Sensor(
            name: "uv", topic: "uv", status: "High", lastUpdated: Timestamp(millisecondsSince1970: 0),
            added: Timestamp(millisecondsSince1970: 0), kind: .numeric,
            format: ValueFormat(unit: "UVI", decimals: 1, bands: .whoUV),
            attributes: [.init(name: "value", value: .number(6.24))])
        #expect(sensor.value == 6.24)
        #expect(sensor.shownStatus == "High (6.2 UVI)")
        sensor.status = "offline"
        #expect(sensor.value == nil && sensor.shownStatus == "offline")
    }

    /// The registry keeps a sensor's bands as their text, reads them back, and names a bad one; a file without
    /// them reads as before.
    @Test func theRegistryKeepsThem() throws {
        func document(_ members: String) throws -> DefaultsDocument {
            try DefaultsDocument.decode(
                Array(
                    (#"{"schemaVersion": 1, "sensors": [{"name": "uv", "topic": "uv", "added": "2026-11-20T08:00:00.000Z", "#
                        + #""kind": "numeric"\#(members)}]}"#).utf8))
        }
        #expect(try document("").sensors[0].format.bands == nil)
        let written = try document(#", "bands": "0=Low,2.5=Moderate""#)
        #expect(written.sensors[0].format.bands == (try ValueBands("0=Low,2.5=Moderate")))
        let again = try DefaultsDocument.decode(written.encode())
        #expect(again.sensors[0].format.bands == written.sensors[0].format.bands)
        #expect(String(decoding: written.encode(), as: UTF8.self).contains(#""bands": "0=Low,2.5=Moderate""#))
        #expect {
            try document(#", "bands": "1=a,0=b""#)
        } throws: { error in
            "\(error)".contains("sensors[0].bands: band 2: 0 is not above 1")
        }
    }
}
