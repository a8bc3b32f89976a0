import HubSupport
import Logging
import Synchronization

/// Logs to standard error at a level SIGHUP can change (a reloaded `log.level` applies to every logger).
///
/// Messages and metadata are escaped (`UnsafeText`): a topic, a status or a receiver's answer with a line break or
/// an escape sequence in it can neither forge a log line nor act on the terminal that shows the log.
struct HubLogHandler: LogHandler {
    static let level = Atomic<UInt8>(Logger.Level.info.index)

    private var inner: StreamLogHandler

    init(label: String) {
        inner = StreamLogHandler.standardError(label: label)
    }

    var logLevel: Logger.Level {
        get { Logger.Level.allCases[Int(Self.level.load(ordering: .relaxed))] }
        set { Self.level.store(newValue.index, ordering: .relaxed) }
    }

    var metadata: Logger.Metadata {
        get { inner.metadata }
        set { inner.metadata = newValue }
    }

    var metadataProvider: Logger.MetadataProvider? {
        get { inner.metadataProvider }
        set { inner.metadataProvider = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { inner[metadataKey: key] }
        set { inner[metadataKey: key] = newValue }
    }

    func log(event: LogEvent) {
        var event = event
        event.message = "\(UnsafeText.escaped(event.message.description))"
        event.metadata = event.metadata?.mapValues(Self.escaped)
        inner.log(event: event)
    }

    static func escaped(_ value: Logger.MetadataValue) -> Logger.MetadataValue {
        switch value {
        case .string(let text): .string(UnsafeText.escaped(text))
        case .stringConvertible(let value): .string(UnsafeText.escaped(value.description))
        case .dictionary(let values): .dictionary(values.mapValues(escaped))
        case .array(let values): .array(values.map(escaped))
        }
    }
}

extension Logger.Level {
    var index: UInt8 { UInt8(Self.allCases.firstIndex(of: self)!) }
}
