import Foundation

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
    /// `state.low_wear`: the journal and the registry's and the alert book's logs kept in memory (systemd's
    /// `RuntimeDirectory`): an SD card written a tenth as much, and a power cut loses what was only in memory
    /// (docs/raspberry-pi.md).
    public var lowWear = false
    /// `sensors.topic_template`: how a new sensor's topic follows from its name.
    public var topicTemplate: TopicTemplate = .default
    /// `sensors.qos`: the QoS of the hub's subscriptions (1: the broker queues statuses while the hub is away).
    public var qos: Int = 1
    /// `sensors.subscribe`: one subscription per sensor topic (`each`), the few filters that cover them all
    /// (`covering`, `TopicCover`), or `covering` from `SubscribeMode.coveringFrom` sensors on (`auto`).
    public var subscribe: SubscribeMode = .auto
    /// `sensors.acknowledge_when_journaled`: hold each QoS 1 status's acknowledgement to the broker until the journal
    /// has it (and its packet id, so that the broker sending it again after a crash is known), so that a crash loses
    /// none. On by default; `false` lets libmosquitto acknowledge each message as it arrives (faster in a burst, and
    /// a SIGKILL can lose the few acknowledged before the journal had them: see docs/hubd.md).
    public var acknowledgeWhenJournaled = true
    /// `sensors.sync_delay`: how long a held QoS 1 status may wait, written to the journal, for the `fsync` that
    /// makes it durable and lets its acknowledgement go to the broker: one `fsync` covers every burst that came
    /// meanwhile. Notifications do not wait for it (they go out once the status is written). Zero: an `fsync` for
    /// every burst. 10 s: each `fsync` writes the journal's last page again, and the registry's writer takes the
    /// durable records a batch at a time; against 5 s, a home's 4 statuses a second reached the disk 50 MB a day less
    /// (`bench/home.sh`, `home-2026-12-07m.md` and `…-sync10.md`).
    public var syncDelay: Duration = .seconds(10)
    /// The longest `syncDelay` takes: its acknowledgements hold back every packet of the hub's connection, and a
    /// PINGREQ must still go out well inside the keepalive.
    public static let longestSyncDelay = Duration.seconds(10)
    /// `sensors.silence_timeout`: how long a sensor may stay silent before it counts as offline; `nil` is off.
    public var silenceTimeout: Duration?
    /// `sensors.max_status_length`: longer payloads are rejected (and counted), not stored.
    public var maximumStatusLength: Int = 256
    /// `hub.availability_topic`: where the hub publishes `online` / `offline` (retained).
    public var availabilityTopic: String = "sensorhub/availability"
    /// `store.flush_interval`: how often received statuses are written to the store, at most. 5 minutes, as long as
    /// the status log's `fsync` may wait (`StoreWriter.defaultSyncInterval`), so each write is flushed: written every
    /// 10 s and flushed every 30 s, the log took 31 MB of a home's pages a day, 19 MB at 30 s (`bench/home.sh`).
    /// `hubctl` asks a running hubd to write them before it reads (`WriteRequest`); hubd's readers take them live.
    public var flushInterval: Duration = .seconds(300)
    /// The longest `flushInterval` takes: the journal holds the statuses until they are written (and replays them
    /// after a crash), as it holds the history's records for `history.commit_interval`, an hour by default.
    public static let longestFlushInterval = Duration.seconds(3600)
    /// `log.level`: trace, debug, info, notice, warning, error or critical.
    public var logLevel: String = "info"
    /// `sds011.*`: the particulate sensor hubd drives itself; off unless `sds011.port` is set.
    public var sds011 = SDS011Settings()
    /// `air.*`: how particulate readings become a status and alerts.
    public var air = AirQualityPolicy()
    /// `thresholds`: limits on sensors' values and attributes, each alerting once per crossing.
    public var thresholds: [ThresholdRule] = []
    /// `sessions`: which sensors are mobile, and how their readings group into recording sessions.
    public var sessions: [SessionRule] = []
    /// `discovery`: the devices hubd adds by itself (none by default).
    public var discovery = DiscoverySettings()
    /// `homeassistant`: MQTT discovery configs and uniform state topics for Home Assistant (off by default).
    public var homeAssistant = HomeAssistantSettings()
    /// `uv`: the place (and ozone column) the UV index is computed for; `hubctl uv` reads it.
    public var uv = UVSettings()
    /// `feeds`: regional air-quality feeds hubd polls and publishes as virtual sensors.
    public var feeds: [FeedSettings] = []
    /// `history.retention`: how long readings and events are kept.
    public var historyRetention: Duration = .seconds(400 * 86_400)
    /// `history.commit_interval`: how often readings and events are committed to history.sqlite, at most.
    public var historyCommitInterval: Duration = .seconds(3600)
    /// `route.roads`: a GeoJSON file of roads (LineStrings) that `/api/v1/route` follows, read once at start.
    public var routeRoads: String?
    /// `remote`: the PostgreSQL database readings, sessions and events are sent to; `nil`: none.
    public var remote: RemoteSettings?
    /// `store.url`: the PostgreSQL database the registry lives in, which several agents can share; `nil`: the state
    /// directory's `defaults.json`.
    public var store: DatabaseSettings?
    /// `cluster`: this agent shares the sensors and the store with others of its group; `nil`: it is the only one.
    public var cluster: ClusterSettings?

    /// The hub name the rows in the store's database carry (the history, the events, a cluster's outbox): a
    /// cluster's group, so that every agent writes and reads the same rows; otherwise `remote.hub`, or this host's
    /// name.
    public var storeHub: String { cluster?.group ?? remote?.hub ?? RemoteSettings.hostName }

    /// With `store:`, how the history reaches the store's database: through a durable queue, as `remote:` sends it
    /// (streamed, no PostGIS installed: that is `remote:`'s to ask for). `remote:` itself when it names the same
    /// database (its rows then carry `storeHub`); `nil` without `store:`, when the history is `history.sqlite`.
    public var storeHistory: RemoteSettings? {
        guard let store else { return nil }
        if var remote, remote.server == store {
            remote.hub = storeHub
            return remote
        }
        var settings = RemoteSettings(server: store, hub: storeHub)
        settings.postgis = false
        settings.maximumBackOff = .seconds(30)
        return settings
    }

    /// `remote:`, unless it is the store's database, which `storeHistory` writes already.
    public var separateRemote: RemoteSettings? {
        guard let remote, remote.server != store else { return nil }
        return remote
    }
    /// `http.listen`: where the API and dashboard listen.
    public var httpListen = HTTPListen.tcp(host: "127.0.0.1", port: 8080)
    /// `http.token` or the file `http.token_file` names: an admin API token.
    public var httpToken: String?
    /// `http.public`: read routes open to anyone.
    public var httpPublic: [String] = []
    /// `http.hosts`: names the hub answers to besides addresses, localhost and this machine's.
    public var httpHosts: [String] = []
    /// `http.cors_origins`.
    public var httpCORSOrigins: [String] = []
    /// `http.trusted_proxies`.
    public var httpTrustedProxies: [String] = []
    /// `http.tls_certificate` and `http.tls_key`: hubd serves HTTPS itself.
    public var httpTLS: TLSFiles?
    /// `http.map_tiles` and `http.map_attribution`: the tiles under the maps; `nil` (`off`) draws them on a plain
    /// ground.
    public var httpMapTiles: MapTiles? = .openStreetMap

    /// The certificate chain and the private key hubd serves HTTPS with (PEM files).
    public struct TLSFiles: Sendable, Hashable {
        public var certificate: String
        public var key: String
    }

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

    /// The whole file (the `notifiers` section too), with the environment's overrides: what `read(_:)` and the
    /// notifiers' reader take. No file: only the environment.
    public static func file(
        option: String?, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(ConfigurationError) -> ConfigNode {
        guard let file = path(option: option, environment: environment) else {
            return try ConfigNode.parse("", environment: environment)
        }
        return try ConfigNode.load(path: file.path, environment: environment)
    }

    /// Reads and checks the configuration; an error names the file, the key and what is wrong with it.
    public static func load(
        option: String?, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(ConfigurationError) -> HubConfiguration {
        try read(file(option: option, environment: environment))
    }

    /// Reads every key under `root`, checking each; an unknown key or a section of the wrong shape is an error.
    public static func read(_ root: ConfigNode) throws(ConfigurationError) -> HubConfiguration {
        try root.allow(rootKeys)
        var result = HubConfiguration()
        let state = root["state"]
        try state.allow(stateKeys)
        if let directory = try state["directory"].string(), !directory.isEmpty { result.stateDirectory = directory }
        if let lowWear = try state["low_wear"].bool() { result.lowWear = lowWear }

        let sensors = root["sensors"]
        try sensors.allow(sensorsKeys)
        if let mode = try sensors["subscribe"].value("auto, each or covering", { SubscribeMode(rawValue: $0) }) {
            result.subscribe = mode
        }
        if let hold = try sensors["acknowledge_when_journaled"].bool() { result.acknowledgeWhenJournaled = hold }
        if let delay = try sensors["sync_delay"].value(
            "a duration up to \(longestSyncDelay.components.seconds)s, like 1s or 250ms, or 0",
            { DurationText.parse($0, allowingZero: true).flatMap { $0 <= longestSyncDelay ? $0 : nil } })
        {
            result.syncDelay = delay
        }
        if let template = try sensors["topic_template"].value("a topic template", { try TopicTemplate($0) }) {
            result.topicTemplate = template
        }
        if let qos = try sensors["qos"].value(
            "the QoS is 0, 1 or 2", { Int($0).flatMap { (0...2).contains($0) ? $0 : nil } })
        {
            result.qos = qos
        }
        if let timeout = try sensors["silence_timeout"].value(
            "write a duration like 90s, 10m, 2h or 1d, or off",
            { text -> Duration?? in
                if ["off", "never", "none", "false", "no"].contains(text.lowercased()) { return .some(nil) }
                return DurationText.parse(text).map { .some($0) }
            })
        {
            result.silenceTimeout = timeout
        }
        if let length = try sensors["max_status_length"].value(
            "a number of characters from 1 to 65536", { Int($0).flatMap { (1...65_536).contains($0) ? $0 : nil } })
        {
            result.maximumStatusLength = length
        }
        let hub = root["hub"]
        try hub.allow(hubKeys)
        if let topic = try hub["availability_topic"].value("a topic", { try SensorRules.topic($0) }) {
            result.availabilityTopic = topic
        }
        let store = root["store"]
        if case .scalar = store.value {
            // `store: postgres://…`, the short form of `store: {url: …}`.
            result.store = try DatabaseSettings.read(store.mapping(as: "url"), section: "store")
        } else {
            try store.allow(storeKeys)
            // A password or TLS setting without a URL is a mistake to name, not a file registry.
            let databaseKeys = DatabaseSettings.keys.map(\.name) + ["password_file"]
            if databaseKeys.contains(where: { store[$0].isSet }) {
                result.store = try DatabaseSettings.read(store, section: "store")
            }
        }
        if let interval = try store["flush_interval"].value(
            "a duration up to 1h, like 5m or 30s",
            { DurationText.parse($0).flatMap { $0 <= longestFlushInterval ? $0 : nil } })
        {
            result.flushInterval = interval
        }
        let log = root["log"]
        try log.allow(logKeys)
        let levels = ["trace", "debug", "info", "notice", "warning", "error", "critical"]
        if let level = try log["level"].value(
            "one of \(levels.joined(separator: ", "))", { levels.contains($0.lowercased()) ? $0.lowercased() : nil })
        {
            result.logLevel = level
        }
        try readAir(root, into: &result)
        result.thresholds = try ThresholdRule.read(root["thresholds"])
        result.sessions = try SessionRule.read(root["sessions"])
        result.discovery = try DiscoverySettings.read(root["discovery"])
        result.homeAssistant = try HomeAssistantSettings.read(root["homeassistant"])
        result.uv = try UVSettings.read(root["uv"])
        result.feeds = try FeedSettings.readAll(root["feeds"])
        result.remote = try RemoteSettings.read(root["remote"])
        result.cluster = try ClusterSettings.read(root["cluster"], hasStore: result.store != nil)
        try readHTTP(root["http"], into: &result)
        let route = root["route"]
        try route.allow(routeKeys)
        result.routeRoads = try route["roads"].filePath()
        return result
    }

    /// The `sds011`, `air` and `history` sections.
    static func readAir(_ root: ConfigNode, into result: inout HubConfiguration) throws(ConfigurationError) {
        let sds011 = root["sds011"]
        try sds011.allow(sds011Keys)
        if let port = try sds011["port"].string(), !port.isEmpty { result.sds011.port = port }
        if let name = try sds011["name"].value("a sensor name", { try SensorRules.name($0) }) {
            result.sds011.name = name
        }
        if let topic = try sds011["topic"].value(
            "a topic",
            { text -> String in
                _ = try SensorRules.topic(text.replacingOccurrences(of: "{id}", with: "A160"))
                return text
            })
        {
            result.sds011.topic = topic
        }
        if let interval = try sds011["interval"].duration(in: .seconds(1)...(.seconds(86_400))) {
            result.sds011.interval = interval
        }
        if let warmUp = try sds011["warm_up"].duration(in: .zero...(.seconds(600))) { result.sds011.warmUp = warmUp }
        if let samples = try sds011["samples"].integer(in: 1...60) { result.sds011.samples = samples }

        let air = root["air"]
        try air.allow(airKeys)
        if let scale = try air["scale"].value(
            "aqi (the EPA category) or light (green, yellow, red)",
            { AirQualityPolicy.Scale(rawValue: $0.lowercased()) })
        {
            result.air.scale = scale
        }
        let alert = air["alert"]
        try alert.allow(airAlertKeys)
        if let metric = try alert["metric"].value(
            "pm25_24h, pm25_1h, pm25, pm10_24h, pm10_1h or pm10", { AirQualityPolicy.Metric($0) })
        {
            result.air.metric = metric
            // A PM10 alert without its own threshold watches PM10's WHO 24-hour guideline.
            if metric.pollutant == .pm10 { result.air.threshold = WHOGuideline.guideline(.pm10, .day) }
        }
        if let threshold = try alert["threshold"].number(in: 0...10_000) { result.air.threshold = threshold }
        if let hysteresis = try alert["hysteresis"].value(
            "a number from 0 to 90 (percent)",
            { Double($0.replacingOccurrences(of: "%", with: "")).flatMap { (0...90).contains($0) ? $0 / 100 : nil } })
        {
            result.air.hysteresis = hysteresis
        }
        if let interval = try alert["min_interval"].duration(in: .zero...(.seconds(86_400))) {
            result.air.minimumInterval = interval
        }
        let history = root["history"]
        try history.allow(historyKeys)
        if let retention = try history["retention"].duration(in: .seconds(3600)...(.seconds(3650 * 86_400))) {
            result.historyRetention = retention
        }
        if let interval = try history["commit_interval"].duration(in: .seconds(1)...(.seconds(3600))) {
            result.historyCommitInterval = interval
        }
    }
}
