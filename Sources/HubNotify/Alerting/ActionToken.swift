import Crypto
import Foundation
import HubCore

/// A signed, expiring token for a button or link on a notification: "acknowledge" or "snooze" the alerts one
/// message named. 23 bytes in base64url (31 characters), so "ack:" and a token fit Telegram's 64-byte
/// `callback_data`: the message's handle (6 bytes of a SHA-256 of its key), the action, the expiry (seconds, 4
/// bytes) and 12 bytes of an HMAC-SHA256 of those under the hub's key (`alert-key` in the state directory).
/// What the handle names is in the alert book (`AlertBook.links`), so a token carries no alert id and no secret.
public struct ActionToken: Sendable, Hashable {
    public enum Action: UInt8, Sendable, Codable {
        case acknowledge = 0x61  // "a"
        case snooze = 0x73  // "s"

        public var word: String { self == .acknowledge ? "Acknowledge" : "Snooze 1 h" }
    }

    public var handle: String
    public var action: Action
    public var expires: Timestamp

    public init(handle: String, action: Action, expires: Timestamp) {
        self.handle = handle
        self.action = action
        self.expires = expires
    }

    /// How long a token works: a week, longer than anyone leaves a notification unanswered.
    public static let lifetime: Int64 = 7 * 86_400_000

    /// The handle of a message's links: 6 bytes of the SHA-256 of its key, in hex.
    public static func handle(of key: String) -> String {
        SHA256.hash(data: Array(key.utf8)).prefix(6).map { String(format: "%02x", $0) }.joined()
    }

    /// The token, signed with `key`.
    public func signed(with key: SymmetricKey) -> String {
        var bytes = Self.bytes(hex: handle)
        bytes.append(action.rawValue)
        let seconds = UInt32(clamping: expires.millisecondsSince1970 / 1000)
        bytes += withUnsafeBytes(of: seconds.bigEndian, Array.init)
        bytes += HMAC<SHA256>.authenticationCode(for: bytes, using: key).prefix(12)
        return Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// Why a token is refused.
    public enum Refusal: Error, Sendable, CustomStringConvertible {
        /// Not a token, or not signed with this hub's key.
        case forged
        case expired

        public var description: String {
            switch self {
            case .forged: "the link is not one this hub made"
            case .expired: "the link has expired"
            }
        }
    }

    /// Reads and checks a token; refuses one not signed with `key`, or expired at `now`.
    public init(verifying text: String, key: SymmetricKey, now: Timestamp) throws(Refusal) {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        guard text.count == 31, let data = Data(base64Encoded: base64), data.count == 23 else { throw .forged }
        let bytes = Array(data)
        let expected = HMAC<SHA256>.authenticationCode(for: bytes[0..<11], using: key).prefix(12)
        // Constant time: a difference anywhere costs the same.
        guard zip(expected, bytes[11...]).reduce(0, { $0 | ($1.0 ^ $1.1) }) == 0,
            let action = Action(rawValue: bytes[6])
        else { throw .forged }
        let seconds = bytes[7..<11].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        let expires = Timestamp(millisecondsSince1970: Int64(seconds) * 1000)
        self.init(
            handle: bytes[0..<6].map { String(format: "%02x", $0) }.joined(), action: action, expires: expires)
        // The last character carries two spare bits: only the one spelling this hub writes is taken.
        guard signed(with: key) == text else { throw .forged }
        guard expires > now else { throw .expired }
    }

    private static func bytes(hex: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex, let next = hex.index(index, offsetBy: 2, limitedBy: hex.endIndex) {
            bytes.append(UInt8(hex[index..<next], radix: 16) ?? 0)
            index = next
        }
        return bytes
    }

    /// The hub's key: `alert-key` in the state directory (32 random bytes, mode 0600), made on first use.
    public static func key(directory: String) throws(StoreError) -> SymmetricKey {
        let path = "\(directory)/alert-key"
        if let data = FileManager.default.contents(atPath: path), data.count == 32 { return SymmetricKey(data: data) }
        try createDirectory(directory)
        let key = SymmetricKey(size: .bits256)
        try replaceFileAtomically(at: path, with: key.withUnsafeBytes { Array($0) })
        return key
    }
}
