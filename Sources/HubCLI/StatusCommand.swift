import ArgumentParser
import Foundation
import HubCore

extension HubctlCommand {
    /// `hubctl status`: is hubd running, on which broker, how many sensors, the last error.
    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "status",
            abstract: "Say whether hubd runs, which broker it is connected to, and how the sensors are.",
            discussion: """
                Reads what hubd writes in the state directory (hubd.status.json) and the registry. Exits 0 \
                when hubd runs and is connected, 3 when it is not running, 69 when it runs without a broker \
                connection.

                Examples:
                  hubctl status
                  hubctl status --json
                """)

        @OptionGroup var state: StateOptions
        @OptionGroup var clock: ClockOptions
        @Flag(help: "Print JSON, for scripts.") var json = false

        func run() async throws {
            let (configuration, directory) = try await state.resolve()
            let store = StateOptions.registry(configuration: configuration, state: directory)
            let document = try await withStoreErrors { () async throws(StoreError) in try await store.read() }
            let status = AgentStatus.read(from: directory.path)
            let cluster = await ClusterView.read(configuration)
            let running = status?.isRunning ?? false
            var counts: [String: Int] = ["offline": 0, "waiting": 0, "reporting": 0]
            for sensor in document.sensors {
                switch sensor.status {
                case "offline": counts["offline", default: 0] += 1
                case Sensor.waiting where sensor.lastUpdated == nil: counts["waiting", default: 0] += 1
                default: counts["reporting", default: 0] += 1
                }
            }
            if json {
                print(
                    Output.json(
                        status: status, running: running, sensors: document.sensors.count, counts: counts,
                        cluster: cluster))
            } else {
                print(
                    Output.status(
                        status, running: running, sensors: document.sensors.count, counts: counts,
                        directory: directory, cluster: cluster, now: clock.current),
                    terminator: "")
            }
            if !running { throw ExitCode(3) }
            if status?.connected != true { throw ExitCode(Failure.unavailable) }
        }
    }
}

extension Output {
    static func status(
        _ status: AgentStatus?,
        running: Bool,
        sensors: Int,
        counts: [String: Int],
        directory: StateDirectory,
        cluster: ClusterView? = nil,
        now: Timestamp
    ) -> String {
        var fields: [(String, String)] = []
        if let status, running {
            fields.append(
                ("hubd", "running (pid \(status.pid), version \(status.version), up \(since(status.started, now)))"))
            let broker = status.broker.isEmpty ? "none yet" : status.broker
            fields.append(
                (
                    "Broker",
                    status.connected
                        ? "connected to \(broker)\(status.connectedSince.map { " since \(absolute(Timestamp($0)))" } ?? "")"
                        : "not connected (trying \(broker))"
                ))
            let rejected = status.counters.rejected.values.reduce(0, +)
            fields.append(
                (
                    "Messages",
                    "\(status.counters.messages) received, \(status.counters.changes) changes, \(rejected) rejected"
                ))
            if let journal = status.counters.journal {
                fields.append(
                    (
                        "Journal",
                        "\(journal.records) statuses in \(journal.commits) flushes, longest wait "
                            + String(format: "%.1f ms", journal.longestWait * 1000)
                            + (journal.errors > 0 ? ", \(journal.errors) failed writes" : "")
                            + (journal.replayed > 0 ? ", \(journal.replayed) replayed at start" : "")
                            + Self.behind(journal.unacknowledged ?? [:])
                    ))
            }
            if let line = status.counters.sds011 {
                fields.append(
                    (
                        "SDS011 line",
                        "\(line.discardedBytes) bytes skipped as noise, \(line.badChecksums) frames with a bad checksum"
                    ))
            }
            for (feed, counts) in (status.counters.feeds ?? [:]).sorted(by: { $0.key < $1.key }) {
                var text =
                    "\(counts.polls) polls (\(counts.notModified) not modified), \(counts.published) readings published"
                text +=
                    ", \(counts.repeated + counts.older) not again, \(counts.rejected) refused, \(counts.failures) failed polls"
                if let problem = counts.lastProblem { text += "; last problem: \(problem)" }
                fields.append(("Feed \(feed)", text))
            }
            if let temis = status.counters.temis {
                var text = "\(temis.fetches) fetches of the page, \(temis.failures) failed"
                text += "; values from " + (temis.lastGoodFetch.map { absolute(Timestamp($0)) } ?? "no good fetch yet")
                if let error = temis.lastError { text += "; last error: \(error)" }
                fields.append(("UV TEMIS", text))
            }
            if let discovery = status.counters.discovery {
                let over =
                    discovery.overLimit > 0 ? ", \(discovery.overLimit) devices left out past max_auto_sensors" : ""
                fields.append(("Discovery", "\(discovery.added) sensors added\(over)"))
            }
            for (label, queue) in [
                ("History (store)", status.counters.history), ("Remote store", status.counters.remote),
            ] {
                guard let queue else { continue }
                var text =
                    "\(queue.connected ? "connected" : "not connected"), \(queue.sent) sent, \(queue.queued) queued"
                if queue.held > 0 { text += " (\(queue.held) held until their session ends)" }
                text += ", \(queue.failures) failed attempts"
                if queue.rejected > 0 { text += ", \(queue.rejected) refused and set aside" }
                if queue.unreadable > 0 { text += ", \(queue.unreadable) unreadable queue lines skipped" }
                if let error = queue.lastError { text += "; last error: \(error)" }
                fields.append((label, text))
            }
            if let notifications = status.notifications, !notifications.backends.isEmpty {
                fields.append(
                    (
                        "Notifications",
                        "\(notifications.pending) pending, \(notifications.suppressed) held back by rate limits"
                    ))
                if let alerts = notifications.alerts, alerts.messages + alerts.firing + alerts.silences > 0 {
                    fields.append(
                        (
                            "Alerts",
                            "\(alerts.firing) firing, \(alerts.acknowledged) acknowledged, \(alerts.held) held by a parent, "
                                + "\(alerts.silences) silences in force; \(alerts.messages) messages sent "
                                + "(\(alerts.outages) outage), \(alerts.flapped) flapped, \(alerts.silenced) silenced"
                        ))
                }
                if let alerts = notifications.alerts, alerts.resets > 0 {
                    let when = alerts.lastResetAt.map { " at \(absolute(Timestamp($0)))" } ?? ""
                    fields.append(
                        (
                            "Alert book",
                            "begun again \(alerts.resets) time(s): open alerts, silences and links were lost; last\(when): "
                                + (alerts.lastReset ?? "")
                        ))
                }
                for (name, backend) in notifications.backends.sorted(by: { $0.key < $1.key }) {
                    var text =
                        "\(backend.delivered) delivered, \(backend.queued) queued, \(backend.retried) retried, "
                        + "\(backend.failed) failed, \(backend.dropped) dropped"
                    if let error = backend.lastError { text += " (last error: \(error))" }
                    fields.append(("  " + name, text))
                }
            }
        } else if let status {
            fields.append(("hubd", "not running (last seen \(absolute(Timestamp(status.updated))), pid \(status.pid))"))
        } else if let target = AgentStatus.danglingLink(in: directory.path) {
            fields.append(("hubd", "not running (its status file, \(target), is gone: the machine restarted since)"))
        } else {
            fields.append(("hubd", "not running (it has never run with the state directory \(directory.path))"))
        }
        fields.append(
            (
                "Sensors",
                "\(sensors) (\(counts["reporting"] ?? 0) reporting, \(counts["offline"] ?? 0) offline, \(counts["waiting"] ?? 0) waiting)"
            ))
        fields += cluster?.fields() ?? []
        if let error = status?.lastError {
            fields.append(("Last error", "\(absolute(Timestamp(error.time))): \(error.message)"))
        } else {
            fields.append(("Last error", "none"))
        }
        return aligned(fields).map { $0 + "\n" }.joined()
    }

    /// ", store 1200 behind": the journal's consumers that have not yet acknowledged every durable record, if any.
    private static func behind(_ unacknowledged: [String: Int]) -> String {
        let waiting = unacknowledged.filter { $0.value > 0 }.sorted { $0.key < $1.key }
        guard !waiting.isEmpty else { return "" }
        return ", " + waiting.map { "\($0.key) \($0.value) behind" }.joined(separator: ", ")
    }

    private static func since(_ start: Date, _ now: Timestamp) -> String {
        let seconds = max(0, (now.millisecondsSince1970 - Timestamp(start).millisecondsSince1970) / 1000)
        if seconds < 60 { return "\(seconds) s" }
        if seconds < 3600 { return "\(seconds / 60) min" }
        if seconds < 86400 { return "\(seconds / 3600) h \(seconds % 3600 / 60) min" }
        return "\(seconds / 86400) days \(seconds % 86400 / 3600) h"
    }

    static func json(
        status: AgentStatus?, running: Bool, sensors: Int, counts: [String: Int], cluster: ClusterView? = nil
    ) -> String {
        var writer = JSONWriter()
        var first = true
        writer.raw("{")
        writer.key("running", first: &first)
        writer.bool(running)
        writer.key("pid", first: &first)
        if let status { writer.number(Int(status.pid)) } else { writer.raw("null") }
        writer.key("broker", first: &first)
        if let broker = status?.broker, !broker.isEmpty { writer.string(broker) } else { writer.raw("null") }
        writer.key("connected", first: &first)
        writer.bool(running && status?.connected == true)
        writer.key("sensors", first: &first)
        writer.number(sensors)
        for key in ["reporting", "offline", "waiting"] {
            writer.key(key, first: &first)
            writer.number(counts[key] ?? 0)
        }
        writer.key("messages", first: &first)
        writer.number(status?.counters.messages ?? 0)
        writer.key("changes", first: &first)
        writer.number(status?.counters.changes ?? 0)
        writer.key("rejected", first: &first)
        var inner = true
        writer.raw("{")
        for (reason, count) in (status?.counters.rejected ?? [:]).sorted(by: { $0.key < $1.key }) {
            writer.key(reason, first: &inner)
            writer.number(count)
        }
        writer.raw("}")
        if let line = status?.counters.sds011 {
            writer.key("sds011", first: &first)
            writer.raw("{")
            inner = true
            writer.key("skippedBytes", first: &inner)
            writer.number(line.discardedBytes)
            writer.key("badChecksums", first: &inner)
            writer.number(line.badChecksums)
            writer.raw("}")
        }
        if let feeds = status?.counters.feeds {
            writer.key("feeds", first: &first)
            writer.raw("{")
            inner = true
            for (feed, counts) in feeds.sorted(by: { $0.key < $1.key }) {
                writer.key(feed, first: &inner)
                var member = true
                writer.raw("{")
                for (key, value) in [
                    ("polls", counts.polls), ("notModified", counts.notModified), ("published", counts.published),
                    ("repeated", counts.repeated), ("older", counts.older), ("rejected", counts.rejected),
                    ("failures", counts.failures),
                ] {
                    writer.key(key, first: &member)
                    writer.number(value)
                }
                writer.key("lastProblem", first: &member)
                if let problem = counts.lastProblem { writer.string(problem) } else { writer.raw("null") }
                writer.raw("}")
            }
            writer.raw("}")
        }
        if let temis = status?.counters.temis {
            writer.key("temis", first: &first)
            writer.raw("{")
            inner = true
            for (key, value) in [("fetches", temis.fetches), ("failures", temis.failures)] {
                writer.key(key, first: &inner)
                writer.number(value)
            }
            let fetched = temis.lastGoodFetch.map { Timestamp($0).iso8601 }
            for (key, value) in [("lastError", temis.lastError), ("lastGoodFetch", fetched)] {
                writer.key(key, first: &inner)
                if let value { writer.string(value) } else { writer.raw("null") }
            }
            writer.raw("}")
        }
        for (name, queue) in [("history", status?.counters.history), ("remote", status?.counters.remote)] {
            guard let remote = queue else { continue }
            writer.key(name, first: &first)
            writer.raw("{")
            inner = true
            writer.key("connected", first: &inner)
            writer.bool(remote.connected)
            writer.key("postgis", first: &inner)
            writer.bool(remote.postgis)
            for (key, value) in [
                ("queued", remote.queued), ("held", remote.held), ("sent", remote.sent), ("failures", remote.failures),
                ("rejected", remote.rejected), ("unreadable", remote.unreadable),
            ] {
                writer.key(key, first: &inner)
                writer.number(value)
            }
            writer.key("lastError", first: &inner)
            if let error = remote.lastError { writer.string(error) } else { writer.raw("null") }
            writer.raw("}")
        }
        cluster?.write(into: &writer, first: &first)
        writer.key("lastError", first: &first)
        if let message = status?.lastError?.message { writer.string(message) } else { writer.raw("null") }
        writer.raw("}")
        return String(decoding: writer.bytes, as: UTF8.self)
    }
}
