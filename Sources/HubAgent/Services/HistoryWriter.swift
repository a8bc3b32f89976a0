import Foundation
import HubCore
import HubHistory
import HubSupport
import Logging
import ServiceLifecycle

/// Keeps readings and events in the history (SQLite): what ingest hands over is written in one transaction every
/// flush interval and once more when hubd stops; what is older than `history.retention` is pruned daily.
final class HistoryWriter: Service, EventSink, Sendable {
    private let history: History
    private let flushInterval: Duration
    /// Read at each prune: SIGHUP can change it.
    private let retention: @Sendable () -> Duration
    private let errors: ErrorRecorder
    private let logger: Logger
    private let pending = Locked<(readings: [(sensor: String, reading: ParticulateReading)], events: [SensorEvent])>(
        ([], []))

    init(
        history: History, flushInterval: Duration, retention: @escaping @Sendable () -> Duration,
        errors: ErrorRecorder, logger: Logger
    ) {
        self.history = history
        self.flushInterval = flushInterval
        self.retention = retention
        self.errors = errors
        self.logger = logger
    }

    /// Opens the history in `directory` and gives each particulate sensor of `document` its last 24 hours, so
    /// rolling means and alert state survive a restart. `nil` when it can't be opened (recorded; the hub runs on).
    static func open(
        _ directory: String, for document: DefaultsDocument, seeding tracker: inout SensorTracker,
        errors: ErrorRecorder
    ) -> History? {
        let history: History
        do {
            history = try History(directory: directory)
        } catch {
            errors.record("the history can't be opened; readings and events are not kept: \(error)")
            return nil
        }
        let since = Timestamp(millisecondsSince1970: Timestamp.now.millisecondsSince1970 - 86_400_000)
        for sensor in document.sensors where sensor.kind == .particulate {
            guard let readings = try? history.readings(of: sensor.name, since: since), !readings.isEmpty else {
                continue
            }
            tracker.seed(topic: sensor.topic, readings: readings)
        }
        return history
    }

    func accept(_ event: SensorEvent) {
        pending.withLock { $0.events.append(event) }
    }

    func accept(_ reading: ParticulateReading, of sensor: String) {
        pending.withLock { $0.readings.append((sensor, reading)) }
    }

    func run() async {
        await cancelWhenGracefulShutdown {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await every(self.flushInterval) { await self.write() } }
                group.addTask { await every(.seconds(86_400)) { await self.prune() } }
            }
        }
        // Ingest has stopped: the last readings and events are here.
        await write()
    }

    private func write() async {
        let (readings, events) = pending.withLock { pending in
            defer { pending = ([], []) }
            return (pending.readings, pending.events)
        }
        do {
            try await history.record(readings: readings, events: events)
        } catch {
            errors.record("could not write \(readings.count) readings and \(events.count) events to the history: \(error)")
        }
    }

    private func prune() async {
        let retention = Int64(retention().components.seconds * 1000)
        do {
            let removed = try await history.prune(
                before: Timestamp(millisecondsSince1970: Timestamp.now.millisecondsSince1970 - retention))
            if removed > 0 { logger.info("pruned the history", metadata: ["rows": "\(removed)"]) }
        } catch {
            errors.record("could not prune the history: \(error)")
        }
    }
}
