import Crypto
import Foundation

/// Web Push message encryption (RFC 8291) in the `aes128gcm` content coding (RFC 8188): what only the browser that
/// subscribed can read, whatever push service carries it.
///
/// A fresh P-256 key pair (the application server's, `as`) agrees a secret with the subscription's `p256dh` key
/// (the user agent's, `ua`); HKDF-SHA256 with the subscription's auth secret makes the input keying material, and
/// HKDF with a random salt makes the content key and nonce. The body is one record: the header
/// `salt || rs || idlen || as_public`, then the message, the last-record delimiter 0x02, and the AES-GCM tag.
struct WebPushEncryption {
    /// The record size written in the header, which is also the largest body push services must accept.
    static let recordSize = 4096
    /// salt (16) + rs (4) + idlen (1) + as_public (65).
    static let headerSize = 86
    /// The largest message that fits one 4096-byte body: the header, the delimiter and the 16-byte tag take the rest.
    static let maximumPlaintext = recordSize - headerSize - 1 - 16

    /// The subscription's keys: `p256dh` (an uncompressed P-256 point, 65 bytes) and `auth` (16 bytes).
    let userAgentPublicKey: P256.KeyAgreement.PublicKey
    let userAgentPublicBytes: [UInt8]
    let authSecret: [UInt8]

    init(p256dh: [UInt8], auth: [UInt8]) throws(WebPushError) {
        guard p256dh.count == 65, p256dh.first == 4 else {
            throw WebPushError(
                .badSubscription, "p256dh is not an uncompressed P-256 public key (65 bytes, 0x04 first)")
        }
        guard auth.count == 16 else {
            throw WebPushError(.badSubscription, "auth is \(auth.count) bytes; a subscription's auth secret is 16")
        }
        do {
            userAgentPublicKey = try P256.KeyAgreement.PublicKey(x963Representation: p256dh)
        } catch {
            throw WebPushError(.badSubscription, "p256dh is not a point on P-256: \(error)")
        }
        userAgentPublicBytes = p256dh
        authSecret = auth
    }

    /// The encrypted body of one push message.
    /// - Parameters:
    ///   - salt: 16 random bytes; given only by a test that checks a known vector.
    ///   - serverKey: the one-time application server key; given only by a test.
    func seal(
        _ plaintext: [UInt8], salt: [UInt8]? = nil, serverKey: P256.KeyAgreement.PrivateKey? = nil
    ) throws(WebPushError) -> [UInt8] {
        guard plaintext.count <= Self.maximumPlaintext else {
            throw WebPushError(
                .tooLarge, "the message is \(plaintext.count) bytes; at most \(Self.maximumPlaintext) fit in one push")
        }
        let salt = salt ?? (0..<16).map { _ in UInt8.random(in: 0...255) }
        guard salt.count == 16 else { throw WebPushError(.badSubscription, "the salt must be 16 bytes") }
        let serverKey = serverKey ?? P256.KeyAgreement.PrivateKey()
        let serverPublic = Array(serverKey.publicKey.x963Representation)
        let shared: SharedSecret
        do {
            shared = try serverKey.sharedSecretFromKeyAgreement(with: userAgentPublicKey)
        } catch {
            throw WebPushError(.badSubscription, "no shared secret with p256dh: \(error)")
        }
        // RFC 8291 §3.3: IKM = HKDF(auth_secret, ecdh_secret, "WebPush: info" || 0x00 || ua_public || as_public, 32).
        let keyInfo = Array("WebPush: info".utf8) + [0] + userAgentPublicBytes + serverPublic
        let ikm = shared.hkdfDerivedSymmetricKey(
            using: SHA256.self, salt: authSecret, sharedInfo: keyInfo, outputByteCount: 32)
        // RFC 8188 §2.2 and §2.3: the content key and the nonce, from the salt.
        func derive(_ info: String, _ count: Int) -> SymmetricKey {
            HKDF<SHA256>.deriveKey(
                inputKeyMaterial: ikm, salt: salt, info: Array(info.utf8) + [0], outputByteCount: count)
        }
        let contentKey = derive("Content-Encoding: aes128gcm", 16)
        let nonceBytes = derive("Content-Encoding: nonce", 12).withUnsafeBytes { Array($0) }
        let sealed: AES.GCM.SealedBox
        do {
            sealed = try AES.GCM.seal(plaintext + [2], using: contentKey, nonce: AES.GCM.Nonce(data: nonceBytes))
        } catch {
            throw WebPushError(.crypto, "AES-GCM: \(error)")
        }
        let size = UInt32(Self.recordSize)
        let header =
            salt + [UInt8(size >> 24), UInt8(size >> 16 & 0xff), UInt8(size >> 8 & 0xff), UInt8(size & 0xff)]
            + [UInt8(serverPublic.count)] + serverPublic
        return header + Array(sealed.ciphertext) + Array(sealed.tag)
    }
}

/// Why a push message can't be made or sent.
public struct WebPushError: Error, Sendable, Hashable, CustomStringConvertible {
    enum Code: Sendable, Hashable {
        /// The subscription's keys or endpoint are not what a browser makes.
        case badSubscription
        /// The message does not fit in one push.
        case tooLarge
        /// The VAPID key can't be read, made or used.
        case key
        /// The platform's cryptography failed.
        case crypto
    }

    let code: Code
    /// What was wrong, for a person to act on.
    public let reason: String

    init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    public var description: String { reason }
}
