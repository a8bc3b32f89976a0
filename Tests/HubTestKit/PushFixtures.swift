import Foundation

/// A browser's Web Push subscription as `PushSubscription.toJSON()` gives it, for store, API and CLI tests.
///
/// The keys have the right shapes (a 65-byte uncompressed P-256 point's prefix and length, a 16-byte secret) but are
/// not a real key pair: nothing here encrypts.
public enum PushFixtures {
    /// A push service's endpoint, as Firefox's looks.
    public static let endpoint = "https://updates.push.services.mozilla.com/wpush/v2/gAAAAABexample"
    /// 65 bytes (0x04, then x and y), base64url without padding.
    public static let p256dh = base64URL([4] + (1...64).map { UInt8($0) })
    /// 16 bytes, base64url without padding.
    public static let auth = base64URL((1...16).map { UInt8($0 * 3) })

    /// `{"endpoint", "expirationTime": null, "keys": {"p256dh", "auth"}}` for `endpoint`.
    public static func subscription(endpoint: String = endpoint) -> [String: Any] {
        ["endpoint": endpoint, "expirationTime": NSNull(), "keys": ["p256dh": p256dh, "auth": auth]]
    }

    /// The subscription as JSON text.
    public static func subscriptionJSON(endpoint: String = endpoint) -> String {
        let data = try! JSONSerialization.data(withJSONObject: subscription(endpoint: endpoint), options: .sortedKeys)
        return String(decoding: data, as: UTF8.self)
    }

    static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }
}
