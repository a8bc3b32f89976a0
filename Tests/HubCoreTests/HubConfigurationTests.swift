import Foundation
import HubCore
import HubTestKit
import Testing

@Suite struct HubConfigurationTests {
    func load(_ yaml: String?, environment: [String: String] = [:]) async throws -> HubConfiguration {
        let directory = try TemporaryDirectory(prefix: "config")
        var environment = environment
        if let yaml {
            try yaml.write(toFile: directory.file("hubd.yaml"), atomically: true, encoding: .utf8)
            environment["HUB_CONFIG"] = directory.file("hubd.yaml")
        }
        return try await HubConfiguration.load(option: nil, environment: environment)
    }

    @Test func theDefaultFileIsTheDefaults() async throws {
        let defaults = try String(contentsOfFile: "conf/hubd.yaml", encoding: .utf8)
        #expect(try await load(defaults) == HubConfiguration())
        // Its commented settings, switched on, must be the defaults too: the file documents them.
        let uncommented = defaults.replacingOccurrences(
            of: #"(?m)^(\s+)# ([a-z_]+: .+)$"#, with: "$1$2", options: .regularExpression)
        #expect(uncommented.contains("\n  qos: 1\n"))
        var expected = HubConfiguration()
        expected.stateDirectory = StateDirectory.systemDefault
        #expect(try await load(uncommented) == expected)
    }

    @Test func everyKeyIsRead() async throws {
        let configuration = try await load(
            """
            state: {directory: /srv/hub}
            sensors: {topic_template: "home/{name}/status", qos: 0, silence_timeout: 15m, max_status_length: 32}
            hub: {availability_topic: home/hub}
            store: {flush_interval: 500ms}
            log: {level: DEBUG}
            """)
        #expect(configuration.stateDirectory == "/srv/hub")
        #expect(configuration.topicTemplate.pattern == "home/{name}/status")
        #expect(configuration.qos == 0)
        #expect(configuration.silenceTimeout == .seconds(900))
        #expect(configuration.maximumStatusLength == 32)
        #expect(configuration.availabilityTopic == "home/hub")
        #expect(configuration.flushInterval == .milliseconds(500))
        #expect(configuration.logLevel == "debug")
    }

    @Test func airKeysAreReadAndChecked() async throws {
        let configuration = try await load(
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
        #expect(try await load("air: {alert: {metric: pm10_24h}}").air.threshold == 45)
        await #expect(throws: ConfigurationError.self) { try await load("air: {alert: {metric: ozone}}") }
        await #expect(throws: ConfigurationError.self) { try await load("sds011: {interval: 0s}") }
        await #expect(throws: ConfigurationError.self) { try await load("sds011: {topic: 'a/#/{id}'}") }
    }

    @Test func theEnvironmentOverridesTheFile() async throws {
        let configuration = try await load(
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
        let error = await #expect(throws: ConfigurationError.self) { try await load(yaml) }
        #expect(error?.description.hasSuffix(message) == true, "\(String(describing: error))")
    }

    @Test func aMissingNamedFileIsAnError() async throws {
        let error = await #expect(throws: ConfigurationError.self) {
            try await HubConfiguration.load(option: "/nonexistent/hubd.yaml", environment: [:])
        }
        #expect(error == .unreadable(path: "/nonexistent/hubd.yaml", reason: "no such file"))
    }
}
