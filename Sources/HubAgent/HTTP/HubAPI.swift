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
    /// Required (as `Authorization: Bearer …`) for every write when set.
    let token: String?
    let metrics: MetricsExporter
    let logger: Logger
    /// The VAPID public key browsers subscribe with; `nil` without a webpush backend. Asked each time: a reload
    /// may add or remove the backend.
    let webPushKey: @Sendable () -> String?
    /// The roads `/api/v1/route` follows (`route.roads` in hubd.yaml, read once at start); `nil` routes across the
    /// pollution grid.
    let roads: RoadNetwork?
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

    init(
        snapshot: @escaping HubSnapshot.Source, store: any RegistryStore, stateDirectory: String, token: String?,
        metrics: MetricsExporter, logger: Logger, webPushKey: @escaping @Sendable () -> String? = { nil },
        roads: RoadNetwork? = nil, maximumRoutesPlanning: Int = 2,
        session: (@Sendable (SessionAction, _ sensor: String) async throws -> SensorTracker.Outcome)? = nil,
        history: HistorySource? = nil, actionKey: @escaping @Sendable () -> SymmetricKey? = { nil },
        alerts: (any AlertPlace)? = nil
    ) {
        self.actionKey = actionKey
        self.alerts = alerts ?? AlertFiles(directory: stateDirectory)
        self.snapshot = snapshot
        self.store = store
        self.stateDirectory = stateDirectory
        self.history = history ?? .file(directory: stateDirectory)
        self.token = token
        self.metrics = metrics
        self.logger = logger
        self.webPushKey = webPushKey
        self.roads = roads
        self.maximumRoutesPlanning = maximumRoutesPlanning
        self.session = session
    }

    /// Largest request body accepted.
    static let maximumBody = 64 * 1024

    /// Every route, for the OpenAPI test: method and path as the document writes it.
    static let routes: [(HTTPRequest.Method, String)] = [
        (.get, "/healthz"), (.get, "/metrics"), (.get, "/"), (.get, "/dashboard/chart.svg"),
        (.get, "/manifest.webmanifest"), (.get, "/sw.js"), (.get, "/icon.svg"), (.get, "/dashboard/push.js"),
        (.get, "/api/v1/openapi.yaml"), (.get, "/api/v1/webpush/key"),
        (.get, "/api/v1/sensors"), (.post, "/api/v1/sensors"),
        (.get, "/api/v1/sensors/{name}"), (.delete, "/api/v1/sensors/{name}"),
        (.get, "/api/v1/events"), (.get, "/api/v1/air"), (.get, "/api/v1/air/history"), (.get, "/api/v1/alert"),
        (.get, "/api/v1/route"), (.get, "/api/v1/devices"), (.post, "/api/v1/devices"),
        (.patch, "/api/v1/devices/{id}"),
        (.delete, "/api/v1/devices/{id}"),
        (.get, "/api/v1/sessions"), (.get, "/api/v1/sessions/{id}"), (.get, "/api/v1/sessions/{id}/track"),
        (.post, "/api/v1/sensors/{name}/session"), (.get, "/sessions"), (.get, "/sessions/{id}"),
        (.get, "/api/v1/alerts"), (.post, "/api/v1/alerts/{id}/ack"), (.get, "/api/v1/silences"),
        (.post, "/api/v1/silences"), (.delete, "/api/v1/silences/{id}"), (.get, "/a/{id}"), (.post, "/a/{id}"),
        (.get, "/alerts"),
    ]

    func router() -> Router<BasicRequestContext> {
        let router = Router(context: BasicRequestContext.self)
        router.add(middleware: ErrorMiddleware(logger: logger))
        // Request counts and durations through swift-metrics (hubd bootstraps it with the Prometheus registry).
        router.add(middleware: MetricsMiddleware())
        router.get("/healthz") { _, _ in try self.health() }
        router.get("/metrics") { _, _ in self.prometheus() }
        router.get("/") { _, _ in try await self.dashboard() }
        router.get("/dashboard/chart.svg") { request, _ in try await self.chart(request) }
        router.get("/manifest.webmanifest") { _, _ in
            self.staticFile(Self.manifest, type: "application/manifest+json")
        }
        router.get("/sw.js") { _, _ in self.staticFile(Self.serviceWorker, type: "text/javascript; charset=utf-8") }
        router.get("/sessions") { request, _ in try await self.sessionsPage(request) }
        router.get("/sessions/{id}") { _, context in try await self.sessionPage(context) }
        router.get("/a/{id}") { _, context in try await self.alertLinkPage(context) }
        router.get("/alerts") { _, _ in try await self.alertsPage() }
        router.post("/a/{id}") { request, context in try await self.alertLinkAct(request, context) }
        router.get("/icon.svg") { _, _ in self.staticFile(Self.icon, type: "image/svg+xml") }
        router.get("/dashboard/push.js") { _, _ in
            self.staticFile(DashboardPush.script, type: "text/javascript; charset=utf-8")
        }
        let api = router.group("/api/v1")
        api.get("/openapi.yaml") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "application/yaml"],
                body: .init(byteBuffer: ByteBuffer(string: OpenAPIDocument.yaml)))
        }
        api.get("/webpush/key") { _, _ in try self.webPushKeyAnswer() }
        api.get("/sensors") { _, _ in
            let (sensors, mobile) = try await self.liveSensors()
            return self.sensorsResponse(sensors, mobile: mobile)
        }
        api.post("/sensors") { request, context in try await self.addSensor(request, context) }
        api.get("/sensors/{name}") { _, context in
            let (sensor, mobile) = try await self.sensor(context)
            return self.sensorResponse(sensor, mobile: mobile)
        }
        api.delete("/sensors/{name}") { request, context in try await self.removeSensor(request, context) }
        api.get("/events") { request, _ in try await self.events(request) }
        api.get("/air") { _, _ in json(self.air()) }
        api.get("/air/history") { request, _ in try await self.airHistory(request) }
        api.get("/alert") { _, _ in json(self.alert()) }
        api.get("/route") { request, _ in try await self.route(request) }
        api.get("/devices") { request, _ in try self.listDevices(request) }
        api.post("/devices") { request, context in try await self.addDevice(request, context) }
        api.patch("/devices/{id}") { request, context in try await self.editDevice(request, context) }
        api.delete("/devices/{id}") { request, context in try await self.removeDevice(request, context) }
        api.get("/sessions") { request, _ in try await self.listSessions(request) }
        api.get("/sessions/{id}") { _, context in try await self.sessionDetail(context) }
        api.get("/sessions/{id}/track") { request, context in try await self.sessionTrack(request, context) }
        api.post("/sensors/{name}/session") { request, context in try await self.controlSession(request, context) }
        api.get("/alerts") { _, _ in try await self.listAlerts() }
        api.post("/alerts/{id}/ack") { request, context in try await self.acknowledgeAlert(request, context) }
        api.get("/silences") { _, _ in try await self.listSilences() }
        api.post("/silences") { request, context in try await self.addSilence(request, context) }
        api.delete("/silences/{id}") { request, context in try await self.expireSilence(request, context) }
        return router
    }

    // MARK: - Health and metrics

    struct HealthAnswer: Encodable {
        var connected: Bool
        var sensors: Int
        var status: String
    }

    func health() throws -> Response {
        let now = snapshot(false)
        return json(HealthAnswer(connected: now.connection.connected, sensors: now.sensorCount, status: "ok"))
    }

    func prometheus() -> Response {
        Response(
            status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: metrics.render(snapshot(false)))))
    }

    // MARK: - Helpers

    /// Writes need the token when one is configured.
    func authorize(_ request: Request) throws {
        guard let token else { return }
        let given = request.headers[.authorization] ?? ""
        guard given == "Bearer \(token)" else {
            throw HTTPError(.unauthorized, message: "this needs the API token: Authorization: Bearer <http.token>")
        }
    }

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
            return try await body(try history.open())
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

    /// A JSON object body of at most 64 KiB with only `allowed` keys.
    func object(_ request: Request, _ context: BasicRequestContext, allowed: Set<String>) async throws -> [String: Any]
    {
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

    func pathName(_ context: BasicRequestContext, _ key: String) -> String {
        let raw = context.parameters.get(key) ?? ""
        return raw.removingPercentEncoding ?? raw
    }
}
