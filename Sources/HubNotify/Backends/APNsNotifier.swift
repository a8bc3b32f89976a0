import AsyncHTTPClient
import Crypto
import Foundation
import HubCore
import HubSupport
import NIOCore
import NIOHTTP1

/// `apns`: Apple Push Notification service, token-based: one HTTP/2 connection, a JWT signed with the team's `.p8`
/// key (ES256) and reused for 40 minutes, one push per registered device that chose the event.
///
/// 400 BadDeviceToken, 410 Unregistered and DeviceTokenNotForTopic retire the token from the device store; 403
/// ExpiredProviderToken makes a new JWT and retries; 429 and 5xx are retried; anything else fails for good.
struct APNsNotifier: DevicePushBackend {
    let settings: Settings
    let devices: DeviceStore
    let http: HTTPDelivery

    /// Its devices are the APNs tokens (Web Push subscriptions are the webpush backend's).
    static func address(of device: DeviceStore.Device) -> String? { device.token }
    static let noDevices = "no devices are registered (hubctl devices add TOKEN)"

    func send(_ notification: Notification, to device: DeviceStore.Device, at deviceToken: String) async
        -> DeliveryResult
    {
        let token: String
        do {
            token = try settings.signer.token()
        } catch {
            return .failed(reason: "cannot sign the APNs token with the key: \(error)")
        }
        var headers = HTTPHeaders()
        headers.add(name: "authorization", value: "bearer \(token)")
        headers.add(name: "apns-topic", value: settings.bundleID)
        headers.add(name: "apns-push-type", value: "alert")
        headers.add(name: "apns-priority", value: notification.priority >= 3 ? "10" : "5")
        let expires = Int64(Date().timeIntervalSince1970) + Int64(settings.expiration.seconds)
        headers.add(name: "apns-expiration", value: String(settings.expiration == .zero ? 0 : expires))
        if UUID(uuidString: notification.id) != nil { headers.add(name: "apns-id", value: notification.id) }
        if let alert = notification.alert {
            // A later message of the same alert group replaces this one.
            headers.add(name: "apns-collapse-id", value: alert.replaceHandle)
        } else if let collapseID = settings.collapseID {
            let value = headerValue(collapseID.render(notification.event, id: notification.id), limit: 64)
            if !value.isEmpty { headers.add(name: "apns-collapse-id", value: value) }
        }
        headers.add(name: "content-type", value: "application/json")
        let url = "\(settings.server)/3/device/\(deviceToken)"
        let answer: HTTPDelivery.Answer
        do {
            answer = try await http.post(url, headers: headers, body: Self.payload(notification))
        } catch {
            return HTTPDelivery.result(error, what: "APNs")
        }
        let reason = Self.reason(answer.body)
        switch (answer.status, reason) {
        case (200, _):
            return .delivered
        case (410, _), (400, "BadDeviceToken"), (400, "DeviceTokenNotForTopic"):
            _ = try? devices.remove(device.id)
            return .retired(reason: "APNs: \(reason ?? "Unregistered") — device \(device.address.masked) retired")
        case (403, "ExpiredProviderToken"):
            settings.signer.invalidate(token)
            return .retry(reason: "APNs: ExpiredProviderToken, signing a new token", after: .zero)
        case (403, "InvalidProviderToken"), (403, "MissingProviderToken"), (403, "InvalidProviderToken "):
            return .failed(reason: "APNs: \(reason ?? "403") — check team_id, key_id and key_file")
        default:
            let result = HTTPDelivery.result(answer, what: "APNs")
            return result
        }
    }

    /// `{"aps":{"alert":{"title":…,"body":…},"sound":"default"},"id":…,"sensor":…,"event":…,"status":…}`, within
    /// APNs's 4 KiB.
    static func payload(_ notification: Notification) -> [UInt8] {
        var writer = JSONWriter(capacity: 512)
        writer.raw("{\"aps\":{\"alert\":{\"title\":")
        writer.string(Template.clip(notification.title, 256))
        writer.raw(",\"body\":")
        writer.string(Template.clip(notification.body, 2048))
        if notification.alert?.reason == .acknowledged {
            // Replaces the group's notification without a sound or lighting the screen.
            writer.raw("},\"interruption-level\":\"passive\"")
        } else {
            writer.raw("},\"sound\":\"default\"")
        }
        if let alert = notification.alert, !alert.actions.isEmpty {
            // The app registers this category with Acknowledge and Snooze; a tap POSTs the token to the hub.
            writer.raw(",\"category\":\"SENSORHUB_ALERT\",\"thread-id\":")
            writer.string(alert.replaceHandle)
        }
        writer.raw("},")
        notification.writePushFields(into: &writer)
        writer.raw("}")
        return writer.bytes
    }

    static func reason(_ body: String) -> String? {
        struct Body: Decodable { var reason: String? }
        return (try? JSONDecoder().decode(Body.self, from: Data(body.utf8)))?.reason
    }
}

/// Makes and caches the provider JWT: `{"alg":"ES256","kid":…}.{"iss":team,"iat":…}` signed with P-256.
final class APNsTokenSigner: Sendable {
    /// Apple refuses tokens older than an hour and refreshes more often than every 20 minutes.
    static let lifetime: Duration = .seconds(40 * 60)

    let keyID: String
    let teamID: String
    private let state: Locked<(key: P256.Signing.PrivateKey, cached: (token: String, made: ContinuousClock.Instant)?)>

    init(keyID: String, teamID: String, pem: String) throws {
        self.keyID = keyID
        self.teamID = teamID
        self.state = Locked((try P256.Signing.PrivateKey(pemRepresentation: pem), nil))
    }

    func token(now: Date = Date()) throws -> String {
        try state.withLock { state in
            let key = state.key
            var cached = state.cached
            defer { state.cached = cached }
            if let cached, ContinuousClock.now - cached.made < Self.lifetime { return cached.token }
            let token = try ES256JWT.sign(
                header: #"{"alg":"ES256","kid":"\#(keyID)"}"#,
                claims: #"{"iss":"\#(teamID)","iat":\#(Int64(now.timeIntervalSince1970))}"#, with: key)
            cached = (token, .now)
            return token
        }
    }

    /// Forgets `token` if it is still the cached one (several workers may report the same expired token).
    func invalidate(_ token: String) {
        state.withLock { if $0.cached?.token == token { $0.cached = nil } }
    }
}

extension APNsNotifier {
    struct Settings: BackendSettings {
        static let type = "apns"
        static let takesBack = true
        static let summary =
            "Apple push notifications to the iPhones and iPads registered with `hubctl devices add`, each getting the"
            + " events it chose."
        static let keys = [
            ConfigKey(
                "environment", "one of: production, sandbox", default: "production",
                "Apple's production server, or its sandbox for development builds of the app."),
            ConfigKey(
                "server", "URL",
                "Another APNs-compatible server (a test one) in place of the one `environment` names."),
            ConfigKey(
                "bundle_id", "text",
                "Required. The app's bundle id (`org.example.SensorHub`), sent as `apns-topic`."),
            ConfigKey(
                "team_id", "text",
                "Required. Your Apple developer team's id: 10 capital letters or digits, as Apple shows it."),
            ConfigKey(
                "key_id", "text",
                "Required. The id of the key in `key_file`: 10 capital letters or digits, as Apple shows it."),
            ConfigKey(
                "key_file", "file path",
                "Required. The token-signing key from Apple (`AuthKey_<key id>.p8`, a P-256 private key in PEM)."),
            ConfigKey(
                "expiration", "duration 0s–30d", default: "24h",
                "How long Apple keeps a push for a device that is off; `0s`: delivered at once or never."),
            ConfigKey(
                "collapse_id", "template", default: "\"{sensor}\"",
                "Pushes with the same collapse id replace each other on the device; an alert group's messages use the"
                    + " group's own."),
            .caFile(for: "the server"),
        ]
        /// `https://api.push.apple.com`, `https://api.sandbox.push.apple.com`, or another for tests.
        var server: String
        var bundleID: String
        var signer: APNsTokenSigner
        /// How long APNs keeps a push for an offline phone.
        var expiration: Duration
        /// Pushes with the same collapse id replace each other on the phone.
        var collapseID: Template?
        var caFile: String?

        init(_ node: ConfigNode) throws(ConfigurationError) {
            let hosts = ["production": "https://api.push.apple.com", "sandbox": "https://api.sandbox.push.apple.com"]
            let host = try node["environment"].value("production or sandbox") { hosts[$0] } ?? hosts["production"]!
            let keyNode = node["key_file"]
            let keyFile = try keyNode.required { try $0.filePath() }
            guard let pem = try? String(contentsOfFile: keyFile, encoding: .utf8) else {
                throw keyNode.invalidValue(keyFile, "cannot read the file (the .p8 key from Apple)")
            }
            func appleID(_ key: String) throws(ConfigurationError) -> String {
                try node[key].required { node throws(ConfigurationError) in
                    try node.value("10 capital letters or digits, as Apple shows it") {
                        $0.range(of: #"^[A-Z0-9]{10}$"#, options: .regularExpression) != nil ? $0 : nil
                    }
                }
            }
            let keyID = try appleID("key_id")
            let teamID = try appleID("team_id")
            do {
                signer = try APNsTokenSigner(keyID: keyID, teamID: teamID, pem: pem)
            } catch {
                throw keyNode.invalidValue(keyFile, "not a P-256 private key in PEM (.p8): \(error)")
            }
            server = try node["server"].url() ?? host
            bundleID = try node["bundle_id"].required { try $0.string() }
            expiration = try node["expiration"].duration(in: .zero...(.seconds(30 * 86_400))) ?? .seconds(86_400)
            collapseID = try node["collapse_id"].template() ?? Template.literal("{sensor}")
            caFile = try node["ca_file"].filePath()
        }

        func makeNotifier(_ context: BackendContext) throws(ConfigurationError) -> any Notifier {
            APNsNotifier(
                settings: self, devices: DeviceStore(directory: context.stateDirectory),
                http: try context.http(caFile: caFile, http2: true))
        }
    }
}
