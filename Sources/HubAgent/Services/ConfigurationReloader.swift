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
    /// The file as last read (`nil`: not known, as when a test makes the hub): what a reload compares the keys read
    /// at start only with.
    private let currentFile: Locked<ConfigNode?>
    private let ingest: Ingest
    private let router: NotificationRouter
    private let errors: ErrorRecorder
    private let notifier: SystemdNotifier
    private let logger: Logger

    init(
        option: String?, current: Locked<HubConfiguration>, file: ConfigNode?, ingest: Ingest,
        router: NotificationRouter, errors: ErrorRecorder, notifier: SystemdNotifier, logger: Logger
    ) {
        self.option = option
        self.current = current
        self.currentFile = Locked(file)
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
        let file: ConfigNode
        do {
            (new, notifiers, file) = try HubdCommand.readConfiguration(option: option)
        } catch {
            errors.record("configuration not reloaded, the running one stays: \(error)")
            return
        }
        current.withLock { $0 = new }
        let oldFile = currentFile.withLock { current in
            defer { current = file }
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
        // What the reference marks as read at start (`ConfigKey.restart`), as the file and the environment say it.
        let later = ConfigReference.restartPaths(HubConfiguration.referenceSections).filter { path in
            oldFile.map { $0[path: path].fingerprint != file[path: path].fingerprint } ?? false
        }
        var metadata: Logger.Metadata = [
            "backends_added": "\(changes.added.joined(separator: ", "))",
            "backends_changed": "\(changes.changed.joined(separator: ", "))",
            "backends_removed": "\(changes.removed.joined(separator: ", "))", "rules": "\(notifiers.rules.count)",
        ]
        if !later.isEmpty { metadata["applies_after_restart"] = "\(later.joined(separator: ", "))" }
        logger.notice("configuration reloaded", metadata: metadata)
    }
}
