import Crypto
import Foundation
import HubCore
import HubSupport

/// Voluntary Application Server Identification (RFC 8292): the hub proves to each push service that it is the
/// server the browser subscribed for, with an ES256 JWT for the service's origin and the key's public half.
///
/// The browser was given the same public key as `applicationServerKey`; a push service refuses pushes to that
/// subscription signed with any other key. One token per audience is reused until it has less than half its 12
/// hours left.
final class VAPIDSigner: Sendable {
    /// RFC 8292 allows at most 24 hours; 12 leaves room for a clock that runs ahead of the push service's.
    static let lifetime: TimeInterval = 12 * 3600
    /// The key file hubd makes in its state directory when the backend names none.
    static let keyFileName = "vapid-key"

    /// `mailto:` or `https:` contact for the push service's operators.
    let subject: String
    /// The public key, uncompressed, base64url: what `k=` and the browser's `applicationServerKey` take.
    let publicKey: String
    /// The key (not `Sendable` itself), and the tokens made, by audience.
    private let state: Locked<(key: P256.Signing.PrivateKey, tokens: [String: (token: String, expires: Date)])>

    init(key: P256.Signing.PrivateKey, subject: String) {
        self.subject = subject
        self.publicKey = base64URL(Array(key.publicKey.x963Representation))
        self.state = Locked((key, [:]))
    }

    /// `vapid t=<JWT>, k=<public key>` for a push to `endpoint`.
    func authorization(for endpoint: String, now: Date = Date()) throws(WebPushError) -> String {
        let audience = try Self.audience(of: endpoint)
        if let cached = state.withLock({ $0.tokens[audience] }),
            cached.expires.timeIntervalSince(now) > Self.lifetime / 2
        {
            return "vapid t=\(cached.token), k=\(publicKey)"
        }
        let expires = Date(timeIntervalSince1970: (now.timeIntervalSince1970 + Self.lifetime).rounded(.down))
        var claims = JSONWriter(capacity: 128, compact: true)
        claims.raw("{\"aud\":")
        claims.string(audience)
        claims.raw(",\"exp\":")
        claims.number(Int(expires.timeIntervalSince1970))
        claims.raw(",\"sub\":")
        claims.string(subject)
        claims.raw("}")
        let token: String
        do {
            token = try state.withLock { state in
                let token = try ES256JWT.sign(
                    header: #"{"typ":"JWT","alg":"ES256"}"#, claims: String(decoding: claims.bytes, as: UTF8.self),
                    with: state.key)
                state.tokens = state.tokens.filter { $0.value.expires > now }
                state.tokens[audience] = (token, expires)
                return token
            }
        } catch {
            throw WebPushError(.key, "cannot sign the VAPID token: \(error)")
        }
        return "vapid t=\(token), k=\(publicKey)"
    }

    /// The push service's origin (`https://fcm.googleapis.com`): the JWT's `aud`.
    static func audience(of endpoint: String) throws(WebPushError) -> String {
        guard let url = URL(string: endpoint), let scheme = url.scheme?.lowercased(),
            ["https", "http"].contains(scheme),
            let host = url.host?.lowercased(), !host.isEmpty
        else {
            throw WebPushError(.badSubscription, "the endpoint '\(endpoint)' is not an https:// URL")
        }
        let shownHost = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        let defaultPort = scheme == "https" ? 443 : 80
        return "\(scheme)://\(shownHost)" + (url.port.map { $0 == defaultPort ? "" : ":\($0)" } ?? "")
    }

    /// Checks a `subject:` setting: a `mailto:` address or an `https:` URL, as RFC 8292 §2.1 asks.
    static func checkSubject(_ text: String) -> String? {
        if text.hasPrefix("mailto:") {
            let address = text.dropFirst("mailto:".count)
            let parts = address.split(separator: "@", omittingEmptySubsequences: false)
            let valid = parts.count == 2 && !parts[0].isEmpty && !parts[1].isEmpty && !address.contains(" ")
            return valid ? text : nil
        }
        guard let url = URL(string: text), url.scheme == "https", url.host?.isEmpty == false else { return nil }
        return text
    }

    /// The key in `path`; with `create`, one made and written there (PEM, mode 0600) when there is none yet.
    ///
    /// Made under a lock: hubd and `hubctl notify test` starting together must not write two different keys, or the
    /// browsers subscribed with one would be refused pushes signed with the other.
    static func loadKey(path: String, create: Bool) throws(WebPushError) -> P256.Signing.PrivateKey {
        if let key = try readKey(path) { return key }
        guard create else {
            throw WebPushError(
                .key,
                "\(path) does not exist: make a key with 'openssl ecparam -name prime256v1 -genkey -noout -out "
                    + "\(path)', or leave key_file out and hubd makes one in its state directory")
        }
        let directory = (path as NSString).deletingLastPathComponent
        let lock: Int32
        do {
            try createDirectory(directory)
            lock = try acquireLock(path + ".lock", directory: directory)
        } catch {
            throw WebPushError(.key, "\(path): \(error)")
        }
        defer { close(lock) }
        if let key = try readKey(path) { return key }
        let key = P256.Signing.PrivateKey()
        do {
            try replaceFileAtomically(at: path, with: Array(key.pemRepresentation.utf8) + [10])
        } catch {
            throw WebPushError(.key, "\(path): \(error)")
        }
        return key
    }

    private static func readKey(_ path: String) throws(WebPushError) -> P256.Signing.PrivateKey? {
        guard let data = FileManager.default.contents(atPath: path) else {
            if FileManager.default.fileExists(atPath: path) { throw WebPushError(.key, "\(path): permission denied") }
            return nil
        }
        do {
            return try P256.Signing.PrivateKey(pemRepresentation: String(decoding: data, as: UTF8.self))
        } catch {
            throw WebPushError(
                .key,
                "\(path) is not a P-256 private key in PEM (make one with: openssl ecparam -name prime256v1 -genkey "
                    + "-noout): \(error)")
        }
    }
}
