import Foundation
import HubNotify
import Hummingbird

/// `/api/v1/devices`: phones registering for push (the original app's `{"ID": token}` too).
extension HubAPI {
    struct DeviceAnswer: Encodable {
        var added: Bool
        /// A key id, never the token.
        var id: String
    }

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
            result = try store.add(.apns(token: token))
        } catch {
            if case .invalidToken(let reason) = error { throw HTTPError(.badRequest, message: reason) }
            throw HTTPError(.internalServerError, message: error.description)
        }
        return json(DeviceAnswer(added: result.added, id: result.device.id), status: result.added ? .created : .ok)
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
}
