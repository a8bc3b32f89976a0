import HubCore
import Logging

/// The sensor a source (the SDS011, the UV index) publishes for: added to the registry once, like any sensor.
enum SourceSensor {
    /// Adds the sensor `name` unless the registry has it, and returns the topic the source's readings go to: `topic`,
    /// or the registry's sensor's own when someone gave it another topic or kind (theirs wins, with a warning).
    /// - Parameter source: what the source is, for the log (`the SDS011`).
    static func register(
        name: String, topic: String, kind: SensorKind, format: ValueFormat = ValueFormat(), source: String,
        store: any RegistryStore, errors: ErrorRecorder, logger: Logger
    ) async -> String? {
        do {
            let existing = try await store.update { document throws(RegistryError) -> Sensor? in
                if let sensor = document.sensor(named: name) { return sensor }
                try document.addSensor(named: name, topic: topic, kind: kind, format: format)
                return nil
            }
            if let existing, existing.topic != topic || existing.kind != kind {
                logger.warning(
                    "the registry's sensor has another topic or kind than \(source)'s; readings go to its topic",
                    metadata: [
                        "sensor": "\(existing.name)", "its_topic": "\(existing.topic)", "source_topic": "\(topic)",
                    ])
                return existing.topic
            }
            if existing == nil {
                logger.notice("added \(source) to the registry", metadata: ["sensor": "\(name)", "topic": "\(topic)"])
            }
            return topic
        } catch {
            errors.record("could not add \(source) to the registry: \(error)")
            return nil
        }
    }
}
