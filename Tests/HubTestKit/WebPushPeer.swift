import Foundation

extension PythonPeers {
    /// What a browser and its push service make of one push that hubd sent: `Tests/Peers/webpush_check.py` verifies
    /// the VAPID token with its `k` key (py_vapid) and decrypts the body with the subscription's private key and auth
    /// secret (http_ece). Throws, saying why, when either refuses.
    /// - Parameters:
    ///   - privateKey: the subscription's P-256 private key, base64url of its 32 bytes (a JWK's `d`).
    ///   - auth: the subscription's auth secret, base64url.
    public static func checkWebPush(
        endpoint: String, authorization: String, body: [UInt8], privateKey: String, auth: String
    ) async throws -> (plaintext: String, claims: [String: Any], k: String) {
        let request: [String: Any] = [
            "endpoint": endpoint, "authorization": authorization, "body": PushFixtures.base64URL(body),
            "ua_private": privateKey, "auth": auth,
        ]
        let input = String(decoding: try JSONSerialization.data(withJSONObject: request), as: UTF8.self)
        let result = try await run("Tests/Peers/webpush_check.py", [], input: input)
        guard result.status == 0 else {
            throw TestKitError("webpush_check.py refused the push: \(result.standardError)")
        }
        guard let answer = try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any],
            let plaintext = answer["plaintext"] as? String
        else {
            throw TestKitError("webpush_check.py answered no plaintext: \(result.standardOutput)")
        }
        return (plaintext, answer["claims"] as? [String: Any] ?? [:], answer["k"] as? String ?? "")
    }
}
