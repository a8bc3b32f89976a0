import Crypto
import Foundation

/// ES256 JSON Web Tokens (RFC 7515 compact form, RFC 7518 §3.4 signatures): what APNs provider tokens and VAPID
/// (RFC 8292) both are.
enum ES256JWT {
    /// `base64url(header).base64url(claims).base64url(r || s)`, the claims' JSON as given.
    /// - Parameters:
    ///   - header: the JOSE header's JSON, `{"alg":"ES256",…}`.
    ///   - claims: the claims' JSON.
    static func sign(header: String, claims: String, with key: P256.Signing.PrivateKey) throws -> String {
        let input = base64URL(Array(header.utf8)) + "." + base64URL(Array(claims.utf8))
        let signature = try key.signature(for: Array(input.utf8))
        return input + "." + base64URL(Array(signature.rawRepresentation))
    }
}

/// Base64 with the URL alphabet and no padding, as JWTs and Web Push keys use.
func base64URL(_ bytes: [UInt8]) -> String {
    Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        .replacingOccurrences(of: "=", with: "")
}
