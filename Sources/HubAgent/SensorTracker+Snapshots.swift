import HubCore

// What the tracker knows now, as values to hand out: the particulate sensors' air and every sensor's live status
// (`HubSnapshot` takes them for the HTTP API, /metrics and the status file).
extension SensorTracker {
    /// A particulate sensor's air quality now: its last reading, rolling means and alert state.
    public struct AirSnapshot: Sendable {
        public var sensor: String
        public var reading: ParticulateReading?
        public var mean1h: (pm25: Double?, pm10: Double?)
        public var mean24h: (pm25: Double?, pm10: Double?)
        public var alerting: Bool
        /// The value the alert watches (its metric), now.
        public var watched: Double?
        public var policy: AirQualityPolicy
    }

    /// Every particulate sensor's air quality, by name.
    public func airSnapshots() -> [AirSnapshot] {
        sensors.values.compactMap { tracked -> AirSnapshot? in
            guard let monitor = tracked.air else { return nil }
            let hour = Duration.seconds(3600)
            let day = Duration.seconds(86_400)
            let metric = monitor.policy.metric
            let watched =
                metric.window.map { monitor.mean(metric.pollutant, over: $0) }
                ?? (metric.pollutant == .pm25 ? monitor.latest?.pm25 : monitor.latest?.pm10)
            return AirSnapshot(
                sensor: tracked.name, reading: monitor.latest,
                mean1h: (monitor.mean(.pm25, over: hour), monitor.mean(.pm10, over: hour)),
                mean24h: (monitor.mean(.pm25, over: day), monitor.mean(.pm10, over: day)), alerting: monitor.alerting,
                watched: watched, policy: monitor.policy)
        }.sorted { $0.sensor < $1.sensor }
    }

    /// A sensor's status as the hub sees it now.
    public struct LiveStatus: Sendable, Hashable {
        public var status: String
        public var lastUpdated: Timestamp?
        /// The other fields of its device's last payload.
        public var attributes: SensorAttributes
        /// Whether `sessions:` makes it a mobile sensor, and its recording session while one is open.
        public var mobile: Bool
        public var session: OpenSession?

        public init(
            status: String, lastUpdated: Timestamp?, attributes: SensorAttributes = [], mobile: Bool = false,
            session: OpenSession? = nil
        ) {
            self.status = status
            self.lastUpdated = lastUpdated
            self.attributes = attributes
            self.mobile = mobile
            self.session = session
        }
    }

    /// The sensor on `topic`, as the hub sees it now.
    public func status(onTopic topic: String) -> (name: String, status: String, lastUpdated: Timestamp?)? {
        sensors[topic].map { ($0.name, $0.status, $0.lastUpdated) }
    }

    /// Every sensor's status as the hub sees it now, by topic.
    public var liveStatuses: [String: LiveStatus] {
        sensors.mapValues {
            LiveStatus(
                status: $0.status, lastUpdated: $0.lastUpdated, attributes: $0.attributes, mobile: $0.sessions != nil,
                session: $0.session)
        }
    }
}
