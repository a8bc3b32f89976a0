// The keys of the sections whose settings have a type of their own (a database, a threshold rule, a feed, the
// cluster…): each type's `read` checks its part of hubd.yaml against its list here (`ConfigNode.allow`), and the
// configuration reference is made from the same lists, beside hubd's own sections (`HubConfiguration+Keys.swift`).

extension DatabaseSettings {
    /// The keys `read` takes: what `store` and `remote` both say of their database.
    static let keys: [ConfigKey] = [
        ConfigKey(
            "url", "postgres://user@host:port/database",
            "The PostgreSQL database; the password never goes in the URL."),
        ConfigKey(
            "password", "text", secret: true,
            "The database password; better `password_file`, or `$HUB_<SECTION>_PASSWORD`."),
        ConfigKey("tls", "one of: require, prefer, disable", default: "prefer", "Whether the connection is encrypted."),
        .caFile(for: "the database server"),
    ]
}

extension ThresholdRule {
    static let keys: [ConfigKey] = [
        ConfigKey(
            "name", "text",
            "What its events and alerts are called; made from the limit when left out (`value above 30`)."),
        ConfigKey("sensors", "list of names or globs", "The sensors it watches; all when left out."),
        ConfigKey(
            "attribute", "value path",
            "The attribute it watches (`battery`, `AM2301.Humidity`); the value when left out."),
        ConfigKey("above", "number", "Crossed when the value goes above this (`above` or `below`, or both, required)."),
        ConfigKey("below", "number", "Crossed when the value goes below this."),
        ConfigKey(
            "hysteresis", "number 0 or more", default: "0",
            "Back only once the value is this far past the limit, in the value's unit."),
        ConfigKey("for", "duration 0s–7d", "How long the breach must hold before the event."),
        ConfigKey("min_interval", "duration 0s–7d", "At most one event of a sensor in this long."),
    ]
}

extension SessionRule {
    static let keys: [ConfigKey] = [
        ConfigKey(
            "sensors", "list of names or globs",
            "Required. The mobile sensors; a sensor takes the first item naming it."),
        ConfigKey(
            "gap", "duration 1s–7d or manual", default: "10m",
            "A reading starts a session and a silence longer than this ends it; `manual` records only between a "
                + "start and a stop (`hubctl sessions start`, the device's own message)."),
    ]
}

extension DiscoverySettings {
    static let keys: [ConfigKey] = [
        ConfigKey(
            "enabled", "true or false", default: "false",
            "Whether hubd adds a sensor for each new device it hears (logged, and a `discovered` event)."),
        ConfigKey(
            "families", "list of: zigbee2mqtt, tasmota, esphome, shelly",
            default: "[" + DeviceFamily.all.map(\.rawValue).joined(separator: ", ") + "]",
            "The device families listened for, each on its own topics."),
        ConfigKey(
            "zigbee2mqtt_base", "topic or list of topics", default: "zigbee2mqtt",
            "Zigbee2MQTT's base topic (its `mqtt.base_topic`); a list for several bridges."),
        ConfigKey(
            "max_auto_sensors", "integer 0–100000", default: "100",
            "Discovery adds no more sensors than this, ever (kept across restarts in `discovered.json`)."),
    ]
}

extension HomeAssistantSettings {
    static let keys: [ConfigKey] = [
        ConfigKey(
            "enabled", "true or false", default: "false",
            "Whether hubd announces every sensor to Home Assistant; turning it off removes nothing (`hubctl ha "
                + "clear` does)."),
        ConfigKey(
            "prefix", "topic", default: "homeassistant", "Home Assistant's discovery prefix (`discovery_prefix`)."),
    ]
}

extension UVSettings {
    static let keys: [ConfigKey] = [
        ConfigKey("latitude", "number −90–90", "The place's latitude, north positive; with `longitude`."),
        ConfigKey("longitude", "number −180–180", "The place's longitude, east positive; with `latitude`."),
        ConfigKey("ozone", "number 50–700 (DU)", "The total ozone column; 300, a climatological value, when left out."),
        ConfigKey(
            "altitude", "number −500–9000 (m)", default: "0",
            "Metres above sea level: the clear-sky index rises about 10 % a kilometre."),
        ConfigKey("name", "sensor name", default: "uv index", "The UV sensor's name in the registry."),
        ConfigKey(
            "topic", "topic with {name}", default: "\"sensorhub/uv/{name}\"",
            "Where its readings are published, retained."),
        ConfigKey("interval", "duration 1s–1d", default: "10m", "A reading this often."),
        ConfigKey(
            "temis", "true, false or a URL", default: "false",
            "The ozone column and the week's forecast from TEMIS's UV-index page for the place (true), or that URL."),
        ConfigKey("temis_refresh", "duration 1s–7d", default: "3h", "The TEMIS page is fetched at most this often."),
    ]
}

extension FeedSettings {
    static let keys: [ConfigKey] = [
        ConfigKey("name", "lower-case letters, digits, dashes", "The feed's name, when `feeds` is a list."),
        ConfigKey(
            "format", "one of: nea, openaq, json",
            "Required. data.gov.sg's PSI and PM2.5 (nea), OpenAQ v3 (openaq), or any JSON document (json)."),
        ConfigKey("url", "URL", "The document (json, required) or OpenAQ's API base (openaq)."),
        ConfigKey("psi_url", "URL", "NEA's PSI document; data.gov.sg's v1 API when left out."),
        ConfigKey("pm25_url", "URL", "NEA's PM2.5 document; data.gov.sg's v1 API when left out."),
        ConfigKey("interval", "duration 1s–7d", default: "1h", "A poll this often (longer after failures)."),
        ConfigKey("timeout", "duration 100ms–10m", default: "30s", "How long one request may take."),
        ConfigKey(
            "sensor_prefix", "text",
            "Put before each region's name to make its sensor's name; the feed's name and a "
                + "dash when left out."),
        ConfigKey("unit", "text", "The unit the index is shown in; PSI for nea, AQI otherwise."),
        ConfigKey("locations", "list of integers", "OpenAQ's location ids (openaq, required)."),
        ConfigKey("api_key", "text", secret: true, "OpenAQ's API key (openaq, required); better `api_key_file`."),
        ConfigKey("items", "value path", "json: where the list of items is; the document is the list when left out."),
        ConfigKey("region", "value path", "json: each item's region."),
        ConfigKey("region_name", "text", "json: one region for every item, instead of `region`."),
        ConfigKey("time", "value path", "json, required: each item's time (ISO 8601, or seconds since 1970)."),
        ConfigKey("value", "value path", "json, required: each item's index."),
        ConfigKey("latitude", "value path", "json: each item's latitude (with `longitude`)."),
        ConfigKey("longitude", "value path", "json: each item's longitude (with `latitude`)."),
        ConfigKey("metrics", "mapping of names to value paths", "json: sub-indices published as attributes."),
    ]
}

extension RemoteSettings {
    static let keys: [ConfigKey] =
        DatabaseSettings.keys + [
            ConfigKey(
                "mode", "one of: stream, record", default: "stream",
                "Everything as it arrives (stream), or a mobile session's readings when it ends (record)."),
            ConfigKey(
                "hub", "1–64 letters, digits, ., _ or -", "This hub's name on its rows; the host name when left out."),
            ConfigKey("batch", "integer 1–5000", default: "500", "Rows in one transaction, at most."),
            ConfigKey(
                "interval", "duration 10ms–1h", default: "1s", "How often what arrived is queued on disk and sent."),
            ConfigKey(
                "postgis", "true or false", default: "true",
                "Use PostGIS where the server has it; false: plain columns."),
            ConfigKey(
                "max_back_off", "duration 1s–1h", default: "5m",
                "The longest wait between attempts while the database is down."),
        ]
}

extension ClusterSettings {
    static let keys: [ConfigKey] = [
        ConfigKey("group", "1–64 letters, digits, ., _ or -", "Required. The cluster's name, shared by its agents."),
        ConfigKey(
            "agent", "1–64 letters, digits, ., _ or -", "This agent, unique in the group; the host name when left out."),
        ConfigKey(
            "lease", "duration 5s–5m", default: "15s",
            "A duty of an agent that stops renewing moves to another after this."),
    ]
}
