import Foundation
import HubCore
import HubSupport
import Logging
import Mosquitto
import ServiceLifecycle

/// `homeassistant:`: keeps Home Assistant's view of the hub right. Every sensor's uniform state and availability
/// are published, retained, whenever the journal has a change of it; its discovery configs whenever the registry
/// changes (a rename updates them in place, a removal empties them), and all of it again after every connection
/// and when Home Assistant announces its start on `<prefix>/status`.
///
/// Retained messages are idempotent, and all of them are published again after each (re)connection: so records
/// are acknowledged to the journal as soon as they are taken, and nothing is kept on disk.
///
/// With an alert book (`alerts`), each rule that makes alerts is an entity too (`HomeAssistantPublisher+Alerts.swift`).
final class HomeAssistantPublisher: Service, JournalConsumer, TopicListener, Sendable {
    static let consumerName = "homeassistant"

    let discovery: HomeAssistantDiscovery
    private let journal: Journal
    private let publish: @Sendable (String, [UInt8]) async throws -> Void
    /// Whether this hub publishes the configs: in a cluster, only the holder of the `homeassistant` duty does; every
    /// agent publishes the states of the messages it took.
    let publishesConfigs: @Sendable () -> Bool
    let logger: Logger
    let work = Locked(Work())
    let doorbell = Doorbell()
    /// Where the alert book is; `nil`: no alert entities (a cluster's agent).
    let alertSource: AlertSource?

    struct Work {
        /// The registry's sensors with the hub's live statuses, by topic.
        var sensors: [String: Sensor] = [:]
        /// Config topics and payloads last published, by sensor id.
        var published: [String: [String: [UInt8]]] = [:]
        /// Availability last published, by sensor id.
        var availability: [String: [UInt8]] = [:]
        var statesDue: Set<String> = []
        var configsDue = false
        var everythingDue = false
        var connected = false
        /// After a failed publish: when to try again (everything), whether or not a new client came meanwhile, and
        /// how many attempts in a row failed (the wait doubles, 1 s to 30 s).
        var retry: ContinuousClock.Instant?
        var failures = 0
        /// Whether the configs were this hub's to publish at the last flush.
        var publishedConfigs = false
        var alerts = AlertWork()
    }

    init(
        discovery: HomeAssistantDiscovery, journal: Journal,
        publish: @escaping @Sendable (String, [UInt8]) async throws -> Void,
        publishesConfigs: @escaping @Sendable () -> Bool = { true }, alerts: AlertSource? = nil, logger: Logger
    ) {
        self.discovery = discovery
        self.journal = journal
        self.publish = publish
        self.publishesConfigs = publishesConfigs
        self.alertSource = alerts
        self.logger = logger
    }

    var filters: [[String]] { [[discovery.birthTopic]] + (alertSource == nil ? [] : [discovery.alertFilters]) }

    /// Home Assistant's birth message: it has (re)started and wants every config again.
    func offer(topic: String, payload: [UInt8], retained: Bool) -> Bool {
        guard topic == discovery.birthTopic else {
            return offerAlerts(topic: topic, payload: payload, retained: retained)
        }
        if !retained, String(decoding: payload, as: UTF8.self) == "online" {
            work.withLock { $0.everythingDue = true }
            doorbell.ring()
        }
        return true
    }

    /// The registry as the subscriptions service followed it; `newClient` after each connection.
    func followed(_ document: DefaultsDocument, newClient: Bool) {
        work.withLock { work in
            var sensors: [String: Sensor] = [:]
            sensors.reserveCapacity(document.sensors.count)
            for var sensor in document.sensors {
                // The store lags the journal by a flush interval: keep the newer live state.
                if let live = work.sensors[sensor.topic], live.id == sensor.id, live.sequence >= sensor.sequence {
                    (sensor.status, sensor.lastUpdated, sensor.attributes, sensor.alerts, sensor.sequence) = (
                        live.status, live.lastUpdated, live.attributes, live.alerts, live.sequence
                    )
                }
                sensors[sensor.topic] = sensor
            }
            work.sensors = sensors
            work.configsDue = true
            if newClient {
                work.connected = true
                work.everythingDue = true
                work.retry = nil
            }
        }
        doorbell.ring()
    }

    /// Takes records as they are written, as the router does, not after the journal's put-off `fsync`
    /// (`sensors.sync_delay`, 10 s): a door Home Assistant sees open 10 s late is a light that comes on 10 s late. A
    /// power cut before that `fsync` leaves the messages unacknowledged, so the broker sends them again and they
    /// become the same states; and everything is published again at each connection, so acknowledging at once loses
    /// nothing.
    var takesWrittenRecords: Bool { true }

    func accept(_ records: [JournalRecord], through position: Int) {
        work.withLock { work in
            for record in records {
                guard var sensor = work.sensors[record.topic], sensor.id == record.sensorID else { continue }
                sensor.status = record.status
                sensor.lastUpdated = record.lastUpdated
                sensor.attributes = record.attributes
                sensor.alerts = record.alerts
                sensor.sequence = record.sequence
                work.sensors[record.topic] = sensor
                work.statesDue.insert(record.topic)
            }
        }
        journal.acknowledge(Self.consumerName, through: position)
        doorbell.ring()
    }

    /// Until shutdown, which needs nothing flushed (all of it goes again on the next connection): so it stops at once
    /// rather than at the end of a 5 s wait.
    func run() async {
        // The book watched from here, before its first read (a change in between would wait for the next one).
        let bookChanges = alertSource?.changes()
        await cancelWhenGracefulShutdown {
            await withTaskGroup(of: Void.self) { group in
                if let bookChanges { group.addTask { await self.watchBook(bookChanges) } }
                while !Task.isCancelled {
                    let (book, retry) = self.work.withLock { ($0.alerts.deadline, $0.retry) }
                    let later = ContinuousClock.now + .seconds(5)
                    await self.doorbell.wait(until: min(later, book ?? later, retry ?? later))
                    guard !Task.isCancelled else { break }
                    await self.flush()
                }
                group.cancelAll()
            }
        }
    }

    /// Publishes what is due; on a failure (not connected), everything is due again on the next connection, or
    /// after a back-off: a client is handed over before the connection says it is ready (in a cluster, after its
    /// first share of partitions), and a flush in between used to leave the publisher silent until the next
    /// reconnection (ClusterAlertTests, 2 runs of 5).
    private func flush() async {
        let configs = publishesConfigs()
        if configs, let alertSource { await refreshAlerts(alertSource) }
        let messages = work.withLock { work -> [HomeAssistantDiscovery.Message] in
            if !work.connected, let retry = work.retry, ContinuousClock.now >= retry {
                work.connected = true
                work.retry = nil
            }
            guard work.connected else { return [] }
            // Just given the duty: everything, in case the agent that had it did not get to publish it all.
            if configs && !work.publishedConfigs { work.everythingDue = true }
            work.publishedConfigs = configs
            return Self.due(&work, discovery, configs: configs)
        }
        guard !messages.isEmpty else { return }
        // The hub's own device alone and first, acknowledged before the rest go: Home Assistant links a sensor's
        // device to the hub (via_device) only when it has the hub's already, and concurrent publishes reached the
        // broker in any order (the hub's was 9th of 10 in one of the runs that left sensors unlinked).
        let hubTopic = discovery.hubConfig.topic
        let first = messages.first?.topic == hubTopic ? messages.first : nil
        do {
            if let first { try await publish(first.topic, first.payload) }
            try await withThrowingTaskGroup(of: Void.self) { group in
                // A few in flight at a time: one round trip each would make a large registry slow to announce.
                var inFlight = 0
                for message in messages.dropFirst(first == nil ? 0 : 1) {
                    if inFlight == 64 {
                        try await group.next()
                        inFlight -= 1
                    }
                    group.addTask { try await self.publish(message.topic, message.payload) }
                    inFlight += 1
                }
                try await group.waitForAll()
            }
            logger.debug("published for Home Assistant", metadata: ["messages": "\(messages.count)"])
            work.withLock { $0.failures = 0 }
        } catch {
            work.withLock {
                $0.connected = false
                $0.everythingDue = true
                $0.failures += 1
                $0.retry = .now + min(.seconds(30), .seconds(1) * (1 << min($0.failures - 1, 5)))
            }
            guard !Task.isCancelled else { return }
            logger.notice(
                "could not publish for Home Assistant; all of it goes again on the next connection or attempt",
                metadata: ["error": "\(error)"])
        }
    }

    /// What `work` says must be published now, which it then counts as published.
    /// Without `configs`, only states: the configs stay due for when they are this hub's to publish.
    static func due(_ work: inout Work, _ discovery: HomeAssistantDiscovery, configs: Bool = true)
        -> [HomeAssistantDiscovery.Message]
    {
        var messages: [HomeAssistantDiscovery.Message] = []
        let everything = work.everythingDue && configs
        if configs && (everything || work.configsDue) {
            if everything { messages.append(discovery.hubConfig) }
            var seen = Set<String>()
            for sensor in work.sensors.values {
                seen.insert(sensor.id)
                let configs = discovery.configs(for: sensor)
                let before = work.published[sensor.id] ?? [:]
                var now: [String: [UInt8]] = [:]
                for config in configs {
                    now[config.topic] = config.payload
                    if everything || before[config.topic] != config.payload { messages.append(config) }
                }
                // A kind changed: the entities it no longer has are removed.
                for topic in before.keys where now[topic] == nil {
                    messages.append(.init(topic: topic, payload: []))
                }
                if before.isEmpty || everything { work.statesDue.insert(sensor.topic) }
                work.published[sensor.id] = now
            }
            // Removed sensors: their configs emptied, which removes the entities.
            for (id, topics) in work.published where !seen.contains(id) {
                messages += topics.keys.map { .init(topic: $0, payload: []) }
                work.published[id] = nil
                work.availability[id] = nil
            }
        }
        for topic in work.statesDue {
            guard let sensor = work.sensors[topic] else { continue }
            messages.append(
                .init(topic: discovery.stateTopic(sensor), payload: HomeAssistantDiscovery.state(of: sensor)))
            let availability = HomeAssistantDiscovery.availability(of: sensor)
            if everything || work.availability[sensor.id] != availability {
                messages.append(.init(topic: discovery.availabilityTopic(sensor), payload: availability))
                work.availability[sensor.id] = availability
            }
        }
        work.statesDue = []
        if configs {
            messages += work.alerts.due(discovery, everything: everything)
            work.configsDue = false
            work.everythingDue = false
        }
        return messages
    }
}
