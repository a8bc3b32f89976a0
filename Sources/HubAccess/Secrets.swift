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
        randomBytes((count + 1) / 2).map { String(format: "%02x", $0) }.joined().prefix(count).description
    }

    public static func base64url(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// The SHA-256 of `text`, in hex: how a token or a session is kept. A secret of 128 random bits or more can't be
    /// guessed from it, so a slow hash would add nothing (passwords, which people choose, get argon2id).
    public static func digest(_ text: String) -> String {
        SHA256.hash(data: Array(text.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    /// Whether `a` and `b` are equal, in a time that depends only on their lengths (libsodium's `sodium_memcmp`
    /// over their SHA-256s, so not even the lengths show).
    public static func equal(_ a: String, _ b: String) -> Bool {
        let left = Array(SHA256.hash(data: Array(a.utf8)))
        let right = Array(SHA256.hash(data: Array(b.utf8)))
        Sodium.ready()
        return left.withUnsafeBytes { l in right.withUnsafeBytes { r in sodium_memcmp(l.baseAddress!, r.baseAddress!, 32) } }
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
