import HubCore

// What the tracker knows of its particulate sensors' air, for the API and the dashboard.
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
}
