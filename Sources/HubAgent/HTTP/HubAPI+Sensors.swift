import Foundation
import HTTPTypes
import HubCore
import Hummingbird

/// `/api/v1/sensors`: the registry as hubctl edits it, with what hubd knows now.
extension HubAPI {
    func sensors() async throws -> [Sensor] { try await liveSensors().sensors }

    /// The registry's sensors with what hubd knows now, and the names of the mobile ones (`sessions:`).
    func liveSensors() async throws -> (sensors: [Sensor], mobile: Set<String>) {
        let document = try await readStore()
        let statuses = snapshot(true).statuses
        let mobile = Set(document.sensors.lazy.filter { statuses[$0.topic]?.mobile == true }.map(\.name))
        // The order hubctl lists them in (not localizedStandardCompare, which goes through ICU on Linux).
        return (document.sensors.map { live($0, statuses) }.sortedByName(), mobile)
    }

    /// The sensor with what hubd knows now (the store may lag behind by a flush interval).
    func live(_ sensor: Sensor, _ statuses: [String: SensorTracker.LiveStatus]) -> Sensor {
        var sensor = sensor
        if let now = statuses[sensor.topic] {
            sensor.status = now.status
            sensor.lastUpdated = now.lastUpdated ?? sensor.lastUpdated
            sensor.attributes = now.attributes
            sensor.session = now.session
        }
        return sensor
    }

    /// The sensor list, written straight into the writer rather than built as dictionaries for `json(_:)`: the
    /// dashboard polls it every 2 s, for 10,000 sensors perhaps.
    func sensorsResponse(_ sensors: [Sensor], mobile: Set<String> = [], looks: [SensorLook]? = nil) -> Response {
        var writer = JSONWriter(capacity: sensors.count * 200 + 2, compact: true)
        writer.raw("[")
        for (index, sensor) in sensors.enumerated() {
            if index > 0 { writer.raw(",") }
            write(sensor, mobile: mobile.contains(sensor.name), look: looks?[index], into: &writer)
        }
        writer.raw("]")
        return json(writer)
    }

    func sensorResponse(_ sensor: Sensor, mobile: Bool = false, status: HTTPResponse.Status = .ok) -> Response {
        var writer = JSONWriter(compact: true)
        write(sensor, mobile: mobile, into: &writer)
        return json(writer, status: status)
    }

    /// The sensors' looks for the dashboard (`SensorLook`): the open alerts and the alert setup decide them.
    func looks(_ sensors: [Sensor]) async -> [SensorLook] {
        let book = (try? await savedAlerts())?.book
        let firing = Set(book?.alerts.values.lazy.filter(\.firing).map(\.sensor) ?? [])
        let setup = alertSetup()
        return sensors.map { SensorLook($0, firing: firing, setup: setup) }
    }

    /// A sensor as a JSON object, keys in alphabetical order: `attributes` when its device sent any, `bands` when it
    /// has them, `mobile` for a mobile sensor and `session` while it records one, `unit` and `value` (a number, or
    /// `null` while it is waiting or offline) for a numeric sensor; in the list, `look` (alert, offline, waiting,
    /// fine), `flags` ("battery 12 %") when any and `room` when it has one.
    private func write(_ sensor: Sensor, mobile: Bool, look: SensorLook? = nil, into writer: inout JSONWriter) {
        var first = true
        writer.raw("{")
        writer.key("added", first: &first)
        writer.timestamp(sensor.added)
        if !sensor.attributes.isEmpty {
            writer.key("attributes", first: &first)
            sensor.attributes.write(into: &writer)
        }
        if let bands = sensor.format.bands {
            writer.key("bands", first: &first)
            writer.string(bands.description)
        }
        if let flags = look?.flags, !flags.isEmpty {
            writer.key("flags", first: &first)
            writer.strings(flags)
        }
        writer.key("kind", first: &first)
        writer.string(sensor.kind.rawValue)
        writer.key("lastUpdated", first: &first)
        if let time = sensor.lastUpdated { writer.timestamp(time) } else { writer.raw("null") }
        if let look {
            writer.key("look", first: &first)
            writer.string(look.state.rawValue)
        }
        if mobile {
            writer.key("mobile", first: &first)
            writer.raw("true")
        }
        writer.key("name", first: &first)
        writer.string(sensor.name)
        if let room = look?.room {
            writer.key("room", first: &first)
            writer.string(room)
        }
        if let session = sensor.session {
            writer.key("session", first: &first)
            session.write(into: &writer)
        }
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
        if sensor.kind == .numeric {
            writer.key("unit", first: &first)
            if let unit = sensor.format.unit { writer.string(unit) } else { writer.raw("null") }
            writer.key("value", first: &first)
            if let value = sensor.value { writer.number(value) } else { writer.raw("null") }
        }
        writer.raw("}")
    }

    func sensor(_ context: HubRequestContext) async throws -> (sensor: Sensor, mobile: Bool) {
        let name = pathName(context, "name")
        guard let sensor = try await readStore().sensor(named: name) else {
            throw HTTPError(.notFound, message: "no sensor named '\(name)'")
        }
        let statuses = snapshot(true).statuses
        return (live(sensor, statuses), statuses[sensor.topic]?.mobile == true)
    }

    func addSensor(_ request: Request, _ context: HubRequestContext) async throws -> Response {
        let body = try await object(
            request, context,
            allowed: [
                "name", "topic", "kind", "silenceTimeout", "value", "map", "unit", "decimals", "range", "bands",
                "availability", "preset", "device",
            ])
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
        // A device that publishes JSON: where its value is and what it means, checked as `hubctl sensors add` does.
        let format: ValueFormat
        do {
            let number = (body["decimals"] as? NSNumber).map { "\($0.doubleValue)" }
            let decimals = try number ?? optionalString(body, "decimals")
            format = try ValueFormat.fields(
                value: try optionalString(body, "value"), map: try optionalString(body, "map"),
                unit: try optionalString(body, "unit"), decimals: decimals, range: try optionalString(body, "range"),
                bands: try optionalString(body, "bands"), knownDefaults: true)
        } catch let error as DeviceFieldError {
            throw HTTPError(.badRequest, message: "\"\(error.field)\": \(error.reason)")
        }
        // As hubctl: a known numeric field (temperature) makes a numeric sensor unless the kind is given.
        let kind =
            body["kind"] == nil
            ? (format.path.flatMap(KnownField.field(at:))?.kind ?? .status) : SensorKind(rawValue: kindText)
        if format.bands != nil && kind != .numeric {
            throw HTTPError(.badRequest, message: "\"bands\": name ranges of a number, for a numeric sensor only")
        }
        if kind == .particulate && !format.isEmpty {
            throw HTTPError(.badRequest, message: "a particulate sensor reads its own formats: no value, map or unit")
        }
        var availability = try optionalString(body, "availability")
        var (topicGiven, kindMade, formatMade) = (topic, kind, format)
        // A device family's preset (`hubctl sensors add --preset`): its topic, format, availability and timeout,
        // with what the body gives one by one on top.
        if let preset = try optionalString(body, "preset") {
            let family = DeviceFamily(rawValue: preset.lowercased())
            guard DeviceFamily.all.contains(family) else {
                throw HTTPError(
                    .badRequest,
                    message: "\"preset\" is one of: \(DeviceFamily.all.map(\.rawValue).joined(separator: ", "))")
            }
            let setup: DeviceFamily.Setup
            do {
                setup = try family.setup(device: try optionalString(body, "device") ?? name, value: format.path)
            } catch {
                throw HTTPError(.badRequest, message: "\"preset\" \(family): \(error)")
            }
            topicGiven = topic ?? setup.topic
            kindMade = body["kind"] == nil ? setup.kind : kind
            var merged = setup.format
            if format.map != nil { merged.map = format.map }
            if format.unit != nil { merged.unit = format.unit }
            if format.decimals != nil { merged.decimals = format.decimals }
            if format.range != nil { merged.range = format.range }
            if format.bands != nil { merged.bands = format.bands }
            formatMade = merged
            availability = availability ?? setup.availability
            silence = silence ?? setup.silenceTimeout
        } else if body["device"] != nil {
            throw HTTPError(.badRequest, message: "\"device\" goes with \"preset\"")
        }
        let template = snapshot(false).topicTemplate
        let silenceTimeout = silence
        let (finalTopic, finalKind, finalFormat, finalAvailability) = (topicGiven, kindMade, formatMade, availability)
        let sensor = try await storeUpdate { document throws(RegistryError) in
            try document.addSensor(
                named: name, topic: finalTopic, template: template, kind: finalKind,
                silenceTimeout: silenceTimeout, format: finalFormat, availability: finalAvailability)
        }
        logger.notice(
            "sensor added over HTTP",
            metadata: ["sensor": "\(sensor.name)", "topic": "\(sensor.topic)", "by": "\(context.identity?.who ?? "api")"])
        return sensorResponse(sensor, status: .created)
    }

    func removeSensor(_ request: Request, _ context: HubRequestContext) async throws -> Response {
        let name = pathName(context, "name")
        _ = try await storeUpdate { document throws(RegistryError) in try document.removeSensor(named: name) }
        logger.notice(
            "sensor removed over HTTP", metadata: ["sensor": "\(name)", "by": "\(context.identity?.who ?? "api")"])
        return Response(status: .noContent)
    }
}
