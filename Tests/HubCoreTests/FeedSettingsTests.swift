import Foundation
import HubCore
import HubTestKit
import Testing

/// `feeds:` in hubd.yaml: a mapping or a list of feeds, each checked, errors naming the key.
@Suite struct FeedSettingsTests {
    func load(_ yaml: String, environment: [String: String] = [:]) throws -> HubConfiguration {
        let directory = try TemporaryDirectory(prefix: "feeds")
        try yaml.write(toFile: directory.file("hubd.yaml"), atomically: true, encoding: .utf8)
        try "secret-key\n".write(toFile: directory.file("openaq.key"), atomically: true, encoding: .utf8)
        var environment = environment
        environment["HUB_CONFIG"] = directory.file("hubd.yaml")
        return try HubConfiguration.load(option: nil, environment: environment)
    }

    @Test func feedsAreReadWithTheirDefaults() throws {
        let feeds = try load(
            """
            feeds:
              singapore: {format: nea, sensor_prefix: sg-}
              albuquerque: {format: openaq, locations: [2178, 8118], api_key_file: openaq.key, interval: 2h}
              garden:
                format: json
                url: http://192.168.1.20/air.json
                items: stations
                region: id
                time: at
                value: aqi
                metrics: {pm25: pm.pm25}
            """
        ).feeds
        #expect(feeds.map(\.name) == ["singapore", "albuquerque", "garden"])
        #expect(feeds[0].urls == [NEAFeed.defaultPSI, NEAFeed.defaultPM25] && feeds[0].interval == .seconds(3600))
        #expect(feeds[0].sensorName(region: "west") == "sg-west" && feeds[0].unit == "PSI")
        #expect(feeds[0].topic(region: "west") == "sensorhub/feeds/singapore/west")
        #expect(feeds[1].apiKey == "secret-key" && feeds[1].locations == [2178, 8118])
        #expect(feeds[1].interval == .seconds(7200) && feeds[1].sensorName(region: "x") == "albuquerque-x")
        #expect(feeds[2].json?.metrics.map(\.name) == ["pm25"] && feeds[2].urls == ["http://192.168.1.20/air.json"])
    }

    @Test func aListOfFeedsAndTheKeyFromTheEnvironment() throws {
        let feeds = try load(
            "feeds:\n  - {name: abq, format: openaq, locations: [2178]}\n",
            environment: ["HUB_FEEDS_0__API_KEY": "k"]
        ).feeds
        #expect(feeds.map(\.name) == ["abq"])
    }

    @Test(arguments: [
        ("feeds: {sg: {format: csv}}", "feeds.sg.format"),
        ("feeds: {sg: {format: nea, psi_url: ftp://x}}", "feeds.sg.psi_url"),
        ("feeds: {sg: {format: nea, colour: red}}", "feeds.sg.colour"),
        ("feeds: {sg: {format: nea, value: aqi}}", "feeds.sg.value"),
        ("feeds: {sg: {format: nea, interval: 0s}}", "feeds.sg.interval"),
        ("feeds: {abq: {format: openaq, locations: [2178]}}", "feeds.abq.api_key_file"),
        ("feeds: {abq: {format: openaq, api_key_file: openaq.key}}", "feeds.abq.locations"),
        ("feeds: {abq: {format: openaq, locations: [x], api_key_file: openaq.key}}", "feeds.abq.locations"),
        ("feeds: {g: {format: json, url: 'http://h/a', value: v}}", "feeds.g.time"),
        ("feeds: {g: {format: json, url: 'http://h/a', time: t, value: 'a..b'}}", "feeds.g.value"),
        (
            "feeds: {g: {format: json, url: 'http://h/a', time: t, value: v, metrics: {value: x}}}",
            "feeds.g.metrics.value"
        ),
        ("feeds: {Big Feed: {format: nea}}", "feeds.Big Feed"),
        ("feeds: [{format: nea}]", "feeds[0].name"),
    ])
    func mistakesNameTheKey(yaml: String, key: String) {
        let error = #expect(throws: ConfigurationError.self) { try load(yaml) }
        #expect(error?.description.contains(key) == true, "\(String(describing: error))")
    }

    @Test func theBackOffWaitsAtLeastWhatRetryAfterAskedWithinItsCap() {
        var feed = FeedSettings(name: "abq", format: .openaq)
        feed.interval = .seconds(600)
        #expect(feed.delay(after: 0) == .seconds(600))
        #expect(feed.delay(after: 1) == .seconds(60) && feed.delay(after: 3) == .seconds(240))
        #expect(feed.delay(after: 10) == .seconds(3600))
        // A longer Retry-After wins over the back-off; a shorter one does not shorten it.
        #expect(feed.delay(after: 1, retryAfter: .seconds(300)) == .seconds(300))
        #expect(feed.delay(after: 3, retryAfter: .seconds(5)) == .seconds(240))
        // A day asked for is an hour, or the interval when that is longer.
        #expect(feed.delay(after: 1, retryAfter: .seconds(86_400)) == .seconds(3600))
        feed.interval = .seconds(7200)
        #expect(feed.delay(after: 1, retryAfter: .seconds(86_400)) == .seconds(7200))
        // A short interval backs off from itself, and a Retry-After still holds it back.
        feed.interval = .seconds(1)
        #expect(feed.delay(after: 2) == .seconds(2))
        #expect(feed.delay(after: 1, retryAfter: .seconds(3)) == .seconds(3))
    }
}
