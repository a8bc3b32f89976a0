import Foundation
import HubCore
import HubRemote
import HubSupport
import HubTestKit
import Logging

/// Readings and events as a mobile or fixed sensor makes them, with the ids hubd gives.
enum Make {
    static let base: Int64 = 1_795_000_000_000

    /// A mobile particulate reading `index` seconds into a session, along a line of positions.
    static func mobile(_ index: Int, session: String?, sensorID: String = "0123456789ab", sensor: String = "walk")
        -> RemoteEntry
    {
        let fix = GeoFix(
            point: GeoPoint(latitude: 1.3 + Double(index) * 0.0001, longitude: 103.8)!, altitude: 15,
            accuracy: 4.5)
        let reading = ParticulateReading(
            pm25: 10 + Double(index), pm10: 20, time: Timestamp(millisecondsSince1970: base + Int64(index) * 1000),
            position: fix)
        return RemoteEntry(
            RecordedReading(sensor: sensor, reading: .particulate(reading), sensorID: sensorID, session: session))
    }

    /// A fixed sensor's numeric reading.
    static func fixed(_ index: Int, sensorID: String = "fedcba987654") -> RemoteEntry {
        RemoteEntry(
            RecordedReading(
                sensor: "kitchen",
                reading: .numeric(
                    20 + Double(index), unit: "°C", time: Timestamp(millisecondsSince1970: base + Int64(index) * 1000)),
                sensorID: sensorID))
    }

    /// The start (`sequence` is its event's) or end of a session, whose id is its start event's.
    static func session(
        start: Bool, sequence: Int, session: String, at index: Int, sensorID: String = "0123456789ab"
    ) -> RemoteEntry {
        RemoteEntry(
            SensorEvent(
                id: SensorEvent.id(sensor: sensorID, sequence: sequence), kind: .session, sensor: "walk",
                topic: "sensors/walk", oldStatus: start ? "idle" : "recording", newStatus: start ? "recording" : "idle",
                time: Timestamp(millisecondsSince1970: base + Int64(index) * 1000), value: session))
    }

    /// A door's status change.
    static func change(_ sequence: Int, to status: String, sensorID: String = "d00d00d00d00") -> RemoteEntry {
        RemoteEntry(
            SensorEvent(
                id: SensorEvent.id(sensor: sensorID, sequence: sequence), kind: .changed, sensor: "door",
                topic: "sensors/door", oldStatus: "closed", newStatus: status,
                time: Timestamp(millisecondsSince1970: base + Int64(sequence) * 1000)))
    }
}

/// Settings for `server`'s database `database`, as hubd.yaml would give them.
func settings(
    _ server: PostgresServer, database: String, hub: String = "home", mode: RemoteSettings.Mode = .stream,
    postgis: Bool = true
) -> RemoteSettings {
    var settings = RemoteSettings(server: server.settings(database: database), hub: hub)
    settings.mode = mode
    settings.postgis = postgis
    settings.interval = .milliseconds(50)
    settings.maximumBackOff = .seconds(1)
    return settings
}

let testLogger: Logger = {
    var logger = Logger(label: "remote-test")
    logger.logLevel = .warning
    return logger
}()

/// A queue in `directory` and a forwarder for `settings`, the queue opened.
func makeForwarder(
    _ settings: RemoteSettings, directory: TemporaryDirectory, logger: Logger = testLogger
) async throws -> RemoteForwarder {
    let queue = RemoteQueue(directory: directory.path, mode: settings.mode, logger: logger)
    try await queue.open()
    return RemoteForwarder(settings: settings, queue: queue, logger: logger)
}

/// Keeps what a logger logged, with its level and metadata.
final class LogRecorder: Sendable {
    struct Line: Sendable {
        var level: Logger.Level
        var message: String
        var metadata: [String: String]
    }

    private let lines = Locked<[Line]>([])

    var all: [Line] { lines.withLock { $0 } }

    var logger: Logger {
        var logger = Logger(label: "remote-test") { _ in Handler(recorder: self) }
        logger.logLevel = .info
        return logger
    }

    private struct Handler: LogHandler {
        let recorder: LogRecorder
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .info

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let metadata = (event.metadata ?? [:]).mapValues(\.description)
            recorder.lines.withLock {
                $0.append(Line(level: event.level, message: event.message.description, metadata: metadata))
            }
        }
    }
}
