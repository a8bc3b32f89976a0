import Foundation
import HubCore
import HubHistory
import Hummingbird

/// `/api/v1/events`, `/api/v1/air`, `/api/v1/air/history` and `/api/v1/alert`: the history and the particulate
/// sensors' air, each answer a Codable struct.
extension HubAPI {
    func events(_ request: Request) async throws -> Response {
        let since = try sinceParameter(request, default: .seconds(86_400))
        var sensor: String?
        if let name = request.uri.queryParameters.get("sensor") {
            guard let found = try await readStore().sensor(named: name) else {
                throw HTTPError(.notFound, message: "no sensor named '\(name)'")
            }
            sensor = found.name
        }
        var kinds: Set<String>?
        if let text = request.uri.queryParameters.get("kind") {
            let asked = Set(text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
            let known = Set(SensorEvent.Kind.all.map(\.rawValue))
            if let unknown = asked.subtracting(known).sorted().first {
                throw HTTPError(
                    .badRequest, message: "kind '\(unknown)' is not one of: \(known.sorted().joined(separator: ", "))")
            }
            kinds = asked
        }
        var limit = 1000
        if let text = request.uri.queryParameters.get("limit") {
            guard let number = Int(text), (1...Self.maximumEvents).contains(number) else {
                throw HTTPError(.badRequest, message: "limit is a count of events from 1 to \(Self.maximumEvents)")
            }
            limit = number
        }
        let format = request.uri.queryParameters.get("format").map { String($0) } ?? "json"
        guard ["json", "csv"].contains(format) else {
            throw HTTPError(.badRequest, message: "format is json or csv")
        }
        // The newest `limit` of the kinds asked, oldest first: more are read when a kind is asked, then cut.
        var events = try await historyCall { history throws(HistoryError) in
            try await history.events(of: sensor, since: since, limit: kinds == nil ? limit : Self.maximumEvents)
        }
        if let kinds { events = Array(events.filter { kinds.contains($0.kind.rawValue) }.suffix(limit)) }
        if format == "csv" {
            return Response(
                status: .ok,
                headers: [
                    .contentType: "text/csv; charset=utf-8",
                    .contentDisposition: "attachment; filename=\"sensorhub-events.csv\"",
                ], body: .init(byteBuffer: ByteBuffer(string: SensorEvent.csv(events))))
        }
        return json(events.map(SensorEvent.HistoryRow.init))
    }

    /// The most events one answer carries.
    static let maximumEvents = 10_000

    /// One particulate sensor's air now; the reading's fields are absent until it has a reading.
    struct AirAnswer: Encodable {
        struct Means: Encodable {
            var pm10: Nullable<Double>
            var pm25: Nullable<Double>
        }

        struct Threshold: Encodable {
            var current: Nullable<Double>
            var metric: String
            var value: Double
        }

        var alert: Bool
        var aqi: Int?
        var category: String?
        var colour: String?
        var light: String?
        var mean1h: Means
        var mean24h: Means
        var pm10: Nullable<Double>?
        var pm25: Nullable<Double>?
        var sensor: String
        var threshold: Threshold
        var time: String?
    }

    func air() -> [AirAnswer] {
        snapshot(false).air.map { snapshot in
            var answer = AirAnswer(
                alert: snapshot.alerting,
                mean1h: .init(pm10: Nullable(snapshot.mean1h.pm10), pm25: Nullable(snapshot.mean1h.pm25)),
                mean24h: .init(pm10: Nullable(snapshot.mean24h.pm10), pm25: Nullable(snapshot.mean24h.pm25)),
                sensor: snapshot.sensor,
                threshold: .init(
                    current: Nullable(snapshot.watched), metric: snapshot.policy.metric.description,
                    value: snapshot.policy.threshold))
            if let reading = snapshot.reading {
                answer.pm25 = Nullable(reading.pm25)
                answer.pm10 = Nullable(reading.pm10)
                answer.time = reading.time.iso8601
                if let aqi = AQI.index(pm25: reading.pm25, pm10: reading.pm10) {
                    answer.aqi = aqi
                    answer.category = AQI.category(aqi).name
                    answer.colour = AQI.category(aqi).colour
                }
                answer.light = AirLight(pm25: reading.pm25, pm10: reading.pm10).rawValue
            }
            return answer
        }
    }

    /// The original monitor's `{"alert":true,"pollutant":"PM2.5","value":27.4,"time":"…"}`.
    struct AlertAnswer: Encodable {
        var alert: Bool
        var pollutant: Nullable<String>
        var sensor: String?
        var time: Nullable<String>
        var value: Nullable<Double>
    }

    /// The alert of the first particulate sensor.
    func alert() -> AlertAnswer {
        guard let snapshot = snapshot(false).air.first else {
            return AlertAnswer(alert: false, pollutant: nil, time: nil, value: nil)
        }
        return AlertAnswer(
            alert: snapshot.alerting, pollutant: Nullable(snapshot.policy.metric.pollutant.rawValue),
            sensor: snapshot.sensor, time: Nullable(snapshot.reading?.time.iso8601),
            value: Nullable(snapshot.watched.map { ($0 * 10).rounded() / 10 }))
    }

    struct PeriodAnswer: Encodable {
        struct Range: Encodable {
            var max: Double
            var mean: Double
            var min: Double
        }

        var pm10: Nullable<Range>
        var pm25: Nullable<Range>
        var readings: Int
        var start: String
    }

    func airHistory(_ request: Request) async throws -> Response {
        let since = try sinceParameter(request, default: .seconds(86_400))
        let periodText = request.uri.queryParameters.get("period") ?? "hour"
        guard let period = History.Period(rawValue: periodText) else {
            throw HTTPError(.badRequest, message: "period is hour, day, week or month")
        }
        let name = try await particulateSensor(request.uri.queryParameters.get("sensor"))
        let rows = try await historyCall { history throws(HistoryError) in
            try await history.aggregates(of: name, since: since, per: period)
        }
        func range(_ value: History.Spread?) -> Nullable<PeriodAnswer.Range> {
            Nullable(value.map { .init(max: $0.max, mean: ($0.mean * 10).rounded() / 10, min: $0.min) })
        }
        return json(
            rows.map {
                PeriodAnswer(pm10: range($0.pm10), pm25: range($0.pm25), readings: $0.count, start: $0.start.iso8601)
            })
    }

    /// The particulate sensor `name` names, or the first one.
    func particulateSensor(_ name: String?) async throws -> String {
        let document = try await readStore()
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
}
