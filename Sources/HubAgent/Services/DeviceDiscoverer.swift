import Dispatch
import Foundation
import HubCore
import HubSupport
import Logging
import ServiceLifecycle

/// hubd's `discovery:`: adds a sensor for each new device it hears, as `hubctl discover --add` would, logs it and
/// announces it as a `discovered` event through the journal, so notifiers get it.
///
/// Ingest hands it the messages on topics no sensor uses (`offer`, cheap: a device known already costs a lookup);
/// the subscriptions service subscribes to its filters. The store is changed under its lock, like hubctl does, and
/// the hub then follows the registry as it does any change. At most `max_auto_sensors` are ever added: what was
/// added is kept in `discovered.json` in the state directory, so a restart does not start the count again and a
/// sensor the user removed is not added back.
final class DeviceDiscoverer: Service, TopicListener, Sendable {
    static let ledgerName = "discovered.json"

    let listFilters: [String]
    let stateFilters: [String]
    private let discovery: Locked<DeviceDiscovery>
    private let found: AsyncStream<DiscoveredDevice>
    private let foundSink: AsyncStream<DiscoveredDevice>.Continuation
    private let ledger: Locked<Ledger>
    private let maximum: Int
    private let counters = Locked(AgentStatus.DiscoveryCounters())
    private let store: any RegistryStore
    /// The state directory, where the ledger is written under the registry file's lock.
    private let stateFiles: DefaultsStore
    private let addsDevices: @Sendable () -> Bool
    private let journal: Journal
    private let files = DispatchQueue(label: "sensorhub.discovery")
    private let errors: ErrorRecorder
    private let logger: Logger

    /// The topics of the sensors discovery added, in `discovered.json`, in order.
    struct Ledger: Sendable {
        var topics: [String] = []
        var known: Set<String> = []
        var capLogged = false
    }

    init(
        settings: DiscoverySettings, state: StateDirectory, store: any RegistryStore, journal: Journal,
        addsDevices: @escaping @Sendable () -> Bool = { true }, errors: ErrorRecorder, logger: Logger
    ) {
        self.addsDevices = addsDevices
        var discovery = DeviceDiscovery(families: settings.families, zigbee2mqttBases: settings.zigbee2mqttBases)
        discovery.tracksValues = false
        listFilters = discovery.listFilters
        stateFilters = discovery.stateFilters
        self.discovery = Locked(discovery)
        (found, foundSink) = AsyncStream.makeStream(of: DiscoveredDevice.self)
        ledger = Locked(Self.readLedger(state.path + "/" + Self.ledgerName, logger: logger))
        maximum = settings.maximumAutoSensors
        self.store = store
        stateFiles = state.store
        self.journal = journal
        self.errors = errors
        self.logger = logger
    }

    /// Takes a message on a topic no sensor uses; returns whether it is one of discovery's topics (else it is not
    /// for the hub at all). A new device is handed to `run()`, which adds it.
    func offer(topic: String, payload: [UInt8], retained: Bool) -> Bool {
        let (listens, new) = discovery.withLock { discovery in
            discovery.listens(to: topic)
                ? (true, discovery.take(topic: topic, payload: payload, retained: retained)) : (false, [])
        }
        for device in new { foundSink.yield(device) }
        return listens
    }

    /// Device lists first, in a subscription of their own: Mosquitto sent retained messages out of filter order
    /// when they shared one.
    var filters: [[String]] { [listFilters, stateFilters] }

    var statistics: AgentStatus.DiscoveryCounters { counters.withLock { $0 } }

    func run() async {
        logger.info(
            "discovering devices",
            metadata: [
                "filters": "\((listFilters + stateFilters).joined(separator: " "))", "max_auto_sensors": "\(maximum)",
                "added_before": "\(ledger.withLock { $0.topics.count })",
            ])
        for await device in found.cancelOnGracefulShutdown() {
            // In a cluster every agent hears the devices; the holder of the `discovery` duty adds them.
            guard addsDevices() else { continue }
            await add(device)
        }
    }

    /// Adds `device`'s sensor unless it has one, had one (removed since), or the limit is reached.
    private func add(_ device: DiscoveredDevice) async {
        let topic = device.setup.topic
        let (before, count) = ledger.withLock { ($0.known.contains(topic), $0.topics.count) }
        if before {
            logger.debug(
                "a device discovery added before, since removed, is not added again", metadata: ["topic": "\(topic)"])
            return
        }
        guard count < maximum else {
            counters.withLock { $0.overLimit += 1 }
            let first = ledger.withLock { ledger in
                defer { ledger.capLogged = true }
                return !ledger.capLogged
            }
            if first {
                logger.notice(
                    "discovery reached max_auto_sensors and adds no more sensors",
                    metadata: ["max_auto_sensors": "\(maximum)", "device": "\(device.device)", "topic": "\(topic)"])
            }
            return
        }
        let time = Timestamp.now
        let sensor: Sensor?
        do {
            sensor = try await store.update { document throws(RegistryError) -> Sensor? in
                guard document.sensor(onTopic: topic) == nil else { return nil }
                let sensor = try document.addDiscovered(device, at: time)
                // Its first event is this one: the tracker counts on from it.
                document.recordStatus(sensor.status, lastUpdated: nil, onTopic: topic, id: sensor.id, sequence: 1)
                return sensor
            }
        } catch {
            errors.record(
                "discovery could not add a sensor for \(device.family.displayName) device '\(device.device)': \(error)")
            return
        }
        guard let sensor else { return }
        await files.run { self.remember(sensor) }
        counters.withLock { $0.added += 1 }
        logger.notice(
            "discovered a device",
            metadata: [
                "family": "\(device.family)", "device": "\(device.device)", "sensor": "\(sensor.name)",
                "topic": "\(topic)", "value": "\(device.setup.format.path?.description ?? "the payload")",
                "model": "\([device.vendor, device.model].compactMap { $0 }.joined(separator: " "))",
            ])
        let event = SensorEvent(
            id: SensorEvent.id(sensor: sensor.id, sequence: 1), kind: .discovered, sensor: sensor.name, topic: topic,
            oldStatus: "", newStatus: sensor.status, time: time, value: device.summary)
        journal.append([
            JournalRecord(
                topic: topic, sensorID: sensor.id, status: sensor.status, lastUpdated: nil, sequence: 1, events: [event]
            )
        ])
    }

    // MARK: The ledger

    private func remember(_ sensor: Sensor) {
        let bytes = ledger.withLock { ledger -> [UInt8] in
            ledger.topics.append(sensor.topic)
            ledger.known.insert(sensor.topic)
            var writer = JSONWriter()
            writer.raw("{\"added\": ")
            writer.strings(ledger.topics)
            writer.raw("}\n")
            return writer.bytes
        }
        do {
            try stateFiles.replaceFile(named: Self.ledgerName, with: bytes)
        } catch {
            errors.record(
                "could not write \(Self.ledgerName) (after a restart, discovery would add '\(sensor.name)' again if it"
                    + " were removed, and count from fewer): \(error)")
        }
    }

    private static func readLedger(_ path: String, logger: Logger) -> Ledger {
        var ledger = Ledger()
        guard let data = FileManager.default.contents(atPath: path) else { return ledger }
        guard case .array(let entries)? = (try? JSONTree.parse(Array(data)))?["added"] else {
            logger.warning("\(ledgerName) can't be read: discovery counts from zero", metadata: ["path": "\(path)"])
            return ledger
        }
        for case .string(let topic) in entries where !ledger.known.contains(topic) {
            ledger.topics.append(topic)
            ledger.known.insert(topic)
        }
        return ledger
    }
}
