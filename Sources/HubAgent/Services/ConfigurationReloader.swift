import Foundation
import HubCore
import HubNotify
import HubSupport
import Logging
import ServiceLifecycle
import UnixSignals

/// SIGHUP: reads `hubd.yaml` again, the `notifiers` section too, and applies what can change while running (log
/// level, silence timeout, status length, history retention, topic template, rules and backends). An invalid file
/// is refused and the running configuration kept; keys that only apply at start are named in the log.
final class ConfigurationReloader: Service, Sendable {
    private let option: String?
    private let current: Locked<HubConfiguration>
    private let ingest: Ingest
    private let router: NotificationRouter
    private let errors: ErrorRecorder
    private let notifier: SystemdNotifier
    private let logger: Logger

    init(
        option: String?, current: Locked<HubConfiguration>, ingest: Ingest, router: NotificationRouter,
        errors: ErrorRecorder, notifier: SystemdNotifier, logger: Logger
    ) {
        self.option = option
        self.current = current
        self.ingest = ingest
        self.router = router
        self.errors = errors
        self.notifier = notifier
        self.logger = logger
    }

    func run() async {
        let signals = await UnixSignalsSequence(trapping: .sighup)
        for await _ in signals.cancelOnGracefulShutdown() {
            notifier.reloading()
            reload()
            notifier.ready("Reloaded")
        }
    }

    /// Reads the file and applies it; refused as a whole when any of it is invalid.
    func reload() {
        let new: HubConfiguration
        let notifiers: NotifierConfiguration
        do {
            (new, notifiers) = try HubdCommand.readConfiguration(option: option)
        } catch {
            errors.record("configuration not reloaded, the running one stays: \(error)")
            return
        }
        let old = current.withLock { current in
            defer { current = new }
            return current
        }
        if let level = Logger.Level(rawValue: new.logLevel) {
            HubLogHandler.level.store(level.index, ordering: .relaxed)
        }
        ingest.apply(new)
        let changes: NotificationRouter.Reconfiguration
        do {
            changes = try router.reconfigure(notifiers)
        } catch {
            errors.record("the notifiers were not reloaded, the running ones stay: \(error)")
            return
        }
        var later: [String] = []
        if new.qos != old.qos { later.append("sensors.qos") }
        if new.stateDirectory != old.stateDirectory { later.append("state.directory") }
        if new.flushInterval != old.flushInterval { later.append("store.flush_interval") }
        if new.availabilityTopic != old.availabilityTopic { later.append("hub.availability_topic") }
        if new.sds011 != old.sds011 { later.append("sds011") }
        if new.discovery != old.discovery { later.append("discovery") }
        if new.homeAssistant != old.homeAssistant { later.append("homeassistant") }
        if new.remote != old.remote { later.append("remote") }
        if new.store != old.store { later.append("store") }
        if new.cluster != old.cluster { later.append("cluster") }
        if new.httpListen != old.httpListen || new.httpToken != old.httpToken { later.append("http") }
        var metadata: Logger.Metadata = [
            "backends_added": "\(changes.added.joined(separator: ", "))",
            "backends_changed": "\(changes.changed.joined(separator: ", "))",
            "backends_removed": "\(changes.removed.joined(separator: ", "))", "rules": "\(notifiers.rules.count)",
        ]
        if !later.isEmpty { metadata["applies_after_restart"] = "\(later.joined(separator: ", "))" }
        logger.notice("configuration reloaded", metadata: metadata)
    }
}
