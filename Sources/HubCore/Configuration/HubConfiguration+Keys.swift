// The keys of hubd.yaml's sections that HubCore reads: each reader checks its part of the file against its list
// here (`ConfigNode.allow`), and the configuration reference (`hubd --config-reference`, docs/configuration.md) is
// made from the same lists.

extension HubConfiguration {
    static let rootKeys: [ConfigKey] = [
        ConfigKey("state", "mapping", "Where hubd keeps its state."),
        ConfigKey("sensors", "mapping", "How sensors' statuses are received."),
        ConfigKey("hub", "mapping", "The hub's own topic."),
        ConfigKey("store", "mapping or URL", "Where the registry is written: the state directory, or PostgreSQL."),
        ConfigKey("log", "mapping", "How much hubd logs."),
        ConfigKey("sds011", "mapping", "The SDS011 particulate sensor hubd drives on a serial port."),
        ConfigKey("air", "mapping", "How particulate readings become a status and an alert."),
        ConfigKey("thresholds", "list", "Limits on sensors' values and attributes."),
        ConfigKey("history", "mapping", "How long readings and events are kept."),
        ConfigKey("http", "mapping", "The HTTP API, the dashboard and the metrics."),
        ConfigKey("discovery", "mapping", "The devices hubd adds by itself."),
        ConfigKey("homeassistant", "mapping", "Home Assistant's MQTT discovery."),
        ConfigKey("uv", "mapping", "The place the UV index is computed for."),
        ConfigKey("feeds", "mapping or list", "Regional air-quality feeds hubd polls."),
        ConfigKey("sessions", "list", "Mobile sensors and their recording sessions."),
        ConfigKey("route", "mapping", "The roads the least-polluted route follows."),
        ConfigKey("remote", "mapping", "A PostgreSQL database that receives readings, sessions and events."),
        ConfigKey("cluster", "mapping", "This agent as one of several sharing the sensors."),
        ConfigKey("notifiers", "mapping", "Where events go (backends) and which ones (rules)."),
        ConfigKey("alerts", "mapping", "What alerting rules share: quiet hours, sensors' labels and parents."),
    ]

    static let stateKeys: [ConfigKey] = [
        ConfigKey(
            "directory", "directory path",
            "Where the registry, the journal, the outbox and the history live; `--state-dir` and `$HUB_STATE_DIR` "
                + "come first, and `/var/lib/sensorhub` is used when none says."),
        ConfigKey(
            "low_wear", "true or false", default: "false",
            "For an SD card: the journal and the registry's and the alert book's logs are kept in memory (systemd's "
                + "RuntimeDirectory, or $RUNTIME_DIRECTORY), folded onto the disk as they grow "
                + "(docs/raspberry-pi.md). A crash, a restart or a clean stop loses nothing; a power cut loses what "
                + "was only in memory: statuses since the registry's last fold, the history's rows since its last "
                + "commit (`history.commit_interval`), alert changes since the book's last fold (never an "
                + "acknowledgement or a silence: those are written at once)."),
    ]

    static let sensorsKeys: [ConfigKey] = [
        ConfigKey(
            "topic_template", "template with {name}", default: "\"{name}\"",
            "How a new sensor's topic follows from its name (`hubctl sensors add`); the original firmware publishes "
                + "to a topic equal to the name."),
        ConfigKey(
            "qos", "integer 0–2", default: "1", restart: true,
            "The QoS of the hub's subscriptions; 1 lets the broker keep statuses for the hub while it restarts."),
        ConfigKey(
            "silence_timeout", "duration or off", default: "off",
            "How long a sensor may stay silent before it counts as offline; about twice your firmware's reporting "
                + "interval. `hubctl sensors add --silence-timeout` sets one sensor's."),
        ConfigKey(
            "max_status_length", "integer 1–65536", default: "256",
            "Statuses longer than this many characters are refused (logged and counted), not stored."),
        ConfigKey(
            "acknowledge_when_journaled", "true or false", default: "true", restart: true,
            "A QoS 1 status is acknowledged to the broker only once the journal has it, so a crash loses none; "
                + "false lets libmosquitto acknowledge on arrival."),
        ConfigKey(
            "sync_delay", "duration up to \(longestSyncDelay.components.seconds)s", default: "10s",
            "How long a QoS 1 status may wait, written to the journal, for the fsync that makes it durable and "
                + "acknowledges it to the broker (64 statuses at most): one fsync covers what arrives meanwhile, so "
                + "the disk (an SD card) is written less. Notifications never wait for it; a power cut can take what "
                + "was not synced, which the broker then sends again. 0: an fsync for every burst."),
        ConfigKey(
            "subscribe", "one of: auto, each, covering", default: "auto", restart: true,
            "One subscription per sensor topic (each), the fewest filters covering them all (covering), or "
                + "covering from \(SubscribeMode.coveringFrom) sensors on (auto)."),
    ]

    static let hubKeys: [ConfigKey] = [
        ConfigKey(
            "availability_topic", "topic", default: "sensorhub/availability",
            "Where hubd publishes `online` while it runs and `offline` when it stops or dies (its last will), "
                + "retained.")
    ]

    static let storeKeys: [ConfigKey] =
        [
            ConfigKey(
                "flush_interval", "duration up to 1h", default: "5m",
                "How often received statuses are written to the registry's files, at most; every status is in the "
                    + "journal first, so a crash loses none. The API and the dashboard show the live statuses, and "
                    + "`hubctl` asks a running hubd to write them before it reads; shorter is more writes to the "
                    + "disk.")
        ] + DatabaseSettings.keys

    static let logKeys: [ConfigKey] = [
        ConfigKey(
            "level", "one of: trace, debug, info, notice, warning, error, critical", default: "info",
            "How much hubd logs; `--log-level` overrides it.")
    ]

    static let sds011Keys: [ConfigKey] = [
        ConfigKey(
            "port", "serial device path",
            "The SDS011's serial port (`/dev/ttyUSB0`, or a stable name under `/dev/serial/by-id/`); no SDS011 "
                + "without it."),
        ConfigKey(
            "name", "sensor name", default: "air quality", "The particulate sensor's name in the registry."),
        ConfigKey(
            "topic", "topic with {id}", default: "\"sensorhub/sds011/{id}/state\"",
            "Where its readings are published, retained; `{id}` is the sensor's id."),
        ConfigKey(
            "interval", "duration 1s–1d", default: "60s",
            "A reading this often; with room to spare the sensor sleeps between readings."),
        ConfigKey(
            "warm_up", "duration 0s–10m", default: "30s",
            "How long the sensor works before each reading when it sleeps between them."),
        ConfigKey(
            "samples", "integer 1–60", default: "3",
            "Queries a second apart averaged into one reading."),
    ]

    static let airKeys: [ConfigKey] = [
        ConfigKey(
            "scale", "one of: aqi, light", default: "aqi",
            "What a particulate sensor's status shows: the US EPA category (aqi) or the original monitor's green, "
                + "yellow and red (light)."),
        ConfigKey("alert", "mapping", "The air-quality alert (`air.alert`)."),
    ]

    static let airAlertKeys: [ConfigKey] = [
        ConfigKey(
            "metric", "one of: pm25_24h, pm25_1h, pm25, pm10_24h, pm10_1h, pm10", default: "pm25_24h",
            "What is compared with the threshold: a 24-hour or 1-hour mean, or each reading."),
        ConfigKey(
            "threshold", "number 0–10000 (µg/m³)", default: "15",
            "The alert's line; without it, WHO's 2021 24-hour guideline (15 for PM2.5, 45 for PM10)."),
        ConfigKey(
            "hysteresis", "number 0–90 (percent)", default: "10",
            "The alert clears only below the threshold less this many percent, so a value at the line can't flap."),
        ConfigKey("min_interval", "duration 0s–1d", default: "20m", "At most one alert in this long."),
    ]

    static let historyKeys: [ConfigKey] = [
        ConfigKey(
            "retention", "duration 1h–3650d", default: "400d",
            "How long readings and events are kept (`hubctl history`, `hubctl events`)."),
        ConfigKey(
            "commit_interval", "duration 1s–1h", default: "1h", restart: true,
            "How often what arrived is written to history.sqlite, at most (or once 10,000 rows wait). SQLite "
                + "writes each index page a commit touches whole, so the fewer the commits, the less an SD card is "
                + "written (docs/performance.md, the write budget). Readings and events wait in the journal until "
                + "written, so a hubd that dies loses none; the API and the dashboard read them beside the file's "
                + "rows, and `hubctl history` asks a running hubd to write them first."),
    ]

    static let httpKeys: [ConfigKey] = [
        ConfigKey(
            "listen", "host:port, unix:/path or off", default: "127.0.0.1:8080",
            "Where the JSON API, the dashboard, /healthz and /metrics listen. Every request needs a login or a token "
                + "(docs/security.md); beyond loopback, use tls_certificate or a reverse proxy with HTTPS."),
        ConfigKey(
            "token", "text of 16 characters or more", secret: true,
            "An admin API token kept in this file (`Authorization: Bearer …`), as before accounts existed; "
                + "`token_file` names a file holding it. `hubctl tokens add` makes tokens with a scope, kept hashed."),
        ConfigKey(
            "public", "list of paths",
            "Reads opened to anyone without a login, for what really wants them open: `[/metrics]` for a "
                + "Prometheus on the LAN. Only GET routes that read (never a write); each is named in the log at start."
        ),
        ConfigKey(
            "hosts", "list of host names",
            "Names the hub answers to besides its IP addresses, localhost, this machine's name and "
                + "alerts.public_url's host (`[hub.example.com]`); a request for any other name is refused (DNS "
                + "rebinding)."),
        ConfigKey(
            "cors_origins", "list of origins",
            "Other sites whose pages may call the API with a token (`[https://grafana.example.com]`); none by default."),
        ConfigKey(
            "trusted_proxies", "list of IP addresses",
            "Reverse proxies whose X-Forwarded-For (the client's address: the login throttle, the logins list) and "
                + "X-Forwarded-Proto (https: Secure cookies) are believed."),
        ConfigKey(
            "tls_certificate", "file path",
            "Serve HTTPS: the certificate chain (PEM), read again on SIGHUP (a renewed certificate needs no restart)."),
        ConfigKey("tls_key", "file path", "The certificate's private key (PEM), with tls_certificate."),
        ConfigKey(
            "map_tiles", "URL with {z}, {x} and {y}, or off", default: "https://tile.openstreetmap.org/{z}/{x}/{y}.png",
            "The map tiles under sessions' tracks and routes, fetched by the browser (not by hubd) from this server; "
                + "without them, or off the network, the maps are drawn on a plain ground."),
        ConfigKey(
            "map_attribution", "text", default: "\"© OpenStreetMap contributors\"",
            "What the maps credit for their tiles, as the tile server's licence asks."),
    ]

    static let routeKeys: [ConfigKey] = [
        ConfigKey(
            "roads", "file path",
            "A GeoJSON file of roads (LineStrings) the least-polluted route follows; without it routes go across "
                + "the grid. Read at start.")
    ]

    /// The parts of the reference HubCore reads, in the order of the file's sections.
    public static var referenceSections: [ConfigSection] {
        [
            ConfigSection(
                "(top level)", "The sections of hubd.yaml; an unknown one is refused.", more: "hubd.md",
                keys: rootKeys),
            ConfigSection("state", "Where hubd keeps its state.", restart: true, keys: stateKeys),
            ConfigSection(
                "sensors", "How sensors' statuses are received and when a sensor counts as offline.",
                more: "registry.md", keys: sensorsKeys),
            ConfigSection("hub", "The hub's own availability.", restart: true, keys: hubKeys),
            ConfigSection(
                "store",
                "Where the registry is written: `defaults.json` in the state directory, or, with `url`, a PostgreSQL "
                    + "database several agents share (`store: postgres://…` is short for `store: {url: …}`).",
                more: "cluster.md", restart: true, keys: storeKeys),
            ConfigSection("log", "How much hubd logs.", keys: logKeys),
            ConfigSection(
                "sds011", "The SDS011 particulate sensor hubd reads itself, on a serial port.",
                more: "air-quality.md", restart: true, keys: sds011Keys),
            ConfigSection(
                "air", "How particulate readings become a status.", more: "air-quality.md", restart: true, keys: airKeys
            ),
            ConfigSection(
                "air.alert", "The air-quality alert (event `air_quality`, status `alert` and `clear`).",
                more: "air-quality.md", restart: true, keys: airAlertKeys),
            ConfigSection(
                "thresholds[]",
                "Each item a limit on sensors' values or an attribute: an event `threshold` once when crossed, once "
                    + "when back past the hysteresis.",
                more: "devices.md", keys: ThresholdRule.keys),
            ConfigSection(
                "sessions[]", "Each item names mobile sensors whose readings belong to recording sessions.",
                more: "mobile.md", keys: SessionRule.keys),
            ConfigSection("history", "The history (`history.sqlite`).", keys: historyKeys),
            ConfigSection(
                "route", "The least-polluted route (`hubctl route`, `/api/v1/route`).", more: "mobile.md",
                restart: true, keys: routeKeys),
            ConfigSection("http", "The HTTP server.", more: "http-api.md", restart: true, keys: httpKeys),
            ConfigSection(
                "discovery", "The devices hubd adds by itself, as `hubctl discover --add` does.",
                more: "devices.md", restart: true, keys: DiscoverySettings.keys),
            ConfigSection(
                "homeassistant", "Home Assistant's MQTT discovery.", more: "home-assistant.md",
                restart: true, keys: HomeAssistantSettings.keys),
            ConfigSection(
                "uv", "The place the UV index is computed for, and the sensor that publishes it.", more: "uv.md",
                restart: true, keys: UVSettings.keys),
            ConfigSection(
                "feeds.<name>",
                "A regional air-quality feed, each region a numeric sensor (a list of feeds with a `name` each "
                    + "works too).",
                more: "feeds.md", restart: true, keys: FeedSettings.keys),
            ConfigSection(
                "remote", "A PostgreSQL database that receives readings, sessions and events through a durable queue.",
                more: "cluster.md", restart: true, keys: RemoteSettings.keys),
            ConfigSection(
                "cluster", "This agent as one of several sharing the sensors (needs `store`).", more: "cluster.md",
                restart: true, keys: ClusterSettings.keys),
        ]
    }
}
