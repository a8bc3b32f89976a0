import Foundation

/// One entry of `feeds:` in hubd.yaml: a regional air-quality feed hubd polls and publishes as virtual sensors.
public struct FeedSettings: Sendable, Hashable {
    /// How the feed's documents are read.
    public enum Format: String, Sendable, Hashable, CaseIterable {
        case nea, openaq, json
    }

    /// The feed's name: its topic level (`sensorhub/feeds/<name>/<region>`) and its counters' label.
    public var name: String
    public var format: Format
    /// What is fetched: NEA's PSI and PM2.5 documents; the generic feed's one document; OpenAQ's API base.
    public var urls: [String]
    public var interval: Duration = .seconds(3600)
    /// How long one request may take.
    public var timeout: Duration = .seconds(30)
    /// Put before each region's name to make its sensor's name (`sg-` → `sg-west`).
    public var sensorPrefix: String
    /// OpenAQ's `X-API-Key`.
    public var apiKey: String?
    /// OpenAQ location ids.
    public var locations: [Int] = []
    /// The generic feed's paths.
    public var json: JSONFeedFormat?
    /// The unit the index is shown in.
    public var unit: String
    /// The index's bands, the region sensors' status: NEA's PSI bands, the US AQI's elsewhere.
    public var bands: ValueBands

    public init(name: String, format: Format, urls: [String] = []) {
        self.name = name
        self.format = format
        self.sensorPrefix = name + "-"
        switch format {
        case .nea:
            self.urls = urls.isEmpty ? [NEAFeed.defaultPSI, NEAFeed.defaultPM25] : urls
            unit = "PSI"
            bands = .psi
        case .openaq:
            self.urls = urls.isEmpty ? [OpenAQFeed.defaultBase] : urls
            unit = "AQI"
            bands = .usAQI
        case .json:
            self.urls = urls
            unit = "AQI"
            bands = .usAQI
        }
    }

    /// The topic a region's readings are published to.
    public func topic(region slug: String) -> String { "sensorhub/feeds/\(name)/\(slug)" }

    /// The sensor a region's readings belong to.
    public func sensorName(region slug: String) -> String { sensorPrefix + slug }

    /// How long to wait before the next poll: the interval, or after failures a back-off from a minute (or the
    /// interval, if shorter) doubling up to an hour (or the interval, if longer) — and never less than the server
    /// asked for in a 429's or 503's `Retry-After`, itself capped as the back-off is, so that a server asking for a
    /// day can't stop the feed for a day.
    /// - Parameters:
    ///   - failures: failed polls in a row (0 after a good one).
    ///   - retryAfter: the last failure's `Retry-After`, when it had one.
    public func delay(after failures: Int, retryAfter: Duration? = nil) -> Duration {
        guard failures > 0 else { return interval }
        let first = min(interval, .seconds(60))
        let cap = max(interval, .seconds(3600))
        let backOff = min(first * (1 << min(failures - 1, 16)), cap)
        return max(backOff, min(retryAfter ?? .zero, cap))
    }

    /// Reads `feeds:`: a mapping of feeds by name, or a list of feeds that each have a `name`.
    static func readAll(_ node: ConfigNode) throws(ConfigurationError) -> [FeedSettings] {
        guard node.isSet else { return [] }
        var named: [(name: String, node: ConfigNode)] = []
        if (try? node.keys()) != nil {
            for (key, feed) in try node.entries() {
                if let name = try feed["name"].string(), name != key {
                    throw feed["name"].invalidValue(name, "the feed is already named \(key) by its key")
                }
                named.append((key, feed))
            }
        } else {
            for feed in try node.list() { named.append((try feed["name"].required { try $0.string() }, feed)) }
        }
        var feeds: [FeedSettings] = []
        for (name, feed) in named {
            guard FeedReading.slug(name) == name else {
                throw feed.invalid("a feed's name is lower-case letters, digits and dashes (\(name) is not)")
            }
            guard !feeds.contains(where: { $0.name == name }) else {
                throw feed.invalid("a second feed called \(name)")
            }
            feeds.append(try read(name: name, feed))
        }
        return feeds
    }

    static func read(name: String, _ node: ConfigNode) throws(ConfigurationError) -> FeedSettings {
        try node.allow(keys)
        let format = try node["format"].required { node in
            try node.value("one of \(Format.allCases.map(\.rawValue).joined(separator: ", "))") {
                Format(rawValue: $0.lowercased())
            }
        }
        var feed = FeedSettings(name: name, format: format)
        switch format {
        case .nea:
            feed.urls = [
                try node["psi_url"].url() ?? NEAFeed.defaultPSI, try node["pm25_url"].url() ?? NEAFeed.defaultPM25,
            ]
        case .openaq:
            if let base = try node["url"].url() { feed.urls = [base] }
            let locations = try node["locations"].stringItems() ?? []
            for (text, item) in locations {
                guard let id = Int(text), id > 0 else { throw item.invalidValue(text, "an OpenAQ location id") }
                feed.locations.append(id)
            }
            guard !feed.locations.isEmpty else { throw node["locations"].invalid("an OpenAQ feed needs locations") }
            guard let key = try node.secret("api_key"), !key.isEmpty else {
                throw node["api_key_file"].invalid(
                    "OpenAQ needs an API key: api_key_file, or \(node["api_key"].environmentName)")
            }
            feed.apiKey = key
        case .json:
            feed.urls = [try node["url"].required { try $0.url() }]
            feed.json = try readPaths(node)
        }
        if format != .json {
            for key in ["items", "region", "region_name", "time", "value", "latitude", "longitude", "metrics"]
            where node[key].isSet {
                throw node[key].invalid("only a json feed has paths")
            }
        }
        if let interval = try node["interval"].duration(in: .seconds(1)...(.seconds(7 * 86_400))) {
            feed.interval = interval
        }
        if let timeout = try node["timeout"].duration(in: .milliseconds(100)...(.seconds(600))) {
            feed.timeout = timeout
        }
        if let prefix = try node["sensor_prefix"].value(
            "what a sensor's name may start with", { (try? SensorRules.name($0 + "x")) != nil ? $0 : nil })
        {
            feed.sensorPrefix = prefix
        }
        if let unit = try node["unit"].string(), !unit.isEmpty { feed.unit = unit }
        return feed
    }

    /// The generic feed's paths: `time` and `value` required, `region` or `region_name` unless items are keyed by
    /// region.
    static func readPaths(_ node: ConfigNode) throws(ConfigurationError) -> JSONFeedFormat {
        func path(_ key: String) throws(ConfigurationError) -> ValuePath? {
            try node[key].value("a value path like data.items or readings[0].pm25") { try ValuePath($0) }
        }
        var format = JSONFeedFormat(
            items: try path("items"), region: try path("region"), fixedRegion: try node["region_name"].string(),
            time: try node["time"].required { _ in try path("time") },
            value: try node["value"].required { _ in try path("value") }, latitude: try path("latitude"),
            longitude: try path("longitude"))
        for (name, metric) in try node["metrics"].entries() {
            guard !FeedReading.reservedNames.contains(name), FeedReading.slug(name) != nil else {
                throw metric.invalid("a metric can't be called \(name)")
            }
            let path = try metric.required { try $0.value("a value path") { try ValuePath($0) } }
            format.metrics.append(.init(name: name, path: path))
        }
        if (format.latitude == nil) != (format.longitude == nil) {
            throw node[format.latitude == nil ? "latitude" : "longitude"].invalid("latitude and longitude go together")
        }
        return format
    }
}
