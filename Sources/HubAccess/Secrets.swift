import CSodium
import Crypto
import Foundation

/// Random secrets, their stored form and their comparison: what every token, session and password check goes
/// through, so that there is one way to make a secret and one way to compare it.
public enum Secrets {
    /// `count` random bytes from the kernel (libsodium's `randombytes_buf`: getrandom(2)).
    public static func randomBytes(_ count: Int) -> [UInt8] {
        Sodium.ready()
        var bytes = [UInt8](repeating: 0, count: count)
        bytes.withUnsafeMutableBytes { randombytes_buf($0.baseAddress!, count) }
        return bytes
    }

    /// `count` random bytes in base64url without padding (URL-, header- and cookie-safe).
    public static func randomText(bytes count: Int) -> String {
        base64url(randomBytes(count))
    }

    /// A short random id, `count` lowercase hex digits: what names a token or a session in lists.
    public static func randomID(_ count: Int = 8) -> String {
        String(hex(randomBytes((count + 1) / 2)).prefix(count))
    }

    /// Lowercase hex, without `String(format:)` (about a microsecond a byte in Foundation on Linux: a token's check
    /// spent 40 µs on it).
    public static func hex(_ bytes: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(64)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    public static func base64url(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// The SHA-256 of `text`, in hex: how a token or a session is kept. A secret of 128 random bits or more can't be
    /// guessed from it, so a slow hash would add nothing (passwords, which people choose, get argon2id).
    public static func digest(_ text: String) -> String {
        hex(SHA256.hash(data: Array(text.utf8)))
    }

    /// Whether two digests (`digest`) are the same, in a time that depends only on their length (which is public).
    public static func sameDigest(_ a: String, _ b: String) -> Bool {
        let (left, right) = (Array(a.utf8), Array(b.utf8))
        guard left.count == right.count, !left.isEmpty else { return false }
        Sodium.ready()
        return left.withUnsafeBytes { l in
            right.withUnsafeBytes { r in sodium_memcmp(l.baseAddress!, r.baseAddress!, l.count) }
        }
            == 0
    }
}

/// libsodium, initialised once before its first use (`sodium_init` is safe to call from any thread, and again).
enum Sodium {
    private static let initialised: Bool = sodium_init() >= 0

    static func ready() {
        precondition(initialised, "libsodium could not be initialised")
    }
}
