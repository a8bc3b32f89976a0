import Logging

/// Where the registry lives: `defaults.json` in the state directory (`DefaultsStore`, the default), or a PostgreSQL
/// database several agents share (HubRemote's `PostgresRegistry`). Everything that reads or changes the registry —
/// hubd's services, its HTTP API, hubctl — goes through this, so another store is one more type.
///
/// Every change is a read of the newest document under the writers' lock, a change to it, and a write of what
/// changed; the registry's rules (unique names and topics) are `DefaultsDocument`'s, whatever the store.
public protocol RegistryStore: Sendable {
    /// Where it is, for messages: a file's path, or a database's URL without its password.
    var location: String { get }

    /// The current document; an empty one when there is none yet.
    func read() async throws(StoreError) -> DefaultsDocument

    /// The current document and its version, unless the store is still at `known`: then `document` is `nil` and
    /// nothing was decoded. `version` is `nil` when there is no registry yet (and the document an empty one).
    func read(ifChangedFrom known: RegistryVersion?) async throws(StoreError) -> (
        version: RegistryVersion?, document: DefaultsDocument?
    )

    /// Reads the newest document under the writers' lock, lets `change` modify it, and writes back what changed.
    /// A `change` that throws writes nothing. `beforeReplacing` is told the versions read and written, under the
    /// lock, before anyone following the store can see the new one; it is not called when nothing changed.
    func update<Result: Sendable>(
        _ change: @escaping @Sendable (inout DefaultsDocument) throws(RegistryError) -> Result,
        beforeReplacing: @escaping @Sendable (_ read: RegistryVersion?, _ written: RegistryVersion) -> Void
    ) async throws(StoreError) -> Result

    /// What hubd learnt of some sensors (statuses, attributes, sessions), recorded without touching the others: a
    /// file appends them to its status log, a database writes their rows. An update for a sensor that is gone (or
    /// older than what the store holds) changes nothing. `beforeReplacing` as for `update`; a store may skip it when
    /// nothing changed. Not `durable`: a file leaves the lines to the kernel's writeback (readers see them at once; a
    /// power cut may take them), for `syncStatuses` to flush later with those of other calls.
    func recordStatuses(
        _ updates: [SensorStatusUpdate], durable: Bool,
        beforeReplacing: @escaping @Sendable (_ read: RegistryVersion?, _ written: RegistryVersion) -> Void
    ) async throws(StoreError)

    /// Makes every status recorded so far durable (a database's are already).
    func syncStatuses() async throws(StoreError)

    /// Writes the statuses a log in memory holds (low wear) where a reboot keeps them; nothing for a store without
    /// one. hubd calls it as it stops.
    func foldStatusesInMemory() async throws(StoreError)

    /// The store's version now, without reading the document; `nil` when there is none (or it can't be told).
    func version() async -> RegistryVersion?

    /// Lets go of what it holds open (a database connection); a call after it opens it again.
    func close() async

    /// A signal whenever the registry may have changed (bursts collapse into one pending signal); hubd's own
    /// writes may signal too. Ends when its consumer goes away.
    func changes(logger: Logger) -> AsyncStream<Void>
}

extension RegistryStore {
    public func foldStatusesInMemory() async throws(StoreError) {}

    /// `recordStatuses`, durable.
    public func recordStatuses(
        _ updates: [SensorStatusUpdate],
        beforeReplacing: @escaping @Sendable (_ read: RegistryVersion?, _ written: RegistryVersion) -> Void
    ) async throws(StoreError) {
        try await recordStatuses(updates, durable: true, beforeReplacing: beforeReplacing)
    }

    /// `update`, without being told the versions.
    @discardableResult
    public func update<Result: Sendable>(
        _ change: @escaping @Sendable (inout DefaultsDocument) throws(RegistryError) -> Result
    ) async throws(StoreError) -> Result {
        try await update(change, beforeReplacing: { _, _ in })
    }
}

/// Which registry a document came from, to tell whether the store still holds it: a file's identity (inode, size,
/// modification time), or a database's revisions.
public struct RegistryVersion: Hashable, Sendable {
    enum Value: Hashable, Sendable {
        case file(DefaultsStore.FileIdentity)
        /// The sensors' revision (bumped by every change of the sensor set or the broker) and the statuses' (bumped
        /// by every write of statuses).
        case revisions(sensors: Int64, statuses: Int64)
    }

    let value: Value
    /// How many bytes the document takes in the store: after a large one was read, freeing memory is worth it.
    public let byteCount: Int

    init(file identity: DefaultsStore.FileIdentity) {
        value = .file(identity)
        byteCount = identity.byteCount
    }

    /// A database's version.
    public init(sensors: Int64, statuses: Int64, byteCount: Int) {
        value = .revisions(sensors: sensors, statuses: statuses)
        self.byteCount = byteCount
    }

    /// A database's revisions; `nil` for a file's version.
    public var revisions: (sensors: Int64, statuses: Int64)? {
        guard case .revisions(let sensors, let statuses) = value else { return nil }
        return (sensors, statuses)
    }

    /// Whether the registry at `other` has the same sensors and broker settings, whatever their statuses: a file's
    /// document (its status log aside), a database's sensors' revision. What hubd's subscriptions follow.
    public func hasSameSensors(as other: RegistryVersion) -> Bool {
        switch (value, other.value) {
        case (.file(let a), .file(let b)): a.sameDocument(as: b)
        case (.revisions(let a, _), .revisions(let b, _)): a == b
        default: false
        }
    }

    /// Whether going from `read` to this version wrote the whole document (a file's status log appended to does
    /// not); a database's rows are written apart, and count as the document.
    public func rewritesDocument(_ read: RegistryVersion?) -> Bool {
        guard case .file(let written) = value else { return true }
        guard case .file(let read) = read?.value else { return true }
        return written.inode != read.inode || written.device != read.device
    }

    /// Equal versions are the same registry; the size is what was seen of it, not part of it.
    public static func == (a: Self, b: Self) -> Bool { a.value == b.value }
    public func hash(into hasher: inout Hasher) { hasher.combine(value) }
}
