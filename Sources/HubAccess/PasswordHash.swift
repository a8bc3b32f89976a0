import CSodium
import Foundation

/// Household passwords, kept as argon2id hashes in the PHC string form (`$argon2id$v=19$m=19456,t=2,p=1$salt$hash`)
/// through libsodium (`crypto_pwhash_str`): memory-hard, so a copied backup or SD card costs an attacker 19 MiB and
/// two passes per guess; the parameters travel with each hash, so they can be raised later and an older hash is
/// made again at the next login (`needsRehash`).
///
/// Why argon2id from libsodium: it is OWASP's first choice for passwords; libsodium is maintained, in every Debian
/// (libsodium23, 0.4 MB), and its `_str` functions write and check the standard string form themselves. Why
/// m = 19 MiB, t = 2: OWASP's recommended minimum, 36 ms on the machines the tests run on (and about 0.2 s on a
/// Raspberry Pi 4); libsodium's own "interactive" preset (64 MiB) took 174 ms here, and would hold 64 MiB of a Pi's
/// memory at each login. One hash at a time (`PasswordHash.work`): a burst of logins waits rather than holding
/// 19 MiB each.
public enum PasswordHash {
    /// Passes over the memory.
    public static let operations = 2
    /// Memory, in bytes.
    public static let memory = 19 * 1024 * 1024

    /// What a password must be: long enough, not the user's name, not one of the few everyone tries first.
    public static func check(_ password: String, user: String) throws(AccessError) {
        guard password.count >= 10 else {
            throw .invalid("a password has at least 10 characters (a few words are easier to remember than symbols)")
        }
        guard password.utf8.count <= 1024 else { throw .invalid("a password has at most 1,024 bytes") }
        let lower = password.lowercased()
        guard !lower.contains(user.lowercased()) else {
            throw .invalid("the password must not contain the user's name")
        }
        guard !common.contains(lower), Set(lower).count >= 4 else {
            throw .invalid("that password is among the first any attacker tries; choose another")
        }
    }

    private static let common: Set<String> = [
        "password12", "password123", "1234567890", "0123456789", "qwertyuiop", "sensorhub1", "administrator",
        "letmein123", "iloveyou12", "passw0rd12", "abcdefghij", "0987654321",
    ]

    /// The hash of `password`, with a fresh salt.
    public static func make(_ password: String) throws(AccessError) -> String {
        Sodium.ready()
        var out = [CChar](repeating: 0, count: Int(crypto_pwhash_STRBYTES))
        let bytes = Array(password.utf8)
        let result = bytes.withUnsafeBufferPointer { input in
            input.baseAddress!.withMemoryRebound(to: CChar.self, capacity: max(1, bytes.count)) { pointer in
                crypto_pwhash_str(
                    &out, pointer, UInt64(bytes.count), UInt64(operations), Int(memory))
            }
        }
        guard result == 0 else { throw .system("the password could not be hashed (out of memory?)") }
        return String(decoding: out.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Whether `password` is the one `stored` was made from (libsodium compares in constant time).
    public static func verify(_ password: String, against stored: String) -> Bool {
        Sodium.ready()
        guard stored.hasPrefix("$argon2id$") else { return false }
        let bytes = Array(password.utf8)
        return stored.withCString { hash in
            bytes.withUnsafeBufferPointer { input in
                input.baseAddress.map { base in
                    base.withMemoryRebound(to: CChar.self, capacity: bytes.count) { pointer in
                        crypto_pwhash_str_verify(hash, pointer, UInt64(bytes.count)) == 0
                    }
                } ?? (crypto_pwhash_str_verify(hash, "", 0) == 0)
            }
        }
    }

    /// Whether `stored` was made with other parameters than today's: it is made again at the next login.
    public static func needsRehash(_ stored: String) -> Bool {
        Sodium.ready()
        return stored.withCString { crypto_pwhash_str_needs_rehash($0, UInt64(operations), Int(memory)) } != 0
    }

    /// A hash of nothing anyone knows: a login for a user who does not exist is checked against it, so it takes as
    /// long as one for a user who does (the time does not tell which names exist).
    public static let decoy: String = (try? make(Secrets.randomText(bytes: 24))) ?? ""
}
