import Configuration
import Foundation
import SystemPackage

/// hubd's configuration: a YAML file (`conf/hubd.yaml` is the commented default), each key overridable by an
/// environment variable named after it (`sensors.silence_timeout` → `HUB_SENSORS_SILENCE_TIMEOUT`).
///
/// The broker settings are not here: they live in the defaults store, where `hubctl broker set` changes them and
/// hubd follows them live. One source of truth for each thing.
public struct HubConfiguration: Sendable, Hashable {
    /// Where the configuration is read from when no `--config` or `$HUB_CONFIG` names a file.
    public static let defaultPath = "/etc/sensorhub/hubd.yaml"

    /// `state.directory`: where the registry lives (`--state-dir` and `$HUB_STATE_DIR` come first).
    public var stateDirectory: String?
    /// `sensors.topic_template`: how a new sensor's topic follows from its name.
    public var topicTemplate: TopicTemplate = .default
    /// `sensors.qos`: the QoS of the hub's subscriptions (1: the broker queues statuses while the hub is away).
    public var qos: Int = 1
    /// `sensors.silence_timeout`: how long a sensor may stay silent before it counts as offline; `nil` is off.
    public var silenceTimeout: Duration?
    /// `sensors.max_status_length`: longer payloads are rejected (and counted), not stored.
    public var maximumStatusLength: Int = 256
    /// `hub.availability_topic`: where the hub publishes `online` / `offline` (retained).
    public var availabilityTopic: String = "sensorhub/availability"
    /// `store.flush_interval`: how often received statuses are written to the store, at most.
    public var flushInterval: Duration = .seconds(1)
    /// `log.level`: trace, debug, info, notice, warning, error or critical.
    public var logLevel: String = "info"
    /// `sds011.*`: the particulate sensor hubd drives itself; off unless `sds011.port` is set.
    public var sds011 = SDS011Settings()
    /// `air.*`: how particulate readings become a status and alerts.
    public var air = AirQualityPolicy()
    /// `history.retention`: how long readings and events are kept.
    public var historyRetention: Duration = .seconds(400 * 86_400)
    /// `http.listen`: where the API and dashboard listen.
    public var httpListen = HTTPListen.tcp(host: "127.0.0.1", port: 8080)
    /// `http.token` or the file `http.token_file` names: required for every write (and for any write at all when
    /// listening beyond loopback).
    public var httpToken: String?

    /// Where the HTTP server listens.
    public enum HTTPListen: Sendable, Hashable, CustomStringConvertible {
        case off
        case tcp(host: String, port: Int)
        case unix(path: String)

        /// `127.0.0.1:8080`, `[::1]:8080`, `0.0.0.0:8080`, `unix:/run/sensorhub/http.sock` or `off`.
        public init?(_ text: String) {
            if text == "off" || text == "none" {
                self = .off
            } else if text.hasPrefix("unix:") {
                let path = String(text.dropFirst(5))
                guard path.hasPrefix("/") else { return nil }
                self = .unix(path: path)
            } else {
                guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
                    (0...65_535).contains(port)
                else { return nil }
                var host = String(text[..<colon])
                if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
                guard !host.isEmpty else { return nil }
                self = .tcp(host: host, port: port)
            }
        }

        /// Only this machine can connect: loopback or a Unix socket.
        public var isLocal: Bool {
            switch self {
            case .off, .unix: return true
            case .tcp(let host, _): return host == "127.0.0.1" || host == "::1" || host == "localhost"
            }
        }

        public var description: String {
            switch self {
            case .off: "off"
            case .tcp(let host, let port): host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
            case .unix(let path): "unix:\(path)"
            }
        }
    }

    /// The `sds011` section.
    public struct SDS011Settings: Sendable, Hashable {
        /// The serial port; `nil`: no SDS011.
        public var port: String?
        /// Its name in the registry.
        public var name = "air quality"
        /// Where readings are published; `{id}` is the sensor's id.
        public var topic = "sensorhub/sds011/{id}/state"
        /// A reading this often.
        public var interval: Duration = .seconds(60)
        /// Before each reading the sensor works this long (it sleeps between readings when the interval allows).
        public var warmUp: Duration = .seconds(30)
        /// Readings averaged into one, a second apart.
        public var samples = 3

        public init() {}
    }

    public init() {}

    /// The file a run reads: `--config`, else `$HUB_CONFIG`, else `/etc/sensorhub/hubd.yaml` if it exists.
    public static func path(option: String?, environment: [String: String]) -> (path: String, required: Bool)? {
        if let option { return (option, true) }
        if let path = environment["HUB_CONFIG"], !path.isEmpty { return (path, true) }
        if FileManager.default.fileExists(atPath: defaultPath) { return (defaultPath, false) }
        return nil
    }

    /// Reads and checks the configuration; an error names the file, the key and what is wrong with it.
    public static func load(
        option: String?,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) async throws(ConfigurationError) -> HubConfiguration {
        var providers: [any ConfigProvider] = [
            EnvironmentVariablesProvider(environmentVariables: environment).prefixKeys(with: ["hub"])
        ]
        let file = path(option: option, environment: environment)
        if let file {
            guard FileManager.default.isReadableFile(atPath: file.path) else {
                let exists = FileManager.default.fileExists(atPath: file.path)
                throw .unreadable(path: file.path, reason: exists ? "permission denied" : "no such file")
            }
            // A file of nothing but comments (the default one, with every setting at its default) is no error.
            let text = (try? String(contentsOfFile: file.path, encoding: .utf8)) ?? ""
            let content = text.split(whereSeparator: \.isNewline).contains { line in
                let trimmed = line.trimmingCharacters(in: .whitespaces)
                return !trimmed.isEmpty && !trimmed.hasPrefix("#") && trimmed != "---"
            }
            if content {
                do {
                    providers.append(try await FileProvider<YAMLSnapshot>(filePath: FilePath(file.path)))
                } catch {
                    throw .invalidFile(path: file.path, reason: "\(error)")
                }
            }
        }
        return try read(ConfigReader(providers: providers), file: file?.path)
    }

    /// Reads every key from `config`, checking each.
    static func read(_ config: ConfigReader, file: String?) throws(ConfigurationError) -> HubConfiguration {
        /// The value of `key` made by `convert`, or `nil` when the key is not set.
        func value<T>(_ key: String, _ convert: (String) throws -> T) throws(ConfigurationError) -> T? {
            guard let text = config.string(forKey: ConfigKey(key))?.trimmingCharacters(in: .whitespaces) else {
                return nil
            }
            do {
                return try convert(text)
            } catch {
                let reason = (error as? Expected)?.reason ?? "\(error)"
                throw .invalidValue(file: file, key: key, value: text, reason: reason)
            }
        }
        func number(_ text: String, in range: ClosedRange<Int>, _ reason: String) throws -> Int {
            guard let number = Int(text), range.contains(number) else { throw Expected(reason: reason) }
            return number
        }
        let levels = ["trace", "debug", "info", "notice", "warning", "error", "critical"]

        var result = HubConfiguration()
        if let directory = try value("state.directory", { $0 }), !directory.isEmpty {
            result.stateDirectory = directory
        }
        if let template = try value("sensors.topic_template", { try TopicTemplate($0) }) {
            result.topicTemplate = template
        }
        if let qos = try value("sensors.qos", { try number($0, in: 0...2, "the QoS is 0, 1 or 2") }) {
            result.qos = qos
        }
        if let timeout = try value(
            "sensors.silence_timeout",
            { text -> Duration? in
                if ["off", "never", "none", "false", "no"].contains(text.lowercased()) { return nil }
                guard let duration = DurationText.parse(text) else {
                    throw Expected(reason: "write a duration like 90s, 10m, 2h or 1d, or off")
                }
                return duration
            })
        {
            result.silenceTimeout = timeout
        }
        if let length = try value(
            "sensors.max_status_length",
            {
                try number($0, in: 1...65_536, "a number of characters from 1 to 65536")
            })
        {
            result.maximumStatusLength = length
        }
        if let topic = try value("hub.availability_topic", { try SensorRules.topic($0) }) {
            result.availabilityTopic = topic
        }
        if let interval = try value(
            "store.flush_interval",
            { text -> Duration in
                guard let duration = DurationText.parse(text), duration <= .seconds(60) else {
                    throw Expected(reason: "a duration up to 60s, like 1s or 500ms")
                }
                return duration
            })
        {
            result.flushInterval = interval
        }
        if let level = try value(
            "log.level",
            { text -> String in
                guard levels.contains(text.lowercased()) else {
                    throw Expected(reason: "one of \(levels.joined(separator: ", "))")
                }
                return text.lowercased()
            })
        {
            result.logLevel = level
        }
        try readAir({ key, convert throws(ConfigurationError) in try value(key, convert) }, into: &result)
        return result
    }

    /// The `sds011`, `air` and `history` sections.
    static func readAir(
        _ value: (String, (String) throws -> Any) throws(ConfigurationError) -> Any?,
        into result: inout HubConfiguration
    ) throws(ConfigurationError) {
        func duration(_ text: String, _ range: ClosedRange<Duration>) throws -> Duration {
            guard let duration = DurationText.parse(text, allowingZero: range.lowerBound == .zero),
                range.contains(duration)
            else {
                throw Expected(
                    reason:
                        "a duration from \(DurationText.format(range.lowerBound)) to \(DurationText.format(range.upperBound)), like 30s, 10m or 1h"
                )
            }
            return duration
        }
        func number(_ text: String, _ range: ClosedRange<Double>) throws -> Double {
            guard let number = Double(text.replacingOccurrences(of: "%", with: "")), range.contains(number) else {
                throw Expected(reason: "a number from \(range.lowerBound) to \(range.upperBound)")
            }
            return number
        }
        if let port = try value("sds011.port", { $0 }) as? String, !port.isEmpty { result.sds011.port = port }
        if let name = try value("sds011.name", { try SensorRules.name($0) }) as? String { result.sds011.name = name }
        if let topic = try value(
            "sds011.topic",
            { text -> String in
                _ = try SensorRules.topic(text.replacingOccurrences(of: "{id}", with: "A160"))
                return text
            }) as? String
        {
            result.sds011.topic = topic
        }
        if let interval = try value("sds011.interval", { try duration($0, .seconds(1)...(.seconds(86_400))) })
            as? Duration
        {
            result.sds011.interval = interval
        }
        if let warmUp = try value("sds011.warm_up", { try duration($0, .zero...(.seconds(600))) }) as? Duration {
            result.sds011.warmUp = warmUp
        }
        if let samples = try value("sds011.samples", { Int(try number($0, 1...60)) }) as? Int {
            result.sds011.samples = samples
        }
        if let scale = try value(
            "air.scale",
            { text -> AirQualityPolicy.Scale in
                guard let scale = AirQualityPolicy.Scale(rawValue: text.lowercased()) else {
                    throw Expected(reason: "aqi (the EPA category) or light (green, yellow, red)")
                }
                return scale
            }) as? AirQualityPolicy.Scale
        {
            result.air.scale = scale
        }
        if let metric = try value(
            "air.alert.metric",
            { text -> AirQualityPolicy.Metric in
                guard let metric = AirQualityPolicy.Metric(text) else {
                    throw Expected(reason: "pm25_24h, pm25_1h, pm25, pm10_24h, pm10_1h or pm10")
                }
                return metric
            }) as? AirQualityPolicy.Metric
        {
            result.air.metric = metric
            // A PM10 alert without its own threshold watches PM10's WHO 24-hour guideline.
            if metric.pollutant == .pm10 { result.air.threshold = WHOGuideline.guideline(.pm10, .day) }
        }
        if let threshold = try value("air.alert.threshold", { try number($0, 0...10_000) }) as? Double {
            result.air.threshold = threshold
        }
        if let hysteresis = try value("air.alert.hysteresis", { try number($0, 0...90) / 100 }) as? Double {
            result.air.hysteresis = hysteresis
        }
        if let interval = try value("air.alert.min_interval", { try duration($0, .zero...(.seconds(86_400))) })
            as? Duration
        {
            result.air.minimumInterval = interval
        }
        if let listen = try value(
            "http.listen",
            { text -> HTTPListen in
                guard let listen = HTTPListen(text) else {
                    throw Expected(reason: "host:port (127.0.0.1:8080, 0.0.0.0:8080, [::1]:8080), unix:/path, or off")
                }
                return listen
            }) as? HTTPListen
        {
            result.httpListen = listen
        }
        if let token = try value("http.token", { $0 }) as? String, !token.isEmpty { result.httpToken = token }
        if let token = try value(
            "http.token_file",
            { path -> String in
                guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
                    throw Expected(reason: "cannot read the file")
                }
                return text.trimmingCharacters(in: .whitespacesAndNewlines)
            }) as? String
        {
            result.httpToken = token
        }
        if let token = result.httpToken, token.count < 16 {
            throw .invalidValue(file: nil, key: "http.token", value: "…", reason: "a token of at least 16 characters")
        }
        if !result.httpListen.isLocal && result.httpToken == nil {
            throw .invalidValue(
                file: nil, key: "http.listen", value: result.httpListen.description,
                reason: "listening beyond this machine needs http.token or http.token_file (writes require it)")
        }
        if let retention = try value(
            "history.retention", { try duration($0, .seconds(3600)...(.seconds(3650 * 86_400))) })
            as? Duration
        {
            result.historyRetention = retention
        }
    }
}

/// What a valid value looks like, for the message.
private struct Expected: Error { var reason: String }

/// Why the configuration can't be used; the message names the file and the key.
public enum ConfigurationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file named by `--config` or `$HUB_CONFIG` can't be read.
    case unreadable(path: String, reason: String)
    /// The file is not valid YAML.
    case invalidFile(path: String, reason: String)
    /// A key has a value that can't work.
    case invalidValue(file: String?, key: String, value: String, reason: String)

    public var description: String {
        switch self {
        case .unreadable(let path, let reason):
            return "cannot read the configuration \(path): \(reason)"
        case .invalidFile(let path, let reason):
            return "the configuration \(path) is not valid YAML: \(reason)"
        case .invalidValue(let file, let key, let value, let reason):
            let environment = "HUB_" + key.uppercased().replacingOccurrences(of: ".", with: "_")
            let source = file.map { "\($0): " } ?? ""
            return "\(source)\(key) (or $\(environment)) is '\(value)': \(reason)"
        }
    }
}
