import Foundation
import HubCore
import HubHistory
import Hummingbird
import NIOCore

/// `/api/v1/sessions…` and `POST /api/v1/sensors/{name}/session`: mobile sensors' recording sessions from the
/// history (a list, one with its statistics, its track as GeoJSON, GPX or CSV), and starting or stopping one.
extension HubAPI {
    /// A session as the list gives it; the one-session answer adds its statistics.
    struct SessionAnswer: Encodable {
        struct Range: Encodable {
            var max: Double
            var mean: Double
            var min: Double
        }

        var ended: Nullable<String>
        var id: String
        var open: Bool
        var readings: Int
        var sensor: String
        var started: String
        var aboveGuideline: Double?
        var distance: Double?
        var duration: Double?
        var guideline: Double?
        var pm10: Nullable<Range>?
        var pm25: Nullable<Range>?
        var positioned: Int?
        var value: Nullable<Range>?

        enum CodingKeys: String, CodingKey {
            case ended, id, open, readings, sensor, started, guideline, pm10, pm25, positioned, value
            case aboveGuideline = "above_guideline_s"
            case distance = "distance_m"
            case duration = "duration_s"
        }

        init(_ summary: SessionSummary, statistics: SessionStatistics? = nil) {
            ended = Nullable(summary.ended?.iso8601)
            id = summary.id
            open = summary.ended == nil
            readings = summary.readings
            sensor = summary.sensor
            started = summary.started.iso8601
            guard let statistics else { return }
            func range(_ spread: HubCore.Spread?) -> Nullable<Range> {
                Nullable(spread.map { .init(max: $0.max, mean: ($0.mean * 10).rounded() / 10, min: $0.min) })
            }
            aboveGuideline = statistics.aboveGuideline.seconds
            distance = (statistics.distance * 10).rounded() / 10
            duration = statistics.duration.seconds
            guideline = statistics.guideline
            pm10 = range(statistics.pm10)
            pm25 = range(statistics.pm25)
            positioned = statistics.positioned
            value = range(statistics.value)
        }
    }

    /// `?sensor=&since=30d&limit=100`: newest first.
    func listSessions(_ request: Request) async throws -> Response {
        let since = try sinceParameter(request, default: .seconds(30 * 86_400))
        var limit = 100
        if let text = request.uri.queryParameters.get("limit") {
            guard let number = Int(text), (1...1000).contains(number) else {
                throw HTTPError(.badRequest, message: "limit is a number from 1 to 1000")
            }
            limit = number
        }
        var sensor: String?
        if let name = request.uri.queryParameters.get("sensor") {
            guard let found = try await readStore().sensor(named: name) else {
                throw HTTPError(.notFound, message: "no sensor named '\(name)'")
            }
            sensor = found.name
        }
        let sessions = try await historyCall { history throws(HistoryError) in
            try await history.sessions(of: sensor, since: since, limit: limit)
        }
        return json(sessions.map { SessionAnswer($0) })
    }

    func sessionDetail(_ context: HubRequestContext) async throws -> Response {
        let (summary, points) = try await recordedSession(pathName(context, "id"))
        return json(SessionAnswer(summary, statistics: SessionStatistics(points)))
    }

    /// `?format=geojson|gpx|csv` (GeoJSON when absent), as a download named after the sensor and the start.
    func sessionTrack(_ request: Request, _ context: HubRequestContext) async throws -> Response {
        let format = request.uri.queryParameters.get("format") ?? "geojson"
        guard let (type, fileExtension) = Self.trackFormats[format] else {
            throw HTTPError(.badRequest, message: "format is geojson, gpx or csv")
        }
        let (summary, points) = try await recordedSession(pathName(context, "id"))
        let export = SessionExport(summary: summary, points: points)
        let body: String
        switch format {
        case "gpx": body = export.gpx()
        case "csv": body = export.csv()
        default: body = export.geoJSON()
        }
        let name = Self.fileName(summary) + "." + fileExtension
        return Response(
            status: .ok,
            headers: [.contentType: type, .contentDisposition: "attachment; filename=\"\(name)\""],
            body: .init(byteBuffer: ByteBuffer(string: body)))
    }

    /// Content type and file extension by `format`.
    static let trackFormats: [String: (String, String)] = [
        "geojson": ("application/geo+json", "geojson"), "gpx": ("application/gpx+xml", "gpx"),
        "csv": ("text/csv; charset=utf-8", "csv"),
    ]

    /// `walker-20261125T182000Z`: the sensor's name with only letters, digits, `.`, `_` and `-` kept (a header and
    /// every file system take it), and the start in UTC.
    static func fileName(_ summary: SessionSummary) -> String {
        let safe = String(
            summary.sensor.unicodeScalars.map { scalar -> Character in
                scalar.isASCII && (CharacterSet.alphanumerics.contains(scalar) || "._-".unicodeScalars.contains(scalar))
                    ? Character(scalar) : "_"
            })
        let time = summary.started.iso8601.prefix(19).filter { $0 != "-" && $0 != ":" }
        return (safe.isEmpty ? "session" : safe) + "-" + time + "Z"
    }

    /// The session called `id` and its readings, oldest first; a 404 when the history has no such session.
    func recordedSession(_ id: String) async throws -> (SessionSummary, [TrackPoint]) {
        let found = try await historyCall { history throws(HistoryError) -> (SessionSummary, [TrackPoint])? in
            guard let summary = try await history.session(id) else { return nil }
            return (summary, try await history.track(of: id, limit: 1_000_000))
        }
        guard let found else {
            throw HTTPError(
                .notFound,
                message: "no session '\(id)' in the history (GET /api/v1/sessions lists them; fixed:<sensor> names "
                    + "a fixed sensor's readings)")
        }
        return found
    }

    /// What a start or a stop did: `changed` false when there was nothing to stop; `session` the id of the session
    /// it started (or, for a stop, ended).
    struct SessionControlAnswer: Encodable {
        var changed: Bool
        var events: [SensorEvent.HistoryRow]?
        var recording: Bool?
        var session: String?
    }

    /// `{"action":"start"|"stop"}`: as the device's control message, journaled and recorded like one.
    func controlSession(_ request: Request, _ context: HubRequestContext) async throws -> Response {
        let body = try await object(request, context, allowed: ["action"])
        guard let text = body["action"] as? String, let action = SessionAction(rawValue: text) else {
            throw HTTPError(.badRequest, message: "\"action\" is \"start\" or \"stop\"")
        }
        let name = pathName(context, "name")
        guard let sensor = try await readStore().sensor(named: name) else {
            throw HTTPError(.notFound, message: "no sensor named '\(name)'")
        }
        guard let session else {
            throw HTTPError(.serviceUnavailable, message: "sessions are started and stopped by a running hubd")
        }
        let outcome = try await session(action, sensor.name)
        switch outcome {
        case .rejected(.unknownTopic):
            throw HTTPError(
                .notFound, message: "hubd does not follow '\(sensor.name)' yet: try again in a second")
        case .rejected(.notMobile):
            throw HTTPError(
                .conflict,
                message: "'\(sensor.name)' is not a mobile sensor: name it under sessions: in hubd.yaml "
                    + "(- sensors: [\(sensor.name)]) and reload hubd (SIGHUP)")
        case .rejected(let reason):
            throw HTTPError(.badRequest, message: reason.rawValue)
        case .unchanged:
            return json(SessionControlAnswer(changed: false))
        default:
            let events = outcome.events.filter { $0.kind == .session }
            return json(
                SessionControlAnswer(
                    changed: true,
                    events: events.map(SensorEvent.HistoryRow.init),
                    recording: action == .start, session: events.last?.value))
        }
    }
}
