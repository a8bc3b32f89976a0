import Dispatch
import HubSupport
import Logging

extension DefaultsStore: RegistryStore {
    /// Where the file work runs: it blocks (flock, fsync), and must not do so on one of Swift's cooperative threads,
    /// of which a 2-core machine has two (measured when the store writer did: a 230 ms p99 at 1k msg/s).
    private static let files = DispatchQueue(label: "sensorhub.registry-file")

    public var location: String { path }

    // The async witnesses are disfavoured: where a `DefaultsStore` is used as itself (tests, the discovery ledger), its
    // synchronous methods are meant, as they were before the protocol.

    @_disfavoredOverload
    public func read() async throws(StoreError) -> DefaultsDocument {
        try await Self.files.run { () throws(StoreError) in try self.read() }
    }

    @_disfavoredOverload
    public func read(ifChangedFrom known: RegistryVersion?) async throws(StoreError) -> (
        version: RegistryVersion?, document: DefaultsDocument?
    ) {
        let identity: FileIdentity?
        if case .file(let file) = known?.value { identity = file } else { identity = nil }
        let (read, document) = try await Self.files.run { () throws(StoreError) in
            try self.read(ifChangedFrom: identity)
        }
        return (read.map(RegistryVersion.init(file:)), document)
    }

    @_disfavoredOverload
    public func update<Result: Sendable>(
        _ change: @escaping @Sendable (inout DefaultsDocument) throws(RegistryError) -> Result,
        beforeReplacing: @escaping @Sendable (_ read: RegistryVersion?, _ written: RegistryVersion) -> Void
    ) async throws(StoreError) -> Result {
        try await Self.files.run { () throws(StoreError) in
            try self.update(change) { read, written in
                beforeReplacing(read.map(RegistryVersion.init(file:)), RegistryVersion(file: written))
            }
        }
    }

    /// The whole file is read and written: a file has no other way.
    @_disfavoredOverload
    public func recordStatuses(
        onTopics topics: [String], _ change: @escaping @Sendable (inout DefaultsDocument) -> Void,
        beforeReplacing: @escaping @Sendable (_ read: RegistryVersion?, _ written: RegistryVersion) -> Void
    ) async throws(StoreError) {
        try await update({ document throws(RegistryError) in change(&document) }, beforeReplacing: beforeReplacing)
    }

    @_disfavoredOverload
    public func version() async -> RegistryVersion? {
        identity().map(RegistryVersion.init(file:))
    }

    /// inotify on the state directory (the file is replaced by rename), or a stat() every second without it.
    public func changes(logger: Logger) -> AsyncStream<Void> {
        RegistryWatcher.changes(of: path, logger: logger)
    }
}

extension DispatchQueue {
    /// `run`, for work that throws.
    fileprivate func run<T: Sendable, Failure: Error>(_ body: @escaping @Sendable () throws(Failure) -> T)
        async throws(Failure) -> T
    {
        let result: Result<T, Failure> = await run { () -> Result<T, Failure> in
            do throws(Failure) {
                return .success(try body())
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }
}
