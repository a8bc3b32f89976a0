import Foundation
import HubCore
import HubTestKit
import Testing

@Suite struct HubConfigurationTests {
    func load(_ yaml: String?, environment: [String: String] = [:]) throws -> HubConfiguration {
        let directory = try TemporaryDirectory(prefix: "config")
        var environment = environment
        if let yaml {
            try yaml.write(toFile: directory.file("hubd.yaml"), atomically: true, encoding: .utf8)
            environment["HUB_CONFIG"] = directory.file("hubd.yaml")
        }
        return try HubConfiguration.load(option: nil, environment: environment)
    }

    @Test func theDefaultFileIsTheDefaults() async throws {
        let defaults = try String(contentsOfFile: "conf/hubd.yaml", encoding: .utf8)
        #expect(try load(defaults) == HubConfiguration())
        #expect(HubConfiguration().acknowledgeWhenJournaled, "held until journaled, by default (issue 36)")
        // Its commented settings, switched on, must be the defaults too: the file documents them.
        let uncommented = defaults.replacingOccurrences(
            of: #"(?m)^(\s+)# ([a-z_]+: .+)$"#, with: "$1$2", options: .regularExpression)
        #expect(uncommented.contains("\n  qos: 1\n"))
        var expected = HubConfiguration()
        expected.stateDirectory = StateDirectory.systemDefault
        #expect(try load(uncommented) == expected)
    }

    /// `route.roads`: a file name, relative to the configuration's directory.
    @Test func routeRoadsIsAFile() async throws {
        #expect(try load("state: {directory: /srv/hub}").routeRoads == nil)
        let roads = try #require(try load("route: {roads: streets.geojson}").routeRoads)
        #expect(roads.hasPrefix("/") && roads.hasSuffix("/streets.geojson"))
        #expect(try load("route: {roads: /srv/roads.geojson}").routeRoads == "/srv/roads.geojson")
        #expect(throws: ConfigurationError.self) { try load("route: {roads: x, lanes: y}") }
    }

    @Test func everyKeyIsRead() async throws {
        let configuration = try load(
            """
            state: {directory: /srv/hub}
            sensors: {topic_template: "home/{name}/status", qos: 0, silence_timeout: 15m, max_status_length: 32,
                      acknowledge_when_journaled: false}
            hub: {availability_topic: home/hub}
            store: {flush_interval: 500ms}
            log: {level: DEBUG}
            """)
        #expect(configuration.stateDirectory == "/srv/hub")
        #expect(configuration.topicTemplate.pattern == "home/{name}/status")
        #expect(configuration.qos == 0)
        #expect(configuration.silenceTimeout == .seconds(900))
        #expect(configuration.maximumStatusLength == 32)
        #expect(!configuration.acknowledgeWhenJournaled)
        #expect(configuration.availabilityTopic == "home/hub")
        #expect(configuration.flushInterval == .milliseconds(500))
        #expect(configuration.logLevel == "debug")
        // Every 5 minutes by default (the status log's `fsync`s cost a Pi's card), an hour at most.
        #expect(try load("log: {level: info}").flushInterval == .seconds(300))
        #expect(try load("store: {flush_interval: 1h}").flushInterval == .seconds(3600))
    }

    @Test func airKeysAreReadAndChecked() async throws {
        let configuration = try load(
            """
            sds011: {port: /dev/ttyUSB1, name: balcony air, interval: 5m, warm_up: 0s, samples: 5}
            air: {scale: light, alert: {metric: pm10_1h, threshold: 50, hysteresis: 20, min_interval: 1h}}
            history: {retention: 30d}
            """)
        #expect(configuration.sds011.port == "/dev/ttyUSB1" && configuration.sds011.name == "balcony air")
        #expect(configuration.sds011.interval == .seconds(300) && configuration.sds011.warmUp == .zero)
        #expect(configuration.sds011.samples == 5)
        #expect(configuration.air.scale == .light && configuration.air.metric.description == "pm10_1h")
        #expect(configuration.air.threshold == 50 && configuration.air.hysteresis == 0.2)
        #expect(configuration.air.minimumInterval == .seconds(3600))
        #expect(configuration.historyRetention == .seconds(30 * 86_400))
        // PM10 without a threshold of its own watches PM10's WHO 24-hour guideline.
        #expect(try load("air: {alert: {metric: pm10_24h}}").air.threshold == 45)
        #expect(throws: ConfigurationError.self) { try load("air: {alert: {metric: ozone}}") }
        #expect(throws: ConfigurationError.self) { try load("sds011: {interval: 0s}") }
        #expect(throws: ConfigurationError.self) { try load("sds011: {topic: 'a/#/{id}'}") }
    }

    @Test func uvPlaceIsReadAndChecked() async throws {
        let configuration = try load("uv: {latitude: -33.87, longitude: 151.21, ozone: 280, altitude: 58}")
        #expect(configuration.uv.place == GeoPoint(latitude: -33.87, longitude: 151.21))
        #expect(configuration.uv.ozone == 280)
        #expect(configuration.uv.altitude == 58)
        #expect(try load(nil).uv == UVSettings())
        #expect(throws: ConfigurationError.self) { try load("uv: {latitude: 52.1}") }
        #expect(throws: ConfigurationError.self) { try load("uv: {latitude: 91, longitude: 0}") }
        #expect(throws: ConfigurationError.self) { try load("uv: {latitude: 0, longitude: 0, ozone: 5000}") }
        #expect(throws: ConfigurationError.self) { try load("uv: {lat: 0}") }
        let source = try load(
            "uv: {latitude: 52.1, longitude: 5.18, name: garden uv, interval: 5m, temis: true, temis_refresh: 6h}"
        ).uv
        #expect(source.name == "garden uv" && source.resolvedTopic == "sensorhub/uv/garden uv")
        #expect(source.interval == .seconds(300) && source.temisRefresh == .seconds(6 * 3600))
        #expect(source.temisURL == "https://www.temis.nl/uvradiation/nrt/uvindex.php?lon=5.18&lat=52.1")
        let local = try load("uv: {latitude: 1, longitude: 2, temis: 'http://127.0.0.1:8/p?x=1'}").uv
        #expect(local.temisURL == "http://127.0.0.1:8/p?x=1")
        #expect(try load("uv: {latitude: 1, longitude: 2, temis: false}").uv.temisURL == nil)
    }

    @Test func theEnvironmentOverridesTheFile() async throws {
        let configuration = try load(
            "sensors:\n  silence_timeout: 15m\n",
            environment: ["HUB_SENSORS_SILENCE_TIMEOUT": "off", "HUB_LOG_LEVEL": "error"])
        #expect(configuration.silenceTimeout == nil)
        #expect(configuration.logLevel == "error")
    }

    @Test(arguments: [
        ("sensors:\n  qos: 3\n", "sensors.qos (or $HUB_SENSORS_QOS) is '3': the QoS is 0, 1 or 2"),
        (
            "sensors:\n  silence_timeout: soon\n",
            "sensors.silence_timeout (or $HUB_SENSORS_SILENCE_TIMEOUT) is 'soon': write a duration like 90s, 10m, 2h or 1d, or off"
        ),
        (
            "sensors:\n  topic_template: home/status\n",
            "sensors.topic_template (or $HUB_SENSORS_TOPIC_TEMPLATE) is 'home/status': the topic template 'home/status' is not valid: it must contain {name} exactly once"
        ),
        (
            "log:\n  level: loud\n",
            "log.level (or $HUB_LOG_LEVEL) is 'loud': one of trace, debug, info, notice, warning, error, critical"
        ),
        (
            "hub:\n  availability_topic: hub/#\n",
            "hub.availability_topic (or $HUB_HUB_AVAILABILITY_TOPIC) is 'hub/#': 'hub/#' is not a valid sensor topic: topic 'hub/#' contains a wildcard (+ or #), which only subscriptions may use"
        ),
    ])
    func invalidValuesNameTheKey(yaml: String, message: String) async throws {
        let error = #expect(throws: ConfigurationError.self) { try load(yaml) }
        #expect(error?.description.hasSuffix(message) == true, "\(String(describing: error))")
    }

    @Test func discoveryIsOffUnlessEnabledAndItsKeysAreChecked() async throws {
        #expect(try load("log: {level: info}\n").discovery == DiscoverySettings())
        #expect(!DiscoverySettings().enabled && DiscoverySettings().maximumAutoSensors == 100)
        let discovery = try load(
            """
            discovery:
              enabled: true
              families: [Tasmota, esphome]
              zigbee2mqtt_base: [zigbee2mqtt, /home/zigbee/]
              max_auto_sensors: 2
            """
        ).discovery
        #expect(discovery.enabled && discovery.families == [.tasmota, .esphome])
        #expect(discovery.zigbee2mqttBases == ["zigbee2mqtt", "home/zigbee"] && discovery.maximumAutoSensors == 2)
        #expect(try load("discovery: {zigbee2mqtt_base: z2m}\n").discovery.zigbee2mqttBases == ["z2m"])
        for (yaml, message) in [
            ("discovery: {families: [zwave]}\n", "discovery.families[0]"),
            ("discovery: {zigbee2mqtt_base: 'z2m/#'}\n", "is 'z2m/#': a topic without wildcards"),
            ("discovery: {max_auto_sensors: -1}\n", "discovery.max_auto_sensors"),
            ("discovery: {enable: true}\n", "discovery.enable: unknown key"),
        ] {
            let error = #expect(throws: ConfigurationError.self) { try load(yaml) }
            #expect(error?.description.contains(message) == true, "\(String(describing: error))")
        }
    }

    @Test func aMissingNamedFileIsAnError() async throws {
        let error = #expect(throws: ConfigurationError.self) {
            try HubConfiguration.load(option: "/nonexistent/hubd.yaml", environment: [:])
        }
        #expect(error == .unreadable(path: "/nonexistent/hubd.yaml", reason: "no such file"))
    }

    /// A file that reads as empty is an empty configuration (every default), whatever kind of file it is; what
    /// can't be read says why.
    @Test func devNullIsAnEmptyConfigurationAndADirectorySaysSo() async throws {
        let empty = try HubConfiguration.load(option: "/dev/null", environment: [:])
        #expect(empty == (try HubConfiguration.read(ConfigNode.parse("", file: "/dev/null", environment: [:]))))
        let directory = #expect(throws: ConfigurationError.self) {
            try HubConfiguration.load(option: "/tmp", environment: [:])
        }
        #expect(directory == .unreadable(path: "/tmp", reason: "is a directory"))
        let endless = #expect(throws: ConfigurationError.self) {
            try HubConfiguration.load(option: "/dev/zero", environment: [:])
        }
        #expect(endless == .unreadable(path: "/dev/zero", reason: "larger than 4194304 bytes"))
    }

    /// One reader for the whole file: a section of the wrong shape, a mistyped key or a value of the wrong type
    /// stops the load with the key path, never falls back to a default.
    @Test(arguments: [
        ("sensors:\n  - kitchen\n", "sensors: expected a mapping"),
        ("sensors:\n  silence_timout: 10m\n", "sensors.silence_timout: unknown key"),
        ("air:\n  alert: [pm25]\n", "air.alert: expected a mapping"),
        ("store: {flush_interval: {seconds: 1}}\n", "store.flush_interval: expected a single value, got a mapping"),
        ("store: {flush_interval: 2h}\n", "a duration up to 1h"),
        (
            "sensors: {max_status_length: long}\n",
            "sensors.max_status_length (or $HUB_SENSORS_MAX_STATUS_LENGTH) is 'long'"
        ),
        ("- a\n- b\n", "(top): expected a mapping of sections"),
        ("sensor:\n  qos: 1\n", "sensor: unknown key"),
    ])
    func wrongShapesNameTheKey(yaml: String, message: String) throws {
        let error = #expect(throws: ConfigurationError.self) { try load(yaml) }
        #expect(error?.description.contains(message) == true, "\(String(describing: error))")
    }

    @Test func theEnvironmentReachesKeysTheFileLacks() throws {
        let configuration = try load(
            "log: {level: info}\n", environment: ["HUB_SENSORS_QOS": "0", "HUB_HTTP_LISTEN": "off"])
        #expect(configuration.qos == 0 && configuration.httpListen == .off)
        let error = #expect(throws: ConfigurationError.self) { try load(nil, environment: ["HUB_SENSORS_QOS": "7"]) }
        #expect(error?.description == "sensors.qos (or $HUB_SENSORS_QOS) is '$HUB_SENSORS_QOS=7': the QoS is 0, 1 or 2")
    }

    @Test func aSecretComesFromAFileRelativeToTheConfiguration() throws {
        let directory = try TemporaryDirectory(prefix: "config")
        try "0123456789abcdef0123\n".write(toFile: directory.file("token"), atomically: true, encoding: .utf8)
        try "http: {listen: '0.0.0.0:8080', token_file: token}\n".write(
            toFile: directory.file("hubd.yaml"), atomically: true, encoding: .utf8)
        let configuration = try HubConfiguration.load(option: directory.file("hubd.yaml"), environment: [:])
        #expect(configuration.httpToken == "0123456789abcdef0123")
    }

    /// UTF-8, but with control bytes no YAML text has: said to be binary, not a YAML position (issue 16, item 4).
    @Test func aFileWithControlBytesSaysItIsNotText() throws {
        let directory = try TemporaryDirectory(prefix: "config")
        try Data("sensors:\n  qos: 1\n\u{1}\u{2}\u{3}\u{1B}garbage\n".utf8).write(
            to: URL(fileURLWithPath: directory.file("hubd.yaml")))
        let error = #expect(throws: ConfigurationError.self) {
            try HubConfiguration.load(option: directory.file("hubd.yaml"), environment: [:])
        }
        #expect(
            error
                == .invalidFile(
                    path: directory.file("hubd.yaml"),
                    reason: "not text: line 3 holds the control character U+0001 (is it a binary file?)"))
    }

    @Test func aBinaryFileSaysSo() throws {
        let directory = try TemporaryDirectory(prefix: "config")
        try Data([0x7F, 0x45, 0x4C, 0x46, 0x00, 0xFF, 0xFE]).write(
            to: URL(fileURLWithPath: directory.file("hubd.yaml")))
        let error = #expect(throws: ConfigurationError.self) {
            try HubConfiguration.load(option: directory.file("hubd.yaml"), environment: [:])
        }
        #expect(
            error == .invalidFile(path: directory.file("hubd.yaml"), reason: "not UTF-8 text (is it a binary file?)"))
    }
}

/// YAML mistakes in plain words (issue 52: a tab was `found character that cannot start any token: \u{9}…`).
@Suite struct YAMLWordsTests {
    @Test(arguments: [
        ("sensors:\n\tsilence_timeout: 10m\n", "line 2 is indented with a tab; YAML indents with spaces only"),
        ("sensors:\n  silence_timeout: 10m\n   bad: x\n", "line 3 has a 'key: value' where none can be"),
        ("sensors:\n  silence_timeout: \"10m\n", "the file ends inside a quote or a bracket"),
    ])
    func mistakesAreSaidPlainly(_ text: String, _ said: String) {
        do {
            _ = try HubConfiguration.read(try ConfigNode.parse(text, file: "hubd.yaml"))
            Issue.record("taken: \(text)")
        } catch {
            #expect(error.description.contains(said), "\(error)")
            #expect(!error.description.contains("\\u{9}"))
        }
    }
}

/// `http.map_tiles`: OpenStreetMap's by default, another server, or off; a URL that can't be tiles is refused.
@Suite struct MapTilesSettingTests {
    func read(_ text: String) throws(ConfigurationError) -> HubConfiguration {
        try HubConfiguration.read(try ConfigNode.parse(text, file: "hubd.yaml", environment: [:]))
    }

    @Test func tilesByDefaultAnotherServerOrOff() throws {
        #expect(try read("").httpMapTiles == .openStreetMap)
        #expect(try read("http: {map_tiles: off}\n").httpMapTiles == nil)
        let own = try read(
            "http: {map_tiles: \"https://maps.example/t/{z}/{x}/{y}.png\", map_attribution: \"© Example, OSM\"}\n")
        #expect(own.httpMapTiles?.origin == "https://maps.example")
        #expect(own.httpMapTiles?.attribution == "© Example, OSM")
        #expect(try read("http: {map_attribution: \"OSM\"}\n").httpMapTiles?.attribution == "OSM")
        do {
            _ = try read("http:\n  map_tiles: https://{s}.tile.example/{z}/{x}.png\n")
            Issue.record("a template without {y} was taken")
        } catch {
            #expect(error.description.contains("map_tiles"), "\(error)")
            #expect(error.description.contains("a URL of tiles with {z}, {x} and {y}"), "\(error)")
        }
    }
}
