import Foundation
import HubCore
import NIOHTTP1

/// `webhook`: POSTs the notification as JSON, optionally signed with HMAC-SHA256. With `batch` above 1, a request
/// carries a JSON array of the notifications waiting (up to `batch`, never waiting for more), and the answer counts
/// for all of them.
struct WebhookNotifier: HTTPBacked {
    let settings: Settings
    let http: HTTPDelivery

    var batchSize: Int { settings.batch }

    func send(_ notification: Notification) async -> DeliveryResult {
        await send(batch: [notification])[0]
    }

    func send(batch notifications: [Notification]) async -> [DeliveryResult] {
        var headers = HTTPHeaders()
        for (name, value) in settings.headers { headers.add(name: name, value: value) }
        headers.replaceOrAdd(name: "Content-Type", value: "application/json")
        let body: [UInt8]
        if batchSize > 1 {
            // The ids and events are in the array's objects; a header with a hundred ids would not help anyone.
            body = Self.array(notifications.map(\.json))
            headers.replaceOrAdd(name: "X-SensorHub-Batch", value: String(notifications.count))
        } else {
            body = notifications[0].json
            headers.replaceOrAdd(name: "X-SensorHub-Id", value: notifications[0].id)
            headers.replaceOrAdd(name: "X-SensorHub-Event", value: notifications[0].event.kind.rawValue)
        }
        if let secret = settings.secret {
            headers.replaceOrAdd(name: "X-SensorHub-Signature-256", value: "sha256=" + hmacSHA256Hex(key: secret, body))
        }
        let result: DeliveryResult
        do {
            result = HTTPDelivery.result(
                try await http.post(settings.url, headers: headers, body: body), what: settings.url)
        } catch {
            result = HTTPDelivery.result(error, what: settings.url)
        }
        return Array(repeating: result, count: notifications.count)
    }

    /// `[a,b,…]` from JSON objects.
    static func array(_ objects: [[UInt8]]) -> [UInt8] {
        var body: [UInt8] = [UInt8(ascii: "[")]
        body.reserveCapacity(objects.reduce(2) { $0 + $1.count + 1 })
        for (index, object) in objects.enumerated() {
            if index > 0 { body.append(UInt8(ascii: ",")) }
            body += object
        }
        body.append(UInt8(ascii: "]"))
        return body
    }

}

extension WebhookNotifier {
    struct Settings: BackendSettings {
        static let type = "webhook"
        static let summary = "A POST of each notification as JSON to a URL of your own, optionally signed."
        static let keys = [
            ConfigKey(
                "url", "URL",
                "Required. Where to POST; 2xx is delivered, 408, 425, 429, 5xx and no answer are retried (honouring"
                    + " `Retry-After`), other 4xx fail for good."),
            ConfigKey(
                "headers", "mapping of texts",
                "Extra request headers (`X-Source: sensorhub`), each one line of text; hubd sets `Content-Type` and"
                    + " its `X-SensorHub-*` headers itself."),
            ConfigKey(
                "secret", "text", secret: true,
                "A key for HMAC-SHA256: each request then carries `X-SensorHub-Signature-256: sha256=<HMAC of the"
                    + " body>`. Unsigned when left out."),
            ConfigKey(
                "batch", "integer 1–1000", default: "1",
                "Above 1, a request carries a JSON array of up to this many waiting notifications (never waiting to"
                    + " fill it) with `X-SensorHub-Batch: <count>`, and its answer counts for all of them."),
            .caFile(for: "`url`"),
        ]
        var url: String
        var headers: [(String, String)]
        var secret: [UInt8]?
        var caFile: String?
        /// Above 1: each request carries a JSON array of up to that many notifications (whatever is waiting).
        var batch: Int

        init(_ node: ConfigNode) throws(ConfigurationError) {
            url = try node["url"].required { try $0.url() }
            headers = []
            for (key, value) in try node["headers"].entries() {
                guard let text = try value.string(), !key.isEmpty, !text.contains(where: \.isNewline) else {
                    throw value.invalid("a header is one line of text")
                }
                headers.append((key, text))
            }
            headers.sort { $0.0 < $1.0 }
            secret = try node.secret("secret").map { Array($0.utf8) }
            caFile = try node["ca_file"].filePath()
            batch = try node["batch"].integer(in: 1...1000) ?? 1
        }

        func makeNotifier(_ context: BackendContext) throws(ConfigurationError) -> any Notifier {
            WebhookNotifier(settings: self, http: try context.http(caFile: caFile))
        }
    }
}
