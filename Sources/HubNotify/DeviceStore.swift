import Crypto
import Foundation
import HubCore

/// The phones and browsers that get push notifications: APNs device tokens and Web Push subscriptions, each with
/// its own choice of sensors and events, encrypted at rest and de-duplicated.
///
/// `devices.json` in the state directory holds each address sealed with AES-GCM (a random 12-byte nonce, then the
/// ciphertext and tag, as hex): the token, or the whole subscription as JSON, under a 256-bit key in `device-key`
/// (mode 0600, made on first use). A device's id is an HMAC of its token or endpoint under that key: stable,
/// unique, and telling nothing about the address. The choice is kept in the clear. Changes are made under `flock`
/// and written crash-safely, like the registry. Files of schema 1 (APNs tokens only) are read; schema 2 is written.
public struct DeviceStore: Sendable {
    public static let fileName = "devices.json"
    public static let keyFileName = "device-key"
    /// The schema this store writes.
    static let schemaVersion = 2

    public let directory: String
    public var path: String { directory + "/" + Self.fileName }
    var keyPath: String { directory + "/" + Self.keyFileName }

    public init(directory: String) {
        self.directory = directory
    }

    /// Where a device's notifications go.
    public enum Address: Sendable, Hashable {
        /// An iPhone's APNs device token (hexadecimal).
        case apns(token: String)
        /// A browser's Web Push subscription.
        case webPush(WebPushSubscription)

        /// `apns` or `webpush`, as lists and devices.json name it.
        public var kind: String {
            switch self {
            case .apns: return "apns"
            case .webPush: return "webpush"
            }
        }

        /// Enough to recognise, not enough to use: the token's ends, or the push service's host.
        public var masked: String {
            switch self {
            case .apns(let token): return "\(token.prefix(8))…\(token.suffix(4))"
            case .webPush(let subscription): return subscription.host
            }
        }

        /// What the id is an HMAC of: the token, or the endpoint.
        var identity: String {
            switch self {
            case .apns(let token): return token
            case .webPush(let subscription): return subscription.endpoint
            }
        }

        /// What the API and `hubctl devices add` take: `{"token": …}`, the original app's `{"ID": …}`, or a
        /// browser's `PushSubscription.toJSON()`; other keys (`sensors`, `events`) are the caller's.
        public init(json: [String: Any]) throws(DeviceError) {
            let subscription = json["endpoint"] != nil || json["keys"] != nil
            if subscription && (json["token"] != nil || json["ID"] != nil) {
                throw .invalidSubscription("a token and a subscription at once: give one of them")
            } else if subscription {
                self = .webPush(try WebPushSubscription(json: json))
            } else if let token = (json["token"] ?? json["ID"]) {
                guard let token = token as? String else { throw .invalidToken("\"token\" must be a string") }
                self = .apns(token: try DeviceStore.normalise(token))
            } else {
                throw .invalidToken(
                    "say \"token\" (an APNs device token) or give a Web Push subscription (\"endpoint\", \"keys\")")
            }
        }

        /// A token, or a subscription's JSON (text that starts with `{`), as `hubctl devices add` takes it.
        public init(text: String) throws(DeviceError) {
            let text = text.trimmingCharacters(in: .whitespacesAndNewlines)
            guard text.hasPrefix("{") else {
                self = .apns(token: try DeviceStore.normalise(text))
                return
            }
            guard let json = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] else {
                throw .invalidSubscription("not a JSON object (the browser's PushSubscription.toJSON())")
            }
            try self.init(json: json)
        }

        /// The same address with a checked, normalised token.
        func normalised() throws(DeviceError) -> Address {
            guard case .apns(let token) = self else { return self }
            return .apns(token: try DeviceStore.normalise(token))
        }
    }

    /// One registered device, decrypted.
    public struct Device: Sendable, Hashable {
        public var id: String
        public var address: Address
        public var choice: DeviceChoice
        public var added: Timestamp

        /// The APNs token; `nil` for a Web Push subscription.
        public var token: String? {
            guard case .apns(let token) = address else { return nil }
            return token
        }

        /// The Web Push subscription; `nil` for an APNs token.
        public var subscription: WebPushSubscription? {
            guard case .webPush(let subscription) = address else { return nil }
            return subscription
        }
    }

    /// Checks and normalises a token: hexadecimal, 32 to 100 bytes (APNs tokens are 32 today; Apple says they may
    /// grow).
    public static func normalise(_ token: String) throws(DeviceError) -> String {
        let hex = token.trimmingCharacters(in: .whitespacesAndNewlines).replacingOccurrences(of: " ", with: "")
            .lowercased()
        guard !hex.isEmpty, hex.allSatisfy({ $0.isHexDigit && $0.isASCII }) else {
            throw .invalidToken("a device token is hexadecimal digits (0-9, a-f)")
        }
        guard hex.count % 2 == 0, (64...200).contains(hex.count) else {
            throw .invalidToken("a device token is 64 to 200 hexadecimal digits; this one has \(hex.count)")
        }
        return hex
    }

    /// Every device that decrypts; `undecryptable` counts those that don't (a replaced key), which are skipped.
    public func devices() throws(DeviceError) -> [Device] {
        try readDevices().devices
    }

    func readDevices() throws(DeviceError) -> (devices: [Device], undecryptable: Int) {
        guard let file = try readFile() else { return ([], 0) }
        guard !file.devices.isEmpty else { return ([], 0) }
        let key = try loadKey(create: false)
        var devices: [Device] = []
        var undecryptable = 0
        for entry in file.devices {
            if let address = try? open(entry, key: key) {
                devices.append(Device(id: entry.id, address: address, choice: entry.choice, added: entry.added))
            } else {
                undecryptable += 1
            }
        }
        return (devices, undecryptable)
    }

    /// Adds a device unless it is there already; returns the device and whether it was new.
    ///
    /// A device added again keeps its id and when it was added; its choice changes only when `choice` is given,
    /// and a subscription's keys are replaced with the new ones.
    /// - Parameters:
    ///   - choice: what it wants; `nil` (not given) is everything for a new device and no change for a known one.
    @discardableResult
    public func add(_ address: Address, choice: DeviceChoice? = nil, now: Timestamp = .now) throws(DeviceError) -> (
        device: Device, added: Bool
    ) {
        let address = try address.normalised()
        let choice = try choice?.validated()
        return try update { file, key throws(DeviceError) in
            let id = Self.id(of: address.identity, key: key)
            let sealed = try seal(address, key: key)
            if let index = file.devices.firstIndex(where: { $0.id == id }) {
                var entry = file.devices[index]
                if let choice { entry.choice = choice }
                if (try? open(entry, key: key)) != address { entry.sealed = sealed }
                file.devices[index] = entry
                return (Device(id: id, address: address, choice: entry.choice, added: entry.added), false)
            }
            let entry = File.Entry(
                id: id, kind: address.kind, sealed: sealed, choice: choice ?? .everything, added: now)
            file.devices.append(entry)
            return (Device(id: id, address: address, choice: entry.choice, added: now), true)
        }
    }

    /// Replaces the choice of the device with this id, token or endpoint; `nil` when there is no such device.
    @discardableResult
    public func setChoice(_ idOrToken: String, _ choice: DeviceChoice) throws(DeviceError) -> Device? {
        let choice = try choice.validated()
        return try editChoice(idOrToken) { _ throws(DeviceError) in choice }
    }

    /// Replaces the parts given of a device's choice (`hubctl devices edit`, `PATCH`); `nil` when there is no
    /// such device.
    /// - Parameters:
    ///   - sensors: names or globs; `[]` for every sensor, `nil` to keep them.
    ///   - events: event kinds by name; `[]` for every kind, `nil` to keep them.
    @discardableResult
    public func setChoice(_ idOrToken: String, sensors: [String]?, events: [String]?) throws(DeviceError) -> Device? {
        _ = try DeviceChoice.everything.replacing(sensors: sensors, events: events)
        return try editChoice(idOrToken) { choice throws(DeviceError) in
            try choice.replacing(sensors: sensors, events: events)
        }
    }

    private func editChoice(_ idOrToken: String, _ edit: (DeviceChoice) throws(DeviceError) -> DeviceChoice)
        throws(DeviceError) -> Device?
    {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        return try update { file, key throws(DeviceError) in
            let id = Self.id(lookingUp: idOrToken, key: key)
            guard let index = file.devices.firstIndex(where: { $0.id == id }) else { return nil }
            let entry = file.devices[index]
            let address = try open(entry, key: key)
            file.devices[index].choice = try edit(entry.choice)
            return Device(id: id, address: address, choice: file.devices[index].choice, added: entry.added)
        }
    }

    /// Removes the device with this id, token or endpoint; `false` when there was none.
    @discardableResult
    public func remove(_ idOrToken: String) throws(DeviceError) -> Bool {
        guard FileManager.default.fileExists(atPath: path) else { return false }
        return try update { file, key throws(DeviceError) in
            let id = Self.id(lookingUp: idOrToken, key: key)
            let before = file.devices.count
            file.devices.removeAll { $0.id == id }
            return file.devices.count != before
        }
    }

    // MARK: - Files

    static func id(of identity: String, key: SymmetricKey) -> String {
        String(HMAC<SHA256>.authenticationCode(for: Array(identity.utf8), using: key).hexString.prefix(16))
    }

    /// The id a user's words name: an id as lists show it, a token, or a subscription's endpoint.
    static func id(lookingUp idOrToken: String, key: SymmetricKey) -> String {
        let wanted = idOrToken.trimmingCharacters(in: .whitespaces)
        if let token = try? normalise(wanted) { return id(of: token, key: key) }
        if wanted.contains("://") { return id(of: wanted, key: key) }
        return wanted.lowercased()
    }
}
