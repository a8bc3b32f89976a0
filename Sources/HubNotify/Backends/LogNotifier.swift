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

extension LogNotifier {
    struct Settings: BackendSettings {
        static let type = "log"
        static let summary = "A structured line in hubd's log (the journal, under systemd) for each notification."
        static let keys = [
            ConfigKey(
                "level", "one of: trace, debug, info, notice, warning, error, critical", default: "notice",
                "The log level of the lines.")
        ]
        var level: Logger.Level

        init(_ node: ConfigNode) throws(ConfigurationError) {
            level =
                try node["level"].value("trace, debug, info, notice, warning, error or critical") {
                    Logger.Level(rawValue: $0.lowercased())
                } ?? .notice
        }

        func makeNotifier(_ context: BackendContext) -> any Notifier {
            var logger = context.logger
            logger[metadataKey: "backend"] = "\(context.name)"
            return LogNotifier(logger: logger, level: level)
        }
    }
}
