import Dispatch
import HubSupport
import Logging

/// The registry in `defaults.json`: `DefaultsStore`'s file, as a `RegistryStore`. A type of its own rather than a
/// conformance of `DefaultsStore`, whose synchronous methods (tests, hubctl's completion) would otherwise share
/// names with these and be passed over for them in every async context.
public struct FileRegistry: RegistryStore {
    /// Where the file work runs: it blocks (flock, fsync), and must not do so on one of Swift's cooperative threads,
    /// of which a 2-core machine has two (measured when the store writer did: a 230 ms p99 at 1k msg/s). Concurrent:
    /// writers take turns through flock already, and a reader (the HTTP API) must not wait behind a flush that
    /// rewrites a large registry, since a rename makes every read whole anyway.
    private static let files = DispatchQueue(label: "sensorhub.registry-file", attributes: .concurrent)

    public let file: DefaultsStore

    public init(_ file: DefaultsStore) {
        self.file = file
    }

    public var location: String { file.path }

    public func read() async throws(StoreError) -> DefaultsDocument {
        try await Self.files.run { [file] () throws(StoreError) in try file.read() }
    }

    public func read(ifChangedFrom known: RegistryVersion?) async throws(StoreError) -> (
        version: RegistryVersion?, document: DefaultsDocument?
    ) {
        let identity: DefaultsStore.FileIdentity?
        if case .file(let known) = known?.value { identity = known } else { identity = nil }
        let (read, document) = try await Self.files.run { [file] () throws(StoreError) in
            try file.read(ifChangedFrom: identity)
        }
        return (read.map(RegistryVersion.init(file:)), document)
    }

    public func update<Result: Sendable>(
        _ change: @escaping @Sendable (inout DefaultsDocument) throws(RegistryError) -> Result,
        beforeReplacing: @escaping @Sendable (_ read: RegistryVersion?, _ written: RegistryVersion) -> Void
    ) async throws(StoreError) -> Result {
        try await Self.files.run { [file] () throws(StoreError) in
            try file.update(change) { read, written in
                beforeReplacing(read.map(RegistryVersion.init(file:)), RegistryVersion(file: written))
            }
        }
    }

    /// Appended to the status log (`DefaultsStore+StatusLog.swift`): the document is not read or written, unless
    /// the log has outgrown it. On the background thread: the journal holds the statuses until they are here, and
    /// folding the log in must not take a core from the notifications.
    public func recordStatuses(
        _ updates: [SensorStatusUpdate], durable: Bool,
        beforeReplacing: @escaping @Sendable (_ read: RegistryVersion?, _ written: RegistryVersion) -> Void
    ) async throws(StoreError) {
        try await BackgroundThread.shared.run { [file] () throws(StoreError) in
            try file.record(updates, sync: durable) { read, written in
                beforeReplacing(read.map(RegistryVersion.init(file:)), RegistryVersion(file: written))
            }
        }
    }

    public func foldStatusesInMemory() async throws(StoreError) {
        try await BackgroundThread.shared.run { [file] () throws(StoreError) in try file.foldStatusLogInMemory() }
    }

    public func syncStatuses() async throws(StoreError) {
        try await BackgroundThread.shared.run { [file] () throws(StoreError) in try file.syncStatusLog() }
    }

    /// A file is not held open between calls.
    public func close() async {}

    public func version() async -> RegistryVersion? {
        file.identity().map(RegistryVersion.init(file:))
    }

    /// inotify on the state directory (the file is replaced by rename), or a stat() every second without it.
    public func changes(logger: Logger) -> AsyncStream<Void> {
        RegistryWatcher.changes(of: file.path, logger: logger)
    }
}

extension StateDirectory {
    /// The state directory's registry file, as a `RegistryStore`.
    public var registry: FileRegistry { FileRegistry(store) }
}

extension DispatchQueue {
    /// `run`, for work that throws.
    fileprivate func run<T: Sendable, Failure: Error>(_ body: @escaping @Sendable () throws(Failure) -> T)
        async throws(Failure) -> T
    {
        try await run { Result(catching: body) }.get()
    }
}
