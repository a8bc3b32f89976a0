import Foundation
import HubCore
import HubHistory
import Logging
import Mosquitto
import SDS011

/// The particulate side of the agent: the history, and the SDS011 it drives.
extension HubService {
    /// Opens the history and gives each particulate sensor its last 24 hours, so rolling means and alert state
    /// survive a restart. Without it the hub still runs (logged).
    func openHistory(_ state: StateDirectory, _ document: DefaultsDocument) -> History? {
        let history: History
        do {
            history = try History(directory: state.path)
        } catch {
            record("the history can't be opened; readings and events are not kept: \(error)")
            return nil
        }
        let since = Timestamp(millisecondsSince1970: Timestamp.now.millisecondsSince1970 - 86_400_000)
        for sensor in document.sensors where sensor.kind == .particulate {
            guard let readings = try? history.readings(of: sensor.name, since: since), !readings.isEmpty else {
                continue
            }
            tracker.withLock { $0.seed(topic: sensor.topic, readings: readings) }
        }
        return history
    }

    func writeHistory(_ history: History) async {
        let (readings, events) = pendingHistory.withLock { pending in
            defer { pending = ([], []) }
            return (pending.readings, pending.events)
        }
        do {
            try await history.record(readings: readings, events: events)
        } catch {
            record("could not write \(readings.count) readings and \(events.count) events to the history: \(error)")
        }
    }

    func pruneHistory(_ history: History) async {
        let retention = Int64(configuration.historyRetention.components.seconds * 1000)
        do {
            let removed = try await history.prune(
                before: Timestamp(millisecondsSince1970: Timestamp.now.millisecondsSince1970 - retention))
            if removed > 0 { logger.info("pruned the history", metadata: ["rows": "\(removed)"]) }
        } catch {
            record("could not prune the history: \(error)")
        }
    }

    func sds011Reader() -> SDS011Reader {
        let settings = configuration.sds011
        var logger = self.logger
        logger[metadataKey: "sensor"] = "\(settings.name)"
        // Zero until the line carries noise: `hubctl status` shows it is watched.
        counters.withLock { $0.sds011 = $0.sds011 ?? .init() }
        return SDS011Reader(
            settings: settings, logger: logger,
            register: { device in self.registerSDS011(device, settings) },
            publish: { topic, payload in
                guard let client = self.connection.withLock({ $0.connected ? $0.client : nil }) else {
                    throw MosquittoError.notConnected(operation: "publish")
                }
                try await client.publish(topic: topic, payload: payload, qos: .atLeastOnce, retain: true)
            },
            countNoise: { discarded, bad in
                self.counters.withLock {
                    $0.sds011?.discardedBytes += discarded
                    $0.sds011?.badChecksums += bad
                }
            })
    }

    /// Adds the SDS011 to the registry as a particulate sensor (once), and returns the topic its readings go to.
    func registerSDS011(_ device: SDS011DeviceID, _ settings: HubConfiguration.SDS011Settings) -> String? {
        let topic = settings.topic.replacingOccurrences(of: "{id}", with: device.description)
        do {
            let existing = try store.update { document throws(RegistryError) -> Sensor? in
                if let sensor = document.sensor(named: settings.name) { return sensor }
                try document.addSensor(named: settings.name, topic: topic, kind: .particulate)
                return nil
            }
            if let existing, existing.topic != topic || existing.kind != .particulate {
                logger.warning(
                    "the registry's sensor has another topic or kind than the SDS011's; readings go to its topic",
                    metadata: [
                        "sensor": "\(existing.name)", "its_topic": "\(existing.topic)", "sds011_topic": "\(topic)",
                    ])
                return existing.topic
            }
            if existing == nil {
                logger.notice(
                    "added the SDS011 to the registry", metadata: ["sensor": "\(settings.name)", "topic": "\(topic)"])
            }
            return topic
        } catch {
            record("could not add the SDS011 to the registry: \(error)")
            return nil
        }
    }
}
