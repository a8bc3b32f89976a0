import Foundation
import HubCore
import HubSupport
import Hummingbird
import NIOCore

/// The dashboard's discovery: what `hubctl discover` does, from the browser. hubd listens on a short connection of
/// its own for Zigbee2MQTT, Tasmota, ESPHome and Shelly devices, answers what it heard against the registry (the
/// JSON `hubctl discover --json` prints), and adds the ones a person picks, as `hubctl discover --add` would.
extension HubAPI {
    /// How long a discovery may listen, at most (a page waits for the answer).
    static let longestDiscovery = 30.0

    /// `GET /api/v1/discover?seconds=5`: the broker's retained messages, then `seconds` of live ones.
    func discoverDevices(_ request: Request) async throws -> Response {
        guard let discover else { throw HTTPError(.serviceUnavailable, message: "no hub runs to listen on the broker") }
        var seconds = 5.0
        if let text = request.uri.queryParameters.get("seconds") {
            guard let number = Double(String(text)), number >= 0, number <= Self.longestDiscovery else {
                throw HTTPError(.badRequest, message: "seconds is from 0 to \(Int(Self.longestDiscovery))")
            }
            seconds = number
        }
        guard
            discovery.withLock({ state in
                if state.listening { return false }
                state.listening = true
                return true
            })
        else {
            throw HTTPError(.conflict, message: "a discovery is under way; try again when it ends")
        }
        defer { discovery.withLock { $0.listening = false } }
        let heard: DeviceDiscovery
        do {
            heard = try await discover(.milliseconds(Int(seconds * 1000)))
        } catch {
            throw HTTPError(.badGateway, message: "the broker can't be listened to: \(error)")
        }
        let report = DiscoveryReport(heard, document: try await readStore())
        // What a person may add next: the devices heard, by topic, until the next discovery.
        discovery.withLock { $0.heard = Dictionary(report.rows.map { ($0.device.setup.topic, $0.device) }) { $1 } }
        return Response(
            status: .ok, headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: report.json)))
    }

    /// `POST /api/v1/discover/add {"topics": [...]}`: adds the sensors of devices the last discovery heard, all or
    /// none (`hubctl discover --add`); 404 for a topic it did not hear.
    func addDiscovered(_ request: Request, _ context: HubRequestContext) async throws -> Response {
        let body = try await object(request, context, allowed: ["topics"])
        guard let topics = body["topics"] as? [String], !topics.isEmpty else {
            throw HTTPError(.badRequest, message: "\"topics\" is a list of the devices' topics, from the discovery")
        }
        let heard = discovery.withLock { $0.heard }
        var devices: [DiscoveredDevice] = []
        for topic in topics {
            guard let device = heard[topic] else {
                throw HTTPError(.notFound, message: "the last discovery heard no device on '\(topic)': discover again")
            }
            devices.append(device)
        }
        let chosen = devices
        let added = try await storeUpdate { document throws(RegistryError) in
            var added: [Sensor] = []
            for device in chosen where document.sensor(onTopic: device.setup.topic) == nil {
                added.append(try document.addDiscovered(device))
            }
            return added
        }
        logger.notice(
            "discovered sensors added over HTTP",
            metadata: [
                "sensors": "\(added.map(\.name).joined(separator: ", "))", "by": "\(context.identity?.who ?? "api")",
            ])
        return json(added.map { AddedSensor(name: $0.name, topic: $0.topic) }, status: .created)
    }

    /// A sensor discovery added: `{"name", "topic"}`.
    struct AddedSensor: Encodable {
        var name: String
        var topic: String
    }
}

/// A discovery under way, and what the last one heard.
struct DiscoveryState: Sendable {
    var listening = false
    var heard: [String: DiscoveredDevice] = [:]
}
