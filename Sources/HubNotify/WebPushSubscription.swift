import Foundation

/// A browser's Web Push subscription (RFC 8030, keys for RFC 8291): where to post, and the keys to encrypt for.
///
/// The whole subscription is a secret: the endpoint alone lets anyone push to the browser (VAPID aside), so the
/// device store seals all of it and lists show only the push service's host.
public struct WebPushSubscription: Sendable, Hashable, Codable {
    /// The push service's URL for this browser: https (http only for localhost, for tests).
    public var endpoint: String
    /// The browser's P-256 public key, uncompressed (65 bytes), base64url without padding.
    public var p256dh: String
    /// The 16-byte authentication secret, base64url without padding.
    public var auth: String

    /// Checks the endpoint and the keys' lengths; keys may come in either base64 alphabet, padded or not, and are
    /// kept as base64url without padding.
    public init(endpoint: String, p256dh: String, auth: String) throws(DeviceError) {
        let endpoint = endpoint.trimmingCharacters(in: .whitespaces)
        guard endpoint.utf8.count <= 2048, let url = URLComponents(string: endpoint),
            let host = url.host, !host.isEmpty
        else {
            throw .invalidSubscription("the endpoint is not a URL (the browser's PushSubscription.endpoint)")
        }
        let local = ["localhost", "127.0.0.1", "::1", "[::1]"].contains(host.lowercased())
        guard url.scheme?.lowercased() == "https" || (url.scheme?.lowercased() == "http" && local) else {
            throw .invalidSubscription("the endpoint must be an https URL, not \(url.scheme ?? "this")")
        }
        guard let key = base64URLDecoded(p256dh), key.count == 65, key.first == 4 else {
            throw .invalidSubscription("keys.p256dh must be a P-256 public key: 65 bytes (uncompressed), base64url")
        }
        guard let secret = base64URLDecoded(auth), secret.count == 16 else {
            throw .invalidSubscription("keys.auth must be 16 bytes, base64url")
        }
        self.endpoint = endpoint
        self.p256dh = base64URL(key)
        self.auth = base64URL(secret)
    }

    /// The browser's `PushSubscription.toJSON()`: `{"endpoint", "keys": {"p256dh", "auth"}}`, with an optional
    /// `expirationTime`; other keys (a request's `sensors`, say) are left to the caller.
    public init(json: [String: Any]) throws(DeviceError) {
        guard let endpoint = json["endpoint"] as? String else {
            throw .invalidSubscription("\"endpoint\" (a string: the push service's URL) is required")
        }
        guard let keys = json["keys"] as? [String: Any] else {
            throw .invalidSubscription("\"keys\" (an object with \"p256dh\" and \"auth\") is required")
        }
        guard let p256dh = keys["p256dh"] as? String else {
            throw .invalidSubscription("\"keys.p256dh\" (a string, base64url) is required")
        }
        guard let auth = keys["auth"] as? String else {
            throw .invalidSubscription("\"keys.auth\" (a string, base64url) is required")
        }
        if let expiration = json["expirationTime"], !(expiration is NSNull), !(expiration is NSNumber) {
            throw .invalidSubscription("\"expirationTime\" must be a number (milliseconds) or null")
        }
        try self.init(endpoint: endpoint, p256dh: p256dh, auth: auth)
    }

    /// The push service's host (`fcm.googleapis.com`): what lists show instead of the secret endpoint.
    public var host: String { URLComponents(string: endpoint)?.host ?? "?" }
}

/// Base64url (or base64) text, padded or not, as bytes; `nil` when it isn't.
func base64URLDecoded(_ text: String) -> [UInt8]? {
    var base64 = text.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "-", with: "+")
        .replacingOccurrences(of: "_", with: "/")
    while base64.count % 4 != 0 { base64 += "=" }
    return Data(base64Encoded: base64).map { Array($0) }
}
