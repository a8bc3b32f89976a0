import HubCore

/// A push backend (`apns`, `webpush`): one copy of each notification per registered device of its kind that chose
/// the event, each sent to that device's address.
protocol DevicePushBackend: HTTPBacked {
    /// Where this backend sends to: an APNs token, a Web Push subscription.
    associatedtype Address
    var devices: DeviceStore { get }
    /// The device's address for this backend; `nil` for another backend's device.
    static func address(of device: DeviceStore.Device) -> Address?
    /// What the router says when there is no device of this kind at all.
    static var noDevices: String { get }
    /// One attempt to deliver `notification` to `device` at `address`.
    func send(_ notification: Notification, to device: DeviceStore.Device, at address: Address) async -> DeliveryResult
}

extension DevicePushBackend {
    func expand(_ notification: Notification) throws -> [Notification] {
        let mine = try devices.devices().filter { Self.address(of: $0) != nil }
        guard !mine.isEmpty else { throw NoRecipients(Self.noDevices) }
        return mine.filter { $0.choice.wants(notification.event) }.map { device in
            var copy = notification
            copy.target = device.id
            return copy
        }
    }

    func send(_ notification: Notification) async -> DeliveryResult {
        let device: DeviceStore.Device?
        do {
            device = try devices.devices().first { $0.id == notification.target }
        } catch {
            return .retry(reason: "cannot read the devices: \(error)")
        }
        guard let device, let address = Self.address(of: device) else {
            return .failed(reason: "device \(notification.target ?? "?") was removed")
        }
        return await send(notification, to: device, at: address)
    }
}

extension Notification {
    /// `"id":…,"sensor":…,"event":…,"status":…`: what a push carries besides its text, for the app or the service
    /// worker (each value clipped: a push is at most 4 KiB).
    func writePushFields(into writer: inout JSONWriter) {
        writer.raw("\"id\":")
        writer.string(id)
        writer.raw(",\"sensor\":")
        writer.string(Template.clip(event.sensor, 256))
        writer.raw(",\"event\":")
        writer.string(event.kind.rawValue)
        writer.raw(",\"status\":")
        writer.string(Template.clip(event.newStatus, 512))
        guard let alert else { return }
        // An alert group's messages replace each other (the service worker's tag), and carry their buttons.
        writer.raw(",\"group\":")
        writer.string(alert.replaceHandle)
        writer.raw(",\"reason\":")
        writer.string(alert.reason.rawValue)
        writer.raw(",\"actions\":[")
        for (index, action) in alert.actions.enumerated() {
            if index > 0 { writer.raw(",") }
            writer.raw("{\"action\":")
            writer.string(index == 0 ? "acknowledge" : "snooze")
            writer.raw(",\"title\":")
            writer.string(action.title)
            writer.raw(",\"token\":")
            writer.string(action.token)
            writer.raw("}")
        }
        writer.raw("]")
    }
}
