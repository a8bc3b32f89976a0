import Foundation
import HubCore
import Logging

/// `log`: one structured line per notification in hubd's log (the journal, under systemd).
struct LogNotifier: Notifier {
    let logger: Logger
    let level: Logger.Level

    func send(_ notification: Notification) async -> DeliveryResult {
        logger.log(
            level: level, "\(notification.title)",
            metadata: [
                "id": "\(notification.id)", "event": "\(notification.event.kind)",
                "sensor": "\(notification.event.sensor)", "old_status": "\(notification.event.oldStatus)",
                "status": "\(notification.event.newStatus)", "time": "\(notification.event.time)",
                "message": "\(notification.body)", "rule": "\(notification.rule)",
            ])
        return .delivered
    }
}

/// `file`: appends each notification as one JSON line (an audit trail). The file is opened for each line, so
/// logrotate can move it away at any time.
struct FileNotifier: Notifier {
    let path: String
    /// `fsync` after each line.
    let sync: Bool

    /// Up to 512 lines in one `write`: a burst of changes costs one open, one write and one close.
    var batchSize: Int { 512 }

    func send(_ notification: Notification) async -> DeliveryResult {
        await send(batch: [notification])[0]
    }

    func send(batch: [Notification]) async -> [DeliveryResult] {
        var line: [UInt8] = []
        line.reserveCapacity(batch.count * 400)
        for notification in batch {
            line += notification.json
            line.append(UInt8(ascii: "\n"))
        }
        let result = append(line)
        return Array(repeating: result, count: batch.count)
    }

    private func append(_ line: [UInt8]) -> DeliveryResult {
        let fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o640)
        guard fd >= 0 else { return failure("open", errno) }
        defer { close(fd) }
        // One write: appends of a whole line don't interleave with another writer's.
        var offset = 0
        while offset < line.count {
            let count = line.withUnsafeBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if count < 0 {
                if errno == EINTR { continue }
                return failure("write", errno)
            }
            offset += count
        }
        if sync && fsync(fd) != 0 { return failure("flush", errno) }
        return .delivered
    }

    private func failure(_ action: String, _ code: Int32) -> DeliveryResult {
        let reason = "cannot \(action) \(path): \(String(cString: strerror(code)))"
        // A missing directory or a permission can be fixed while hubd runs; retrying costs little.
        return .retry(reason: reason)
    }
}

/// Publishes a message and returns once the broker has it (PUBACK for QoS 1); throws when not connected.
public typealias MQTTPublish =
    @Sendable (_ topic: String, _ payload: [UInt8], _ qos: Int, _ retain: Bool) async throws
    -> Void

/// `mqtt`: republishes the notification as JSON over the hub's own connection.
struct MQTTNotifier: Notifier {
    let topic: Template
    let qos: Int
    let retain: Bool
    let publish: MQTTPublish

    /// Up to 100 publishes in flight at once: one at a time, each waiting for its PUBACK, the backend fell seconds
    /// behind a burst of 10k changes a second.
    var batchSize: Int { 100 }

    func send(_ notification: Notification) async -> DeliveryResult {
        await send(notification, to: topic.render(notification.event, id: notification.id))
    }

    private func send(_ notification: Notification, to topic: String) async -> DeliveryResult {
        do {
            try await publish(topic, notification.json, qos, retain)
            return .delivered
        } catch {
            return .retry(reason: "publish to \(topic): \(error)")
        }
    }

    /// Topics in parallel, each topic's notifications in order: a subscriber (or a retained message) must end on
    /// a sensor's latest event, not on whichever publish won a race.
    func send(batch: [Notification]) async -> [DeliveryResult] {
        guard batch.count > 1 else { return [await send(batch[0])] }
        let byTopic = Dictionary(grouping: batch.indices) { topic.render(batch[$0].event, id: batch[$0].id) }
        return await withTaskGroup(of: [(Int, DeliveryResult)].self) { group in
            for (topic, indices) in byTopic {
                group.addTask {
                    var results: [(Int, DeliveryResult)] = []
                    for index in indices { results.append((index, await send(batch[index], to: topic))) }
                    return results
                }
            }
            var results = [DeliveryResult](repeating: .delivered, count: batch.count)
            for await finished in group {
                for (index, result) in finished { results[index] = result }
            }
            return results
        }
    }
}
