import Foundation
import HTTPTypes
import HubCore
import HubHistory
import HubNotify
import Hummingbird
import Logging
import NIOCore

/// The JSON API under `/api/v1`, the dashboard at `/`, `/healthz` and `/metrics`: one more door to the same
/// registry, history and devices `hubctl` uses, with the same validation.
struct HubAPI: Sendable {
    /// What the hub knows now (live statuses, air, counters): never a service's lock.
    let snapshot: HubSnapshot.Source
    let store: DefaultsStore
    let stateDirectory: String
    /// The dashboard polls every 2 s: the registry is decoded again only when its file was replaced.
    let registry = CachedDefaults()
    /// Required (as `Authorization: Bearer …`) for every write when set.
    let token: String?
    let metrics: MetricsExporter
    let logger: Logger

    init(
        snapshot: @escaping HubSnapshot.Source, store: DefaultsStore, stateDirectory: String, token: String?,
        metrics: MetricsExporter, logger: Logger
    ) {
        self.snapshot = snapshot
        self.store = store
        self.stateDirectory = stateDirectory
        self.token = token
        self.metrics = metrics
        self.logger = logger
    }

    /// Largest request body accepted.
    static let maximumBody = 64 * 1024

    /// Every route, for the OpenAPI test: method and path as the document writes it.
    static let routes: [(HTTPRequest.Method, String)] = [
        (.get, "/healthz"), (.get, "/metrics"), (.get, "/"), (.get, "/dashboard/chart.svg"),
        (.get, "/api/v1/openapi.yaml"),
        (.get, "/api/v1/sensors"), (.post, "/api/v1/sensors"),
        (.get, "/api/v1/sensors/{name}"), (.delete, "/api/v1/sensors/{name}"),
        (.get, "/api/v1/events"), (.get, "/api/v1/air"), (.get, "/api/v1/air/history"), (.get, "/api/v1/alert"),
        (.post, "/api/v1/devices"), (.delete, "/api/v1/devices/{token}"),
    ]

    func router() -> Router<BasicRequestContext> {
        let router = Router(context: BasicRequestContext.self)
        router.add(middleware: ErrorMiddleware(logger: logger))
        // Request counts and durations through swift-metrics (hubd bootstraps it with the Prometheus registry).
        router.add(middleware: MetricsMiddleware())
        router.get("/healthz") { _, _ in try self.health() }
        router.get("/metrics") { _, _ in self.prometheus() }
        router.get("/") { _, _ in try self.dashboard() }
        router.get("/dashboard/chart.svg") { request, _ in try self.chart(request) }
        let api = router.group("/api/v1")
        api.get("/openapi.yaml") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "application/yaml"],
                body: .init(byteBuffer: ByteBuffer(string: OpenAPIDocument.yaml)))
        }
        api.get("/sensors") { _, _ in try self.sensorsResponse(self.sensors()) }
        api.post("/sensors") { request, context in try await self.addSensor(request, context) }
        api.get("/sensors/{name}") { _, context in try self.sensorResponse(self.sensor(context)) }
        api.delete("/sensors/{name}") { request, context in try await self.removeSensor(request, context) }
        api.get("/events") { request, _ in try self.events(request) }
        api.get("/air") { _, _ in json(self.air()) }
        api.get("/air/history") { request, _ in try self.airHistory(request) }
        api.get("/alert") { _, _ in try json(self.alert()) }
        api.post("/devices") { request, context in try await self.addDevice(request, context) }
        api.delete("/devices/{token}") { request, context in try await self.removeDevice(request, context) }
        return router
    }

    // MARK: - Sensors

    func sensors() throws -> [Sensor] {
        let document = try readStore()
        let statuses = snapshot(true).statuses
        // The order hubctl lists them in (not localizedStandardCompare, which goes through ICU on Linux).
        return document.sensors.map { live($0, statuses) }.sortedByName()
    }

    /// The sensor with what hubd knows now (the store may lag behind by a flush interval).
    func live(_ sensor: Sensor, _ statuses: [String: SensorTracker.LiveStatus]) -> Sensor {
        var sensor = sensor
        if let now = statuses[sensor.topic] {
            sensor.status = now.status
            sensor.lastUpdated = now.lastUpdated ?? sensor.lastUpdated
        }
        return sensor
    }

    /// The sensor list, written straight into the writer rather than built as dictionaries for `json(_:)`: the
    /// dashboard polls it every 2 s, for 10,000 sensors perhaps.
    func sensorsResponse(_ sensors: [Sensor]) -> Response {
        var writer = JSONWriter(capacity: sensors.count * 200 + 2, compact: true)
        writer.raw("[")
        for (index, sensor) in sensors.enumerated() {
            if index > 0 { writer.raw(",") }
            write(sensor, into: &writer)
        }
        writer.raw("]")
        return json(writer)
    }

    func sensorResponse(_ sensor: Sensor, status: HTTPResponse.Status = .ok) -> Response {
        var writer = JSONWriter(compact: true)
        write(sensor, into: &writer)
        return json(writer, status: status)
    }

    /// A sensor as a JSON object, keys in alphabetical order.
    private func write(_ sensor: Sensor, into writer: inout JSONWriter) {
        var first = true
        writer.raw("{")
        writer.key("added", first: &first)
        writer.timestamp(sensor.added)
        writer.key("kind", first: &first)
        writer.string(sensor.kind.rawValue)
        writer.key("lastUpdated", first: &first)
        if let time = sensor.lastUpdated { writer.timestamp(time) } else { writer.raw("null") }
        writer.key("name", first: &first)
        writer.string(sensor.name)
        writer.key("silenceTimeout", first: &first)
        if let timeout = sensor.silenceTimeout {
            writer.string(DurationText.format(timeout))
        } else {
            writer.raw("null")
        }
        writer.key("status", first: &first)
        writer.string(sensor.status)
        writer.key("topic", first: &first)
        writer.string(sensor.topic)
        writer.raw("}")
    }

    func sensor(_ context: BasicRequestContext) throws -> Sensor {
        let name = pathName(context, "name")
        guard let sensor = try readStore().sensor(named: name) else {
            throw HTTPError(.notFound, message: "no sensor named '\(name)'")
        }
        return live(sensor, snapshot(true).statuses)
    }

    func addSensor(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        try authorize(request)
        let body = try await object(request, context, allowed: ["name", "topic", "kind", "silenceTimeout"])
        guard let name = body["name"] as? String else {
            throw HTTPError(.badRequest, message: "\"name\" (a string) is required")
        }
        let topic = try optionalString(body, "topic")
        let kindText = try optionalString(body, "kind") ?? SensorKind.status.rawValue
        guard SensorKind.known.map(\.rawValue).contains(kindText) else {
            throw HTTPError(
                .badRequest, message: "\"kind\" is one of: \(SensorKind.known.map(\.rawValue).joined(separator: ", "))")
        }
        var silence: Duration?
        if let text = try optionalString(body, "silenceTimeout") {
            guard let duration = DurationText.parse(text) else {
                throw HTTPError(.badRequest, message: "\"silenceTimeout\" is a duration like 90s, 10m or 2h")
            }
            silence = duration
        }
        let template = snapshot(false).topicTemplate
        let sensor = try storeUpdate { document throws(RegistryError) in
            try document.addSensor(
                named: name, topic: topic, template: template, kind: SensorKind(rawValue: kindText),
                silenceTimeout: silence)
        }
        return sensorResponse(sensor, status: .created)
    }

    func removeSensor(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        try authorize(request)
        let name = pathName(context, "name")
        _ = try storeUpdate { document throws(RegistryError) in try document.removeSensor(named: name) }
        return Response(status: .noContent)
    }

    // MARK: - Events and air

    func events(_ request: Request) throws -> Response {
        let since = try sinceParameter(request, default: .seconds(86_400))
        var sensor: String?
        if let name = request.uri.queryParameters.get("sensor") {
            guard let found = try readStore().sensor(named: name) else {
                throw HTTPError(.notFound, message: "no sensor named '\(name)'")
            }
            sensor = found.name
        }
        let events = try historyCall { history throws(HistoryError) in
            try history.events(of: sensor, since: since, limit: 1000)
        }
        return json(
            events.map {
                [
                    "time": $0.time.iso8601, "sensor": $0.sensor, "event": $0.kind.rawValue, "from": $0.oldStatus,
                    "to": $0.newStatus, "detail": nullable($0.value),
                ] as [String: Any]
            })
    }

    func air() -> [[String: Any]] {
        snapshot(false).air.map { snapshot in
            var object: [String: Any] = ["sensor": snapshot.sensor, "alert": snapshot.alerting]
            if let reading = snapshot.reading {
                object["pm25"] = nullable(reading.pm25)
                object["pm10"] = nullable(reading.pm10)
                object["time"] = reading.time.iso8601
                if let aqi = AQI.index(pm25: reading.pm25, pm10: reading.pm10) {
                    object["aqi"] = aqi
                    object["category"] = AQI.category(aqi).name
                    object["colour"] = AQI.category(aqi).colour
                }
                object["light"] = AirLight(pm25: reading.pm25, pm10: reading.pm10).rawValue
            }
            object["mean1h"] = ["pm25": nullable(snapshot.mean1h.pm25), "pm10": nullable(snapshot.mean1h.pm10)]
            object["mean24h"] = ["pm25": nullable(snapshot.mean24h.pm25), "pm10": nullable(snapshot.mean24h.pm10)]
            object["threshold"] = [
                "metric": snapshot.policy.metric.description, "value": snapshot.policy.threshold,
                "current": nullable(snapshot.watched),
            ]
            return object
        }
    }

    /// The original monitor's `{"alert":true,"pollutant":"PM2.5","value":27.4,"time":"…"}`, for the first
    /// particulate sensor (or the one named by `?sensor=`).
    func alert() throws -> [String: Any] {
        guard let snapshot = snapshot(false).air.first else {
            return ["alert": false, "pollutant": NSNull(), "value": NSNull(), "time": NSNull()]
        }
        return [
            "alert": snapshot.alerting, "pollutant": snapshot.policy.metric.pollutant.rawValue,
            "value": nullable(snapshot.watched.map { ($0 * 10).rounded() / 10 }),
            "time": nullable(snapshot.reading?.time.iso8601), "sensor": snapshot.sensor,
        ]
    }

    func airHistory(_ request: Request) throws -> Response {
        let since = try sinceParameter(request, default: .seconds(86_400))
        let periodText = request.uri.queryParameters.get("period") ?? "hour"
        guard let period = History.Period(rawValue: periodText) else {
            throw HTTPError(.badRequest, message: "period is hour, day, week or month")
        }
        let name = try particulateSensor(request.uri.queryParameters.get("sensor"))
        let rows = try historyCall { history throws(HistoryError) in
            try history.aggregates(of: name, since: since, per: period)
        }
        func triple(_ value: (min: Double, mean: Double, max: Double)?) -> Any {
            value.map { ["min": $0.min, "mean": ($0.mean * 10).rounded() / 10, "max": $0.max] } ?? NSNull()
        }
        return json(
            rows.map {
                ["start": $0.start.iso8601, "readings": $0.count, "pm25": triple($0.pm25), "pm10": triple($0.pm10)]
                    as [String: Any]
            })
    }

    /// The particulate sensor `name` names, or the first one.
    func particulateSensor(_ name: String?) throws -> String {
        let document = try readStore()
        if let name {
            guard let sensor = document.sensor(named: name) else {
                throw HTTPError(.notFound, message: "no sensor named '\(name)'")
            }
            guard sensor.kind == .particulate else {
                throw HTTPError(.badRequest, message: "\(sensor.name) is not a particulate sensor")
            }
            return sensor.name
        }
        guard let first = document.sensors.first(where: { $0.kind == .particulate }) else {
            throw HTTPError(.notFound, message: "no particulate sensor in the registry")
        }
        return first.name
    }

    // MARK: - Devices

    func addDevice(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        try authorize(request)
        // The original app sent {"ID": token}; {"token": …} is the documented form.
        let body = try await object(request, context, allowed: ["token", "ID"])
        guard let token = (body["token"] ?? body["ID"]) as? String else {
            throw HTTPError(.badRequest, message: "\"token\" (the device token, hexadecimal) is required")
        }
        let store = DeviceStore(directory: stateDirectory)
        let result: (device: DeviceStore.Device, added: Bool)
        do throws(DeviceError) {
            result = try store.add(token)
        } catch {
            if case .invalidToken(let reason) = error { throw HTTPError(.badRequest, message: reason) }
            throw HTTPError(.internalServerError, message: error.description)
        }
        return json(["id": result.device.id, "added": result.added], status: result.added ? .created : .ok)
    }

    func removeDevice(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        try authorize(request)
        let token = pathName(context, "token")
        let store = DeviceStore(directory: stateDirectory)
        do {
            guard try store.remove(token) else { throw HTTPError(.notFound, message: "no such device") }
        } catch let error as DeviceError {
            throw HTTPError(.internalServerError, message: error.description)
        }
        return Response(status: .noContent)
    }

    // MARK: - Health and metrics

    func health() throws -> Response {
        let now = snapshot(false)
        return json(["status": "ok", "connected": now.connection.connected, "sensors": now.sensorCount] as [String: Any])
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

    func readStore() throws -> DefaultsDocument {
        do {
            return try registry.read(store)
        } catch {
            throw HTTPError(.internalServerError, message: error.description)
        }
    }

    func storeUpdate<T>(_ change: (inout DefaultsDocument) throws(RegistryError) -> T) throws -> T {
        do {
            return try store.update(change)
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

    func historyCall<T>(_ body: (History) throws(HistoryError) -> T) throws -> T {
        do {
            let history = try History(directory: stateDirectory, create: false)
            return try body(history)
        } catch .missing {
            throw HTTPError(.notFound, message: "no history yet: hubd records it as readings and events arrive")
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

/// A value for `json(_:)`: `nil` becomes JSON null.
func nullable(_ value: Any?) -> Any { value ?? NSNull() }

/// A JSON response, objects' keys in order. Written with the hub's `JSONWriter`: JSONSerialization's sorted keys
/// compare through ICU on Linux, which made a poll of 10,000 sensors cost 654 ms of CPU.
func json(_ value: Any, status: HTTPResponse.Status = .ok) -> Response {
    var writer = JSONWriter(compact: true)
    write(value, into: &writer)
    return json(writer, status: status)
}

func json(_ writer: JSONWriter, status: HTTPResponse.Status = .ok) -> Response {
    Response(
        status: status, headers: [.contentType: "application/json; charset=utf-8"],
        body: .init(byteBuffer: ByteBuffer(bytes: writer.bytes)))
}

/// The values the API builds its answers from: strings, numbers, booleans, `NSNull`, arrays and dictionaries.
private func write(_ value: Any, into writer: inout JSONWriter) {
    switch value {
    case let string as String: writer.string(string)
    case let bool as Bool where type(of: value) == Bool.self: writer.bool(bool)
    case let int as Int: writer.number(int)
    case let double as Double: writer.number(double)
    case let array as [Any]:
        writer.raw("[")
        for (index, element) in array.enumerated() {
            if index > 0 { writer.raw(",") }
            write(element, into: &writer)
        }
        writer.raw("]")
    case let object as [String: Any]:
        var first = true
        writer.raw("{")
        for key in object.keys.sorted() {
            writer.key(key, first: &first)
            write(object[key]!, into: &writer)
        }
        writer.raw("}")
    default:
        writer.raw("null")  // NSNull, and nothing else the API builds
    }
}

/// Errors as `{"error":"…"}` with their status; anything unexpected is a 500, logged.
struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    let logger: Logger

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        do {
            return try await next(request, context)
        } catch let error as HTTPError {
            // The router's own 404 (no route matched) says nothing more: say what was asked for.
            let fallback =
                error.status == .notFound
                ? "no such endpoint: \(request.method) \(request.uri.path)" : error.status.reasonPhrase
            return json(["error": error.body ?? fallback], status: error.status)
        } catch let error as any HTTPResponseError {
            let status = error.status
            let message =
                status == .notFound ? "no such endpoint: \(request.method) \(request.uri.path)" : status.reasonPhrase
            return json(["error": message], status: status)
        } catch {
            logger.error("HTTP request failed", metadata: ["path": "\(request.uri.path)", "error": "\(error)"])
            return json(["error": "internal error: \(error)"], status: .internalServerError)
        }
    }
}
