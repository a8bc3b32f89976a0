import Crypto
import Foundation
import HTTPTypes
import HubCore
import HubHistory
import HubNotify
import HubSupport
import Hummingbird
import Logging
import NIOCore

/// The JSON API under `/api/v1`, the dashboard at `/`, `/healthz` and `/metrics`: one more door to the same
/// registry, history and devices `hubctl` uses, with the same validation.
struct HubAPI: Sendable {
    /// What the hub knows now (live statuses, air, counters): never a service's lock.
    let snapshot: HubSnapshot.Source
    let store: any RegistryStore
    let stateDirectory: String
    /// The history: `history.sqlite` in the state directory (opened per request: it appears once hubd has written),
    /// or with `store:` the store's database.
    let history: HistorySource
    /// The dashboard polls every 2 s: the registry is decoded again only when its file was replaced.
    let registry = CachedDefaults()
    /// Who may do what (docs/security.md): the accounts, the tokens, the public reads, the names the hub answers to.
    let access: HTTPAccess
    let metrics: MetricsExporter
    let logger: Logger
    /// The VAPID public key browsers subscribe with; `nil` without a webpush backend. Asked each time: a reload
    /// may add or remove the backend.
    let webPushKey: @Sendable () -> String?
    /// The roads `/api/v1/route` follows (`route.roads` in hubd.yaml, read once at start); `nil` routes across the
    /// pollution grid.
    let roads: RoadNetwork?
    /// The tiles under the maps (`http.map_tiles`); nil draws them on a plain ground.
    let mapTiles: MapTiles?
    /// How many routes may be planned at once (one a core): each holds a Dispatch thread and up to 70 MB.
    let maximumRoutesPlanning: Int
    /// Routes being planned now.
    let routesPlanning = Locked(0)
    /// Starts or stops a mobile sensor's recording (ingest's, in hubd); `nil` where no hub runs.
    let session: (@Sendable (SessionAction, _ sensor: String) async throws -> SensorTracker.Outcome)?
    /// The key alert buttons' tokens are signed with (the router's); `nil` refuses every `/a/…` link.
    let actionKey: @Sendable () -> SymmetricKey?
    /// Where the alert book is read and requests are left (the router's: files, or a cluster's database).
    let alerts: any AlertPlace
    /// The alert stage's setup now (the router's), to say why an alert waits; nil where no hub runs.
    let alertSetup: @Sendable () -> AlertBook.Setup?
    /// Hands a Pushover callback's receipt to the backend that sent it, to be checked with Pushover; whether one did
    /// (the router's `pushoverCallback`).
    let pushoverCallback: @Sendable (_ receipt: String) -> Bool
    /// The notifier backends configured now, by name with their type (the router's).
    let notifiers: @Sendable () -> [(name: String, type: String)]
    /// One direct attempt through a backend (the router's `test`); `nil` where no hub runs.
    let notifierTest: (@Sendable (String, SensorEvent) async throws -> [NotificationTest.Outcome])?
    /// Rung when something a page shows may have changed (`/api/v1/stream`).
    let changes: ChangeFeed
    /// Listens for devices on the broker (the hub's `discover`); `nil` where no hub runs.
    let discover: (@Sendable (Duration) async throws -> DeviceDiscovery)?
    /// A discovery under way, and what the last one heard (what "add" may add).
    let discovery = Locked(DiscoveryState())

    init(
        snapshot: @escaping HubSnapshot.Source, store: any RegistryStore, stateDirectory: String, access: HTTPAccess,
        metrics: MetricsExporter, logger: Logger, webPushKey: @escaping @Sendable () -> String? = { nil },
        roads: RoadNetwork? = nil, mapTiles: MapTiles? = nil, maximumRoutesPlanning: Int = 2,
        session: (@Sendable (SessionAction, _ sensor: String) async throws -> SensorTracker.Outcome)? = nil,
        history: HistorySource? = nil, actionKey: @escaping @Sendable () -> SymmetricKey? = { nil },
        alerts: (any AlertPlace)? = nil, pushoverCallback: @escaping @Sendable (String) -> Bool = { _ in false },
        alertSetup: @escaping @Sendable () -> AlertBook.Setup? = { nil },
        notifiers: @escaping @Sendable () -> [(name: String, type: String)] = { [] },
        notifierTest: (@Sendable (String, SensorEvent) async throws -> [NotificationTest.Outcome])? = nil,
        streamLifetime: Int = ChangeFeed.lifetime,
        discover: (@Sendable (Duration) async throws -> DeviceDiscovery)? = nil
    ) {
        self.discover = discover
        self.notifiers = notifiers
        self.notifierTest = notifierTest
        self.changes = ChangeFeed(stateDirectory: stateDirectory, lifetime: streamLifetime)
        self.alertSetup = alertSetup
        self.pushoverCallback = pushoverCallback
        self.actionKey = actionKey
        self.alerts = alerts ?? AlertFiles(directory: stateDirectory)
        self.snapshot = snapshot
        self.store = store
        self.stateDirectory = stateDirectory
        self.history = history ?? .file(directory: stateDirectory)
        self.access = access
        self.metrics = metrics
        self.logger = logger
        self.webPushKey = webPushKey
        self.roads = roads
        self.mapTiles = mapTiles
        self.maximumRoutesPlanning = maximumRoutesPlanning
        self.session = session
    }

    /// Largest request body accepted.
    static let maximumBody = 64 * 1024

    // MARK: - Health and metrics

    struct HealthAnswer: Encodable {
        var connected: Bool
        var sensors: Int
        var status: String
    }

    /// `/healthz`: 200 `ok` while connected to the broker, 503 `disconnected` while not (a probe that only asked
    /// whether the process answers said `ok` with every sensor unheard).
    func health() throws -> Response {
        let now = snapshot(false)
        let connected = now.connection.connected
        return json(
            HealthAnswer(connected: connected, sensors: now.sensorCount, status: connected ? "ok" : "disconnected"),
            status: connected ? .ok : .serviceUnavailable)
    }

    func prometheus() -> Response {
        Response(
            status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: metrics.render(snapshot(false)))))
    }

    // MARK: - Helpers

    func readStore() async throws -> DefaultsDocument {
        do {
            return try await registry.read(store)
        } catch {
            throw HTTPError(.internalServerError, message: error.description)
        }
    }

    func storeUpdate<T: Sendable>(
        _ change: @escaping @Sendable (inout DefaultsDocument) throws(RegistryError) -> T
    ) async throws -> T {
        do {
            return try await store.update(change)
        } catch .registry(let error) {
            switch error {
            case .duplicateName, .duplicateTopic: throw HTTPError(.conflict, message: error.description)
            case .unknownSensor: throw HTTPError(.notFound, message: error.description)
            default: throw HTTPError(.badRequest, message: error.description)
            }
        } catch {
            throw HTTPError(.internalServerError, message: error.description)
        }
    }

    func historyCall<T>(_ body: (any HistoryReader) async throws(HistoryError) -> T) async throws -> T {
        do {
            return try await body(try history.openAll())
        } catch .missing {
            throw HTTPError(.notFound, message: "no history yet: hubd records it as readings and events arrive")
        } catch .unavailable(_, let reason) {
            throw HTTPError(.serviceUnavailable, message: "the history's database can't be reached: \(reason)")
        } catch {
            throw HTTPError(.internalServerError, message: error.description)
        }
    }

    func sinceParameter(_ request: Request, default fallback: Duration) throws -> Timestamp {
        var duration = fallback
        if let text = request.uri.queryParameters.get("since") {
            guard let parsed = DurationText.parse(text) else {
                throw HTTPError(.badRequest, message: "since is a duration like 24h or 7d")
            }
            duration = parsed
        }
        return Timestamp(millisecondsSince1970: Timestamp.now.millisecondsSince1970 - Int64(duration.seconds * 1000))
    }

    /// A JSON object body of at most 64 KiB with only `allowed` keys, sent as `application/json`: no other page can
    /// send that without the browser asking first (a CORS preflight, which the hub refuses), so a form or a
    /// `text/plain` POST from another site never gets this far.
    func object(_ request: Request, _ context: HubRequestContext, allowed: Set<String>) async throws -> [String: Any] {
        let type = request.headers[.contentType]?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces)
        guard type?.lowercased() == "application/json" else {
            throw HTTPError(
                .unsupportedMediaType,
                message: "the body must be JSON sent as Content-Type: application/json (not \(type ?? "none"))")
        }
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: Self.maximumBody)
        } catch {
            throw HTTPError(.contentTooLarge, message: "the body is larger than \(Self.maximumBody / 1024) KiB")
        }
        guard let value = try? JSONSerialization.jsonObject(with: Data(buffer: buffer)) else {
            throw HTTPError(.badRequest, message: "the body is not valid JSON")
        }
        guard let object = value as? [String: Any] else {
            throw HTTPError(.badRequest, message: "the body must be a JSON object")
        }
        for key in object.keys.sorted() where !allowed.contains(key) {
            throw HTTPError(
                .badRequest, message: "unknown field \"\(key)\" (known: \(allowed.sorted().joined(separator: ", ")))")
        }
        return object
    }

    func optionalString(_ object: [String: Any], _ key: String) throws -> String? {
        guard let value = object[key], !(value is NSNull) else { return nil }
        guard let text = value as? String else { throw HTTPError(.badRequest, message: "\"\(key)\" must be a string") }
        return text
    }

    func pathName(_ context: HubRequestContext, _ key: String) -> String {
        let raw = context.parameters.get(key) ?? ""
        return raw.removingPercentEncoding ?? raw
    }
}
