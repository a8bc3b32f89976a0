import Crypto
import Foundation
import HubCore
import NIOHTTP1

/// `webpush`: Web Push (RFC 8030) to the browsers that subscribed on the dashboard, each message encrypted for its
/// browser alone (RFC 8291) and signed for the push service with the hub's VAPID key (RFC 8292). One push per
/// subscribed device whose choice of sensors and events wants the event.
///
/// 201 (and 200, 202) delivered; 404 and 410 mean the browser unsubscribed: the device is removed and the
/// notification retired; 429 and 5xx are retried after `Retry-After`; 413 (too large), 400, 401 and 403 (a VAPID
/// key or subject the service refuses) fail for good.
struct WebPushNotifier: DevicePushBackend {
    let settings: Settings
    let signer: VAPIDSigner
    let devices: DeviceStore
    let http: HTTPDelivery

    /// Its devices are the browsers' subscriptions (APNs tokens are the apns backend's).
    static func address(of device: DeviceStore.Device) -> WebPushSubscription? { device.subscription }
    static let noDevices = "no browser has subscribed (the dashboard's \"Notify me on this device\")"

    func send(_ notification: Notification, to device: DeviceStore.Device, at subscription: WebPushSubscription)
        async -> DeliveryResult
    {
        let service =
            (URL(string: subscription.endpoint)?.host).map { "push service \($0)" } ?? "push service"
        let body: [UInt8]
        let authorization: String
        do {
            guard let p256dh = base64URLDecoded(subscription.p256dh),
                let auth = base64URLDecoded(subscription.auth)
            else {
                throw WebPushError(.badSubscription, "the subscription's keys are not base64url")
            }
            body = try WebPushEncryption(p256dh: p256dh, auth: auth).seal(Self.payload(notification))
            authorization = try signer.authorization(for: subscription.endpoint)
        } catch {
            return .failed(reason: "web push to device \(device.id): \(error)")
        }
        var headers = HTTPHeaders()
        headers.add(name: "Authorization", value: authorization)
        headers.add(name: "TTL", value: String(Int64(settings.ttl.seconds)))
        headers.add(name: "Urgency", value: settings.urgency ?? Self.urgency(notification.priority))
        headers.add(name: "Content-Encoding", value: "aes128gcm")
        headers.add(name: "Content-Type", value: "application/octet-stream")
        if let topic = settings.topic {
            headers.add(
                name: "Topic", value: Self.topic(topic.render(notification.event, id: notification.id)))
        }
        let answer: HTTPDelivery.Answer
        do {
            answer = try await http.post(subscription.endpoint, headers: headers, body: body)
        } catch {
            return HTTPDelivery.result(error, what: service)
        }
        switch answer.status {
        case 200, 201, 202:
            return .delivered
        case 404, 410:
            _ = try? devices.remove(device.id)
            return .retired(
                reason:
                    "\(service) answered HTTP \(answer.status): the browser unsubscribed — device \(device.id) removed"
            )
        case 413:
            return .failed(
                reason: "\(service) answered HTTP 413: the message is too large (\(body.count) bytes)")
        case 400, 401, 403:
            let result = HTTPDelivery.result(answer, what: service)
            return .failed(
                reason:
                    "\(result.reason) — check subject (\(settings.subject)) and the VAPID key: a browser that "
                    + "subscribed with another key must subscribe again")
        default:
            return HTTPDelivery.result(answer, what: service)
        }
    }

    /// RFC 8030 §5.3 urgency from the rule's priority: 1 very-low, 2 low, 3 normal, 4 and 5 high.
    static func urgency(_ priority: Int) -> String {
        switch priority {
        case ...1: "very-low"
        case 2: "low"
        case 3: "normal"
        default: "high"
        }
    }

    /// RFC 8030 §5.4: at most 32 characters of the base64url alphabet. A hash of the rendered text, so that any
    /// sensor name makes a valid topic and the same name the same one.
    static func topic(_ text: String) -> String {
        base64URL(Array(SHA256.hash(data: Array(text.utf8)).prefix(24)))
    }

    /// `{"title":…,"body":…,"id":…,"sensor":…,"event":…,"status":…}`, what the dashboard's service worker shows:
    /// the body shortened until the encrypted message fits the push services' 4096 bytes.
    static func payload(_ notification: Notification) -> [UInt8] {
        var bodyLimit = 2048
        while true {
            var writer = JSONWriter(capacity: 512, compact: true)
            writer.raw("{\"title\":")
            writer.string(Template.clip(notification.title, 256))
            writer.raw(",\"body\":")
            writer.string(Template.clip(notification.body, bodyLimit))
            writer.raw(",")
            notification.writePushFields(into: &writer)
            writer.raw("}")
            if writer.bytes.count <= WebPushEncryption.maximumPlaintext || bodyLimit < 16 {
                return writer.bytes
            }
            bodyLimit /= 2
        }
    }
}

extension DeliveryResult {
    /// The reason a result gives, or "" for a delivery.
    var reason: String {
        switch self {
        case .delivered: ""
        case .retry(let reason, _), .failed(let reason), .retired(let reason): reason
        }
    }
}

extension NotificationRouter {
    /// The VAPID public key (base64url) that browsers subscribe with, as `applicationServerKey`: the first `webpush`
    /// backend's, by name; `nil` without one.
    public var webPushPublicKey: String? {
        queues.sorted { $0.key < $1.key }.lazy.compactMap {
            ($0.value.notifier as? WebPushNotifier)?.signer.publicKey
        }
        .first
    }
}

extension WebPushNotifier {
    struct Settings: BackendSettings {
        static let type = "webpush"
        static let takesBack = true
        static let summary =
            "Web Push to the browsers subscribed on the dashboard (Notify me on this device), each getting the events"
            + " it chose."
        static let keys = [
            ConfigKey(
                "subject", "text",
                "Required. Whom the push services' operators contact about this hub's pushes: a `mailto:` address or"
                    + " an `https:` URL (`mailto:you@example.org`)."),
            ConfigKey(
                "key_file", "file path",
                "The VAPID key browsers subscribe with, a P-256 private key in PEM; without it, `vapid-key` in the"
                    + " state directory, made on first use. Browsers must subscribe again when it changes."),
            ConfigKey(
                "ttl", "duration 0s–28d", default: "24h",
                "How long a push service keeps a push for a browser that is off."),
            ConfigKey(
                "urgency", "one of: very-low, low, normal, high",
                "The `Urgency` of every push; without it, from the rule's priority (1 very-low, 2 low, 3 normal, 4"
                    + " and 5 high)."),
            ConfigKey(
                "topic", "template",
                "A topic (`\"{sensor}\"`): a newer push with the same topic replaces one still waiting at the push"
                    + " service. None when left out."),
            .caFile(for: "the push services"),
        ]
        /// `mailto:` or `https:`: whom the push service's operators contact about this hub's pushes.
        var subject: String
        /// A P-256 key in PEM; `nil`: `vapid-key` in the state directory, made on first use.
        var keyFile: String?
        /// The key in `keyFile`, read when the settings are (`P256.Signing.PrivateKey` is not `Sendable`).
        var keyBytes: [UInt8]?
        /// How long the push service keeps a message for a browser that is offline.
        var ttl: Duration
        /// A fixed `Urgency`; `nil`: from the rule's priority.
        var urgency: String?
        /// Messages with the same topic replace each other while they wait at the push service.
        var topic: Template?
        var caFile: String?

        init(_ node: ConfigNode) throws(ConfigurationError) {
            subject = try node["subject"].required { node throws(ConfigurationError) in
                try node.value("a mailto: address or an https: URL (RFC 8292), like mailto:you@example.org") {
                    VAPIDSigner.checkSubject($0)
                }
            }
            let keyNode = node["key_file"]
            keyFile = try keyNode.filePath()
            if let keyFile {
                do {
                    keyBytes = Array(try VAPIDSigner.loadKey(path: keyFile, create: false).rawRepresentation)
                } catch {
                    throw keyNode.invalidValue(keyFile, error.reason)
                }
            }
            ttl = try node["ttl"].duration(in: .zero...Duration.seconds(28 * 86_400)) ?? .seconds(86_400)
            urgency = try node["urgency"].value("very-low, low, normal or high") {
                ["very-low", "low", "normal", "high"].contains($0) ? $0 : nil
            }
            topic = try node["topic"].template()
            caFile = try node["ca_file"].filePath()
        }

        func makeNotifier(_ context: BackendContext) throws(ConfigurationError) -> any Notifier {
            let path = context.stateDirectory + "/" + VAPIDSigner.keyFileName
            let key: P256.Signing.PrivateKey
            if let keyBytes, let given = try? P256.Signing.PrivateKey(rawRepresentation: keyBytes) {
                key = given
            } else {
                do {
                    key = try VAPIDSigner.loadKey(path: path, create: true)
                } catch {
                    throw .invalid(
                        file: nil, key: "notifiers.backends.\(context.name).key_file", line: nil,
                        reason: error.reason)
                }
            }
            return WebPushNotifier(
                settings: self, signer: VAPIDSigner(key: key, subject: subject),
                devices: DeviceStore(directory: context.stateDirectory),
                http: try context.http(caFile: caFile))
        }
    }
}
