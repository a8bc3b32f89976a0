import HubCore
import HubTestKit
import Testing

/// The regional air-quality feeds' parsers, on documents shaped like the services' own, and on hostile ones.
@Suite struct FeedParserTests {
    func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    func nea(_ documents: String...) throws(FeedError) -> FeedParse { try NEAFeed.parse(documents.map(bytes)) }

    // MARK: NEA

    @Test(arguments: [false, true])
    func neaMergesPSIAndPM25PerRegion(v2: Bool) throws {
        let parse = try nea(FeedFixtures.psi(v2: v2), FeedFixtures.pm25(v2: v2))
        #expect(parse.rejected.isEmpty)
        #expect(parse.readings.map(\.region) == ["central", "east", "national", "north", "south", "west"])
        let west = try #require(parse.readings.first { $0.region == "west" })
        #expect(west.index == 54)
        #expect(west.time == Timestamp(iso8601: "2020-12-15T00:00:00Z"))
        #expect(west.updated == Timestamp(iso8601: "2020-12-15T00:08:53Z"))
        #expect(west.place == GeoPoint(latitude: 1.35735, longitude: 103.7))
        #expect(west.metric("pm25_one_hourly") == 12)
        #expect(west.metric("co_eight_hour_max") == 0.41)
        #expect(west.metric("pm25_sub_index") == 54)
        // Every metric the PSI document has (bar the index itself) and the PM2.5 one's.
        #expect(west.metrics.count == 12)
        let national = try #require(parse.readings.first { $0.region == "national" })
        #expect(national.place == nil, "national's 0,0 is no place")
        #expect(national.metric("pm25_one_hourly") == nil)
    }

    @Test func neaPayloadCarriesIndexTimeAndMetrics() throws {
        let west = try #require(try nea(FeedFixtures.psi()).readings.first { $0.region == "west" })
        let json = west.json
        #expect(json.hasPrefix(#"{"value":54,"time":"2020-12-15T00:00:00.000Z","updated":"#))
        #expect(json.contains(#""latitude":1.35735,"longitude":103.7"#))
        #expect(json.contains(#""co_eight_hour_max":0.41"#))
    }

    @Test func neaV2ErrorEnvelopeIsAnError() {
        #expect(throws: FeedError.self) {
            try nea(#"{"code":17,"errorMsg":"Data not found","data":null}"#)
        }
        do throws(FeedError) {
            _ = try nea(#"{"code":17,"errorMsg":"Data not found","data":null}"#)
        } catch {
            #expect(error.description.contains("Data not found"))
            #expect(error.kind == "service error")
        }
    }

    @Test func neaRegionMissingIsRefusedOnItsOwn() throws {
        let parse = try nea(
            FeedFixtures.psi(psi: ["west": 54, "national": 57, "east": 48, "central": 57, "south": 50]))
        #expect(parse.readings.count == 5)
        #expect(parse.rejected.count == 1)
        #expect(parse.rejected[0].description.contains("psi_twenty_four_hourly.north"))
        #expect(parse.rejected[0].kind == "missing")
    }

    @Test(arguments: [-5.0, 1200])
    func neaAbsurdIndexIsRefused(value: Double) throws {
        let parse = try nea(FeedFixtures.psi(psi: ["west": value, "national": 57, "east": 48]))
        #expect(parse.readings.map(\.region) == ["east", "national"])
        #expect(parse.rejected.contains { $0.kind == "absurd value" && $0.description.contains("west") })
    }

    @Test func neaBadTimestampThrowsNamingTheField() {
        do throws(FeedError) {
            _ = try nea(FeedFixtures.psi(hour: "yesterday at eight"))
            Issue.record("a bad timestamp was taken")
        } catch {
            #expect(error.kind == "bad timestamp")
            #expect(error.description.contains("items[0].timestamp"))
        }
    }

    @Test(arguments: [
        "", "not json", "[]", "{}", #"{"region_metadata":[],"items":[]}"#,
        #"{"region_metadata":[{"name":"west"}],"items":[{"timestamp":"2020-12-15T08:00:00+08:00","readings":[1]}]}"#,
        #"{"region_metadata":"x","items":[]}"#, #"{"code":0,"errorMsg":"","data":{"items":[]}}"#,
        #"{"region_metadata":[],"items":[{"timestamp":"2020-12-15T08:00:00+08:00","readings":{"pm25_one_hourly":{"west":3}}}]}"#,
        String(repeating: "[", count: 10_000),
    ])
    func neaHostileDocumentsThrow(document: String) {
        #expect(throws: FeedError.self) { try nea(document) }
    }

    @Test func neaTextNumbersAndNullsAreTolerated() throws {
        let document = #"""
            {"region_metadata":[{"name":"west","label_location":{"latitude":1.35735,"longitude":103.7}}],
             "items":[{"timestamp":"2020-12-15T08:00:00+08:00","update_timestamp":"2020-12-15T08:08:53+08:00",
             "readings":{"psi_twenty_four_hourly":{"west":"54"},"o3_sub_index":{"west":null}}}]}
            """#
        let parse = try nea(document)
        #expect(parse.readings.first?.index == 54)
        #expect(parse.readings.first?.metrics == [])
    }

    // MARK: OpenAQ

    @Test func openAQLatestBecomesOneReadingWithTheUSAQI() throws {
        let location = try OpenAQFeed.location(bytes(FeedFixtures.openAQLocation))
        #expect(location.name == "Del Norte")
        #expect(location.sensors[3920] == .init(name: "pm25", units: "µg/m³"))
        let parse = try OpenAQFeed.latest(bytes(FeedFixtures.openAQLatest()), at: location)
        #expect(parse.rejected.isEmpty)
        let reading = try #require(parse.readings.first)
        // The reference's worked examples: PM2.5 123.6 → 199, PM10 261.8 → 154; the worse one is the index.
        #expect(reading.index == 199)
        #expect(reading.time == Timestamp(iso8601: "2024-05-01T16:00:00Z"))
        #expect(reading.place == GeoPoint(latitude: 35.1353, longitude: -106.584702))
        #expect(reading.metrics.map(\.name) == ["no2", "o3", "pm10", "pm25"])
        #expect(FeedReading.slug(reading.region) == "del-norte")
    }

    @Test func openAQErrorCodesAreRefused() throws {
        let location = try OpenAQFeed.location(bytes(FeedFixtures.openAQLocation))
        let parse = try OpenAQFeed.latest(bytes(FeedFixtures.openAQLatest(pm25: -999)), at: location)
        #expect(parse.readings.first?.index == 154, "PM10 alone")
        #expect(parse.rejected.count == 1)
        #expect(parse.rejected[0].kind == "absurd value")
        let none = try OpenAQFeed.latest(bytes(FeedFixtures.openAQLatest(pm25: -999, pm10: -999)), at: location)
        #expect(none.readings.isEmpty)
        #expect(none.rejected.contains { $0.kind == "missing" && $0.description.contains("Del Norte") })
    }

    @Test(arguments: [#"{"results":[]}"#, #"{"detail":"Not Found"}"#, #"{"results":[{"id":1,"sensors":"x"}]}"#])
    func openAQHostileLocationsThrow(document: String) {
        #expect(throws: FeedError.self) { try OpenAQFeed.location(bytes(document)) }
    }

    // MARK: Generic JSON

    let stations = FeedFixtures.stations()

    @Test func genericFeedReadsItemsWithPaths() throws {
        let format = JSONFeedFormat(
            items: try ValuePath("stations"), region: try ValuePath("id"), time: try ValuePath("at"),
            value: try ValuePath("aqi"), latitude: try ValuePath("lat"), longitude: try ValuePath("lon"),
            metrics: [.init(name: "pm25", path: try ValuePath("pm.pm25"))])
        let parse = try format.parse(bytes(stations))
        #expect(parse.readings.map(\.region) == ["North Hill", "harbour"])
        #expect(parse.readings[0].place == GeoPoint(latitude: 52.1, longitude: 5.18))
        #expect(parse.readings[1].time == Timestamp(iso8601: "2024-05-01T10:00:00Z"))
        #expect(parse.readings[1].index == 61)
        #expect(parse.readings[1].metric("pm25") == 18)
        #expect(parse.rejected.map(\.kind) == ["bad timestamp", "absurd value", "missing"])
        #expect(parse.rejected[0].description.contains("stations[2]: at"))
    }

    @Test func genericFeedReadsAnObjectKeyedByRegionAndASingleDocument() throws {
        let keyed = JSONFeedFormat(items: try ValuePath("data"), time: try ValuePath("t"), value: try ValuePath("v"))
        let parse = try keyed.parse(bytes(#"{"data":{"north":{"t":"2024-05-01T10:00:00Z","v":5}}}"#))
        #expect(parse.readings.map(\.region) == ["north"])
        let single = JSONFeedFormat(fixedRegion: "garden", time: try ValuePath("t"), value: try ValuePath("v"))
        #expect(try single.parse(bytes(#"{"t":"2024-05-01T10:00:00Z","v":5}"#)).readings.map(\.region) == ["garden"])
        #expect(throws: FeedError.self) { try keyed.parse(bytes(#"{"other":1}"#)) }
    }

    @Test func slugsMakeSensorNamesAndTopicLevels() {
        #expect(FeedReading.slug("Ang Mo Kio / Blk 1") == "ang-mo-kio-blk-1")
        #expect(FeedReading.slug("West") == "west")
        #expect(FeedReading.slug("+#/") == nil)
    }
}
