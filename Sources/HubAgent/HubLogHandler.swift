import Logging
import Synchronization

/// Logs to standard error at a level SIGHUP can change (a reloaded `log.level` applies to every logger).
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
        inner.log(event: event)
    }
}

extension Logger.Level {
    var index: UInt8 { UInt8(Self.allCases.firstIndex(of: self)!) }
}
