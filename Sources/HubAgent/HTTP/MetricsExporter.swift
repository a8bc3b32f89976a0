import Foundation
import HubCore
import HubSupport
import Prometheus

/// `/metrics`: the hub's counters in Prometheus text, through swift-prometheus's registry (hubd also bootstraps
/// swift-metrics with it, so libraries' metrics land there too).
///
/// The hot path keeps its own plain counters; a scrape brings the Prometheus counters up to them by the
/// difference, so counting costs nothing per message.
final class MetricsExporter: Sendable {
    let registry: PrometheusCollectorRegistry
    private let exported = Locked<[String: Int]>([:])

    init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()) {
        self.registry = registry
    }

    func render(_ snapshot: HubSnapshot) -> [UInt8] {
        let counters = snapshot.counters
        let notifications = snapshot.notifications
        var totals: [(name: String, labels: [(String, String)], help: String, value: Int)] = [
            ("sensorhub_messages_total", [], "MQTT messages received on sensor topics", counters.messages),
            (
                "sensorhub_status_changes_total", [], "Sensor events: new statuses, silences, recoveries, alerts",
                counters.changes
            ),
            ("sensorhub_reconnects_total", [], "Reconnections to the MQTT broker", counters.reconnects),
            ("sensorhub_store_writes_total", [], "Writes of the registry", counters.storeWrites),
            (
                "sensorhub_notifications_suppressed_total", [], "Notifications held back by rate limits",
                notifications.router.suppressed
            ),
            ("sensorhub_alert_messages_total", [], "Messages the alert stage sent", notifications.alerts.messages),
            (
                "sensorhub_alert_outages_total", [], "Outage messages of the storm guard (many groups in one)",
                notifications.alerts.outages
            ),
            (
                "sensorhub_alerts_flapped_total", [], "Alerts that closed before anything was sent (within group_wait)",
                notifications.alerts.flapped
            ),
            (
                "sensorhub_alerts_silenced_total", [], "Alerts and notifications held back by a silence",
                notifications.alerts.silenced
            ),
            (
                "sensorhub_alert_book_resets_total", [],
                "Times the alert book was begun again because alerts.json was lost or unreadable",
                notifications.alerts.resets
            ),
        ]
        for (state, count) in [
            ("firing", notifications.alerts.firing), ("acknowledged", notifications.alerts.acknowledged),
            ("held", notifications.alerts.held),
        ] {
            registry.makeGauge(
                name: "sensorhub_alerts", labels: [("state", state)],
                help: "Open alerts: firing (not acknowledged), acknowledged, held by an offline parent"
            ).set(Double(count))
        }
        registry.makeGauge(name: "sensorhub_silences_active", help: "Silences in force")
            .set(Double(notifications.alerts.silences))
        if let journal = counters.journal {
            totals += [
                (
                    "sensorhub_journal_records_total", [], "Statuses and their events written to the journal",
                    journal.records
                ),
                ("sensorhub_journal_commits_total", [], "Journal batches written and flushed to disk", journal.commits),
                ("sensorhub_journal_errors_total", [], "Journal writes that failed", journal.errors),
            ]
            registry.makeGauge(
                name: "sensorhub_journal_longest_wait_seconds",
                help: "The longest a status waited for the journal's fsync since start"
            ).set(journal.longestWait)
            for (consumer, waiting) in journal.unacknowledged ?? [:] {
                registry.makeGauge(
                    name: "sensorhub_journal_unacknowledged", labels: [("consumer", consumer)],
                    help: "Durable statuses a consumer (store, router, history) has not yet made durable itself"
                ).set(Double(waiting))
            }
        }
        if let line = counters.sds011 {
            totals.append(
                (
                    "sensorhub_sds011_skipped_bytes_total", [],
                    "Bytes on the SDS011's serial line that were not frames (noise, cut short, bad checksum)",
                    line.discardedBytes
                ))
            totals.append(
                (
                    "sensorhub_sds011_bad_checksums_total", [], "SDS011 frames whose checksum did not match",
                    line.badChecksums
                ))
        }
        for (feed, counts) in (counters.feeds ?? [:]).sorted(by: { $0.key < $1.key }) {
            let label = [("feed", feed)]
            totals += [
                ("sensorhub_feed_polls_total", label, "Polls of a regional air-quality feed", counts.polls),
                (
                    "sensorhub_feed_not_modified_total", label, "Feed polls answered 304 Not Modified",
                    counts.notModified
                ),
                (
                    "sensorhub_feed_published_total", label, "Feed readings published (a new region and time)",
                    counts.published
                ),
                (
                    "sensorhub_feed_skipped_total", label + [("reason", "repeated")],
                    "Feed readings not published again", counts.repeated
                ),
                (
                    "sensorhub_feed_skipped_total", label + [("reason", "older")], "Feed readings not published again",
                    counts.older
                ),
                (
                    "sensorhub_feed_rejected_total", label, "Feed readings refused (missing region, absurd value…)",
                    counts.rejected
                ),
                (
                    "sensorhub_feed_failures_total", label,
                    "Feed polls that failed (HTTP error, timeout, bad document)", counts.failures
                ),
            ]
        }
        if let temis = counters.temis {
            totals += [
                ("sensorhub_uv_temis_fetches_total", [], "Fetches of the TEMIS page by the UV source", temis.fetches),
                (
                    "sensorhub_uv_temis_failures_total", [],
                    "TEMIS page fetches that failed (HTTP error, timeout, unreadable page)", temis.failures
                ),
            ]
        }
        if let discovery = counters.discovery {
            totals += [
                ("sensorhub_discovered_sensors_total", [], "Sensors discovery added", discovery.added),
                (
                    "sensorhub_discovery_over_limit_total", [],
                    "Devices discovery did not add because max_auto_sensors were reached", discovery.overLimit
                ),
            ]
        }
        for (name, what, queue) in Self.databaseQueues(counters) {
            totals += [
                ("sensorhub_\(name)_sent_total", [], "Readings and events \(what) committed", queue.sent),
                (
                    "sensorhub_\(name)_failures_total", [],
                    "Attempts to reach or write \(what) that failed", queue.failures
                ),
                (
                    "sensorhub_\(name)_rejected_total", [],
                    "Entries \(what) refused three times, set aside in \(name)-rejected.jsonl", queue.rejected
                ),
            ]
        }
        for (reason, count) in counters.rejected {
            totals.append(
                (
                    "sensorhub_rejected_messages_total", [("reason", reason)], "Messages that did not become a status",
                    count
                ))
        }
        for (backend, statistics) in notifications.backends {
            for (outcome, value) in [
                ("delivered", statistics.delivered), ("retried", statistics.retried), ("failed", statistics.failed),
                ("dropped", statistics.dropped),
            ] {
                totals.append(
                    (
                        "sensorhub_notifications_total", [("backend", backend), ("outcome", outcome)],
                        "Notification attempts by backend and outcome", value
                    ))
            }
        }
        for total in totals {
            let key = total.name + total.labels.map { "\($0.0)=\($0.1)" }.joined(separator: ",")
            let delta = exported.withLock { exported -> Int in
                defer { exported[key] = total.value }
                return total.value - (exported[key] ?? 0)
            }
            let counter = registry.makeCounter(name: total.name, labels: total.labels, help: total.help)
            if delta > 0 { counter.increment(by: Int64(delta)) }
        }
        registry.makeGauge(name: "sensorhub_sensors", help: "Sensors in the registry").set(
            Double(snapshot.sensorCount))
        registry.makeGauge(name: "sensorhub_broker_connected", help: "1 while connected to the MQTT broker").set(
            snapshot.connection.connected ? 1.0 : 0.0)
        registry.makeGauge(name: "sensorhub_outbox_pending", help: "Notifications in the outbox, not yet delivered")
            .set(Double(notifications.outboxPending))
        for (backend, statistics) in notifications.backends {
            registry.makeGauge(
                name: "sensorhub_notification_queue_depth", labels: [("backend", backend)],
                help: "Notifications waiting or retrying per backend"
            ).set(Double(statistics.queued))
        }
        for (name, what, queue) in Self.databaseQueues(counters) {
            registry.makeGauge(
                name: "sensorhub_\(name)_queued", help: "Readings and events queued for \(what), not yet in it"
            ).set(Double(queue.queued))
            registry.makeGauge(
                name: "sensorhub_\(name)_held", help: "Queued entries of recording sessions not ended yet (record mode)"
            ).set(Double(queue.held))
            registry.makeGauge(
                name: "sensorhub_\(name)_connected", help: "1 while the last attempt reached \(what)"
            ).set(queue.connected ? 1.0 : 0.0)
        }
        if let fetched = snapshot.counters.temis?.lastGoodFetch {
            registry.makeGauge(
                name: "sensorhub_uv_temis_last_good_fetch_seconds",
                help: "When the TEMIS page in use was fetched, seconds since 1970"
            ).set(fetched.timeIntervalSince1970)
        }
        for snapshot in snapshot.air {
            if let pm25 = snapshot.reading?.pm25 {
                registry.makeGauge(
                    name: "sensorhub_pm25_ugm3", labels: [("sensor", snapshot.sensor)], help: "Latest PM2.5, µg/m³"
                )
                .set(pm25)
            }
            if let pm10 = snapshot.reading?.pm10 {
                registry.makeGauge(
                    name: "sensorhub_pm10_ugm3", labels: [("sensor", snapshot.sensor)], help: "Latest PM10, µg/m³"
                )
                .set(pm10)
            }
        }
        return registry.emitToBuffer()
    }

    /// The queues that feed a PostgreSQL database, with their metrics' name and what they feed: `remote:`'s, and
    /// with `store:` the history's.
    static func databaseQueues(_ counters: AgentStatus.Counters) -> [(String, String, AgentStatus.RemoteCounters)] {
        [("history", "the store's database", counters.history), ("remote", "the remote database", counters.remote)]
            .compactMap { name, what, queue in queue.map { (name, what, $0) } }
    }
}
