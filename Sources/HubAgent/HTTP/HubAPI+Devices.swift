import Foundation
import HubCore
import HubNotify
import Hummingbird

/// `/api/v1/devices`: phones and browsers registering for push (an APNs token, the original app's `{"ID": token}`,
/// or a browser's PushSubscription), each with its choice of sensors and events. No answer carries a secret.
extension HubAPI {
    /// A device as the API shows it: its id, kind, masked address and choice, never the token or subscription.
    struct DeviceView: Encodable {
        var id: String
        /// `apns` or `webpush`.
        var kind: String
        /// The token's ends, or the push service's host.
        var masked: String
        var choice: DeviceChoice
        var added: Timestamp

        init(_ device: DeviceStore.Device) {
            id = device.id
            kind = device.address.kind
            masked = device.address.masked
            choice = device.choice
            added = device.added
        }
    }

    /// What `POST` answers: whether the device was new (`added`, as before choices), its id and its choice (the
    /// caller knows the address it sent).
    struct DeviceAnswer: Encodable {
        var added: Bool
        /// A key id, never the token.
        var id: String
        var choice: DeviceChoice
    }

    func listDevices(_ request: Request) throws -> Response {
        return json(try deviceCall { store throws(DeviceError) in try store.devices().map(DeviceView.init) })
    }

    func addDevice(_ request: Request, _ context: HubRequestContext) async throws -> Response {
        // The original app sent {"ID": token}; {"token": …} is the documented form; a browser posts its subscription.
        let body = try await object(
            request, context, allowed: ["token", "ID", "endpoint", "keys", "expirationTime", "sensors", "events"])
        let given = try choiceFields(body)
        let (device, added) = try deviceCall { store throws(DeviceError) in
            let address = try DeviceStore.Address(json: body)
            let choice =
                given.sensors == nil && given.events == nil
                ? nil : try DeviceChoice.everything.replacing(sensors: given.sensors, events: given.events)
            return try store.add(address, choice: choice)
        }
        return json(DeviceAnswer(added: added, id: device.id, choice: device.choice), status: added ? .created : .ok)
    }

    func editDevice(_ request: Request, _ context: HubRequestContext) async throws -> Response {
        let id = pathName(context, "id")
        let given = try choiceFields(try await object(request, context, allowed: ["sensors", "events"]))
        guard given.sensors != nil || given.events != nil else {
            throw HTTPError(.badRequest, message: "say what to change: \"sensors\", \"events\" or both")
        }
        let device = try deviceCall { store throws(DeviceError) in
            try store.setChoice(id, sensors: given.sensors, events: given.events)
        }
        guard let device else { throw HTTPError(.notFound, message: "no such device") }
        return json(DeviceView(device))
    }

    func removeDevice(_ request: Request, _ context: HubRequestContext) async throws -> Response {
        let id = pathName(context, "id")
        guard try deviceCall({ store throws(DeviceError) in try store.remove(id) }) else {
            throw HTTPError(.notFound, message: "no such device")
        }
        return Response(status: .noContent)
    }

    /// `"sensors"` and `"events"`, each checked on its own so that a 400 names the field; `nil` when absent.
    func choiceFields(_ body: [String: Any]) throws -> (sensors: [String]?, events: [String]?) {
        func strings(_ key: String) throws -> [String]? {
            guard let value = body[key], !(value is NSNull) else { return nil }
            guard let items = value as? [Any], let texts = items as? [String], items.count == texts.count else {
                throw HTTPError(.badRequest, message: "\"\(key)\" must be an array of strings ([] for all)")
            }
            do throws(DeviceError) {
                let everything = DeviceChoice.everything
                _ = try key == "sensors" ? everything.replacing(sensors: texts) : everything.replacing(events: texts)
            } catch {
                guard case .invalidChoice(let reason) = error else {
                    throw HTTPError(.badRequest, message: error.description)
                }
                throw HTTPError(.badRequest, message: "\"\(key)\": \(reason)")
            }
            return texts
        }
        return (try strings("sensors"), try strings("events"))
    }

    /// Runs `body` on the device store: bad input is a 400 with its reason, anything else a 500.
    func deviceCall<T>(_ body: (DeviceStore) throws(DeviceError) -> T) throws -> T {
        do {
            return try body(DeviceStore(directory: stateDirectory))
        } catch {
            switch error {
            case .invalidToken(let reason), .invalidSubscription(let reason), .invalidChoice(let reason):
                throw HTTPError(.badRequest, message: reason)
            case .damaged, .system, .crypto:
                throw HTTPError(.internalServerError, message: error.description)
            }
        }
    }
}
