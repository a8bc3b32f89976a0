import Crypto
import Foundation
import HubCore
import HubTestKit
import Testing

@testable import HubNotify

/// Web Push's cryptography: RFC 8291's own example to the byte, and what the hub makes checked by an independent
/// implementation (http_ece and py_vapid, in the tests' peer venv: `PythonPeers`).
@Suite struct WebPushCryptoTests {
    /// RFC 8291 Appendix A: the same keys, auth secret and salt give the same body, header and ciphertext.
    @Test func rfc8291AppendixA() throws {
        func bytes(_ text: String) throws -> [UInt8] { try #require(base64URLDecoded(text)) }
        let serverKey = try P256.KeyAgreement.PrivateKey(
            rawRepresentation: bytes("yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw"))
        #expect(
            base64URL(Array(serverKey.publicKey.x963Representation))
                == "BP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A8")
        let encryption = try WebPushEncryption(
            p256dh: bytes(
                "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"),
            auth: bytes("BTBZMqHH6r4Tts7J_aSIgg"))
        let body = try encryption.seal(
            Array("When I grow up, I want to be a watermelon".utf8), salt: bytes("DGv6ra1nlYgDCS1FRnbzlw"),
            serverKey: serverKey)
        #expect(
            base64URL(body)
                == "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqK"
                + "K6PBru3jl7A_yl95bQpu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN")
    }

    /// A subscription's keys of the wrong shape and a message too large are refused, saying what was wrong.
    @Test func badKeysAndLargeMessagesAreRefused() throws {
        let ua = Array(P256.KeyAgreement.PrivateKey().publicKey.x963Representation)
        func reason(_ body: () throws -> Void) -> String {
            do {
                try body()
                return "no error"
            } catch {
                return (error as? WebPushError)?.reason ?? "\(error)"
            }
        }
        #expect(
            reason { _ = try WebPushEncryption(p256dh: Array(ua.prefix(33)), auth: Array(repeating: 1, count: 16)) }
                .hasPrefix("p256dh is not an uncompressed P-256 public key"))
        #expect(reason { _ = try WebPushEncryption(p256dh: ua, auth: [1, 2, 3]) }.hasPrefix("auth is 3 bytes"))
        var offCurve = ua
        offCurve[40] ^= 0xff
        #expect(
            reason { _ = try WebPushEncryption(p256dh: offCurve, auth: Array(repeating: 1, count: 16)) }
                .hasPrefix("p256dh is not a point on P-256"))
        let encryption = try WebPushEncryption(p256dh: ua, auth: Array(repeating: 1, count: 16))
        #expect(try encryption.seal(Array(repeating: 65, count: WebPushEncryption.maximumPlaintext)).count == 4096)
        #expect(reason { _ = try encryption.seal(Array(repeating: 65, count: 3994)) }.contains("at most 3993 fit"))
    }

    /// The JWT's audience is the endpoint's origin; one token per audience is reused, another audience gets its own.
    @Test func vapidTokensPerAudience() throws {
        #expect(
            try VAPIDSigner.audience(of: "https://fcm.googleapis.com/fcm/send/abc:def") == "https://fcm.googleapis.com")
        #expect(try VAPIDSigner.audience(of: "https://Push.Example.net:443/x") == "https://push.example.net")
        #expect(try VAPIDSigner.audience(of: "https://localhost:8443/p/1") == "https://localhost:8443")
        #expect(throws: WebPushError.self) { try VAPIDSigner.audience(of: "ftp://example.org/x") }
        #expect(VAPIDSigner.checkSubject("mailto:hub@example.org") != nil)
        #expect(VAPIDSigner.checkSubject("https://example.org/contact") != nil)
        for bad in ["hub@example.org", "mailto:", "mailto:@example.org", "http://example.org", "https://"] {
            #expect(VAPIDSigner.checkSubject(bad) == nil, "\(bad)")
        }
        let signer = VAPIDSigner(key: P256.Signing.PrivateKey(), subject: "mailto:hub@example.org")
        let now = Date()
        let first = try signer.authorization(for: "https://push.example.net/a", now: now)
        #expect(try signer.authorization(for: "https://push.example.net/b", now: now + 3600) == first)
        #expect(try signer.authorization(for: "https://other.example.net/a", now: now) != first)
        #expect(try signer.authorization(for: "https://push.example.net/a", now: now + 7 * 3600) != first)
        #expect(first.hasPrefix("vapid t=") && first.hasSuffix(", k=\(signer.publicKey)"))
    }

    /// What the hub sends, checked by http_ece (decrypts it with the subscription's private key) and py_vapid
    /// (verifies the JWT with `k`), with a message at the size limit and one with text JSON must escape.
    @Test func anIndependentImplementationDecryptsAndVerifies() async throws {
        let subscriber = WebPushSubscriber()
        let signer = VAPIDSigner(key: P256.Signing.PrivateKey(), subject: "mailto:hub@example.org")
        let endpoint = "https://push.example.net:8443/wpush/v2/abc"
        for message in ["{\"title\":\"Küche\\n\\\"auf\\\"\"}", String(repeating: "x", count: 3993)] {
            let body = try subscriber.encryption().seal(Array(message.utf8))
            let checked = try await subscriber.check(
                endpoint: endpoint, authorization: signer.authorization(for: endpoint), body: body)
            #expect(checked.plaintext == message)
            #expect(checked.claims["aud"] as? String == "https://push.example.net:8443")
            #expect(checked.claims["sub"] as? String == "mailto:hub@example.org")
            let exp = try #require(checked.claims["exp"] as? Int)
            #expect(abs(exp - Int(Date().timeIntervalSince1970) - 12 * 3600) < 60)
            #expect(checked.k == signer.publicKey)
        }
        // The checker is no rubber stamp: a changed byte, or a token signed with another key, is refused.
        var body = try subscriber.encryption().seal(Array("open".utf8))
        body[100] ^= 1
        await #expect(throws: TestKitError.self) {
            _ = try await subscriber.check(
                endpoint: endpoint, authorization: signer.authorization(for: endpoint), body: body)
        }
        let other = VAPIDSigner(key: P256.Signing.PrivateKey(), subject: "mailto:hub@example.org")
        let forged = try other.authorization(for: endpoint).replacingOccurrences(
            of: other.publicKey, with: signer.publicKey)
        await #expect(throws: TestKitError.self) {
            _ = try await subscriber.check(
                endpoint: endpoint, authorization: forged, body: subscriber.encryption().seal(Array("open".utf8)))
        }
    }
}

/// A browser's side of a subscription: its key pair and auth secret, and the independent checker of what it gets.
struct WebPushSubscriber {
    let key = P256.KeyAgreement.PrivateKey()
    let auth = (0..<16).map { _ in UInt8.random(in: 0...255) }

    var p256dh: String { base64URL(Array(key.publicKey.x963Representation)) }
    var authSecret: String { base64URL(auth) }

    func encryption() throws -> WebPushEncryption {
        try WebPushEncryption(p256dh: Array(key.publicKey.x963Representation), auth: auth)
    }

    /// Tests/Peers/webpush_check.py on one request; a failure to check is a test failure, never a skip.
    func check(endpoint: String, authorization: String, body: [UInt8]) async throws -> (
        plaintext: String, claims: [String: Any], k: String
    ) {
        try await PythonPeers.checkWebPush(
            endpoint: endpoint, authorization: authorization, body: body,
            privateKey: base64URL(Array(key.rawRepresentation)), auth: authSecret)
    }
}
