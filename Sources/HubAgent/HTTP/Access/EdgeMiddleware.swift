import Foundation
import HTTPTypes
import HubSupport
import Hummingbird
import Logging

/// What every request meets first and every response leaves with (docs/security.md):
///
/// - **Host checked**: a name the hub does not answer to is refused (403) before anything else: a page on
///   `attacker.example` whose name was rebound to the hub's address (DNS rebinding) reads nothing. IP addresses
///   and `localhost` are always taken (no rebinding goes through them), as are `http.hosts`, `alerts.public_url`'s
///   host and this machine's name.
/// - **CORS closed**: a preflight (OPTIONS) is answered only for the origins `http.cors_origins` lists, and only those
///   get `Access-Control-Allow-Origin` (never with credentials: a cookie is not sent across sites anyway).
/// - **Headers**: a Content-Security-Policy with no inline script and no framing, `nosniff`, `X-Frame-Options`,
///   `Referrer-Policy` (`no-referrer` on `/a/…`, whose path is a token), and `Cache-Control: no-store` on what is
///   not a static file.
struct EdgeMiddleware: RouterMiddleware {
    typealias Context = HubRequestContext
    let access: HTTPAccess
    let contentSecurityPolicy: String

    init(access: HTTPAccess) {
        self.access = access
        contentSecurityPolicy = Self.contentSecurityPolicy(imageOrigins: access.settings.imageOrigins)
    }

    /// Scripts and styles from the hub only (styles may be inline: the pages' one `<style>` and SVG attributes; no
    /// script is), images from the hub, `data:` and the map tiles' server, no plugins, no `<base>`, forms only to the
    /// hub, no framing.
    static func contentSecurityPolicy(imageOrigins: [String]) -> String {
        "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:"
            + imageOrigins.map { " " + $0 }.joined() + "; "
            + "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        if let hosts = access.settings.hosts {
            let authority = access.asked(request, context) ?? ""
            guard Self.answers(to: authority, names: hosts) else {
                HTTPAccess.refused("host")
                access.logger.warning(
                    "request for another host refused",
                    metadata: [
                        "host": "\(authority)", "path": "\(request.uri.path)",
                        "client": "\(access.client(request, context))",
                    ])
                return secured(
                    json(
                        ErrorAnswer(
                            error: "this hub does not answer to the name '\(authority)': use its address, localhost, "
                                + "or a name http.hosts lists"), status: .forbidden), request)
            }
        }
        let origin = request.headers[.origin]
        let allowed = origin.map { access.settings.corsOrigins.contains($0) } ?? false
        if request.method == .options {
            guard allowed, let origin else {
                HTTPAccess.refused("cross-origin")
                return secured(
                    json(
                        ErrorAnswer(
                            error: "cross-origin requests are not allowed"
                                + (origin.map { " from \($0)" } ?? "") + ": http.cors_origins lists the sites that may"),
                        status: .forbidden), request)
            }
            var response = Response(status: .noContent)
            response.headers[.accessControlAllowOrigin] = origin
            response.headers[.accessControlAllowMethods] = "GET, POST, PATCH, DELETE"
            response.headers[.accessControlAllowHeaders] = "Authorization, Content-Type"
            response.headers[.accessControlMaxAge] = "600"
            response.headers[.vary] = "Origin"
            return secured(response, request)
        }
        var response = try await next(request, context)
        if allowed, let origin {
            response.headers[.accessControlAllowOrigin] = origin
            response.headers[.vary] = "Origin"
        }
        return secured(response, request)
    }

    /// The response with the security headers every answer carries.
    func secured(_ response: Response, _ request: Request) -> Response {
        var response = response
        response.headers[.contentSecurityPolicy] = contentSecurityPolicy
        response.headers[.xContentTypeOptions] = "nosniff"
        response.headers[.xFrameOptions] = "DENY"
        // A page with a map over tiles says which (`strict-origin-when-cross-origin`: the tile server is told the
        // hub's origin, never a path, as OpenStreetMap's policy asks); the rest tell nothing outside.
        if request.uri.path.hasPrefix("/a/") {
            response.headers[.referrerPolicy] = "no-referrer"
        } else if response.headers[.referrerPolicy] == nil {
            response.headers[.referrerPolicy] = "same-origin"
        }
        if response.headers[.cacheControl] == nil { response.headers[.cacheControl] = "no-store" }
        return response
    }

    /// Whether `authority` (a Host header: `name`, `name:port`, `1.2.3.4:8080`, `[::1]:8080`) is one the hub answers
    /// to.
    static func answers(to authority: String, names: Set<String>) -> Bool {
        let host = Self.host(of: authority).lowercased()
        guard !host.isEmpty else { return false }
        if host == "localhost" || names.contains(host) { return true }
        return isAddress(host)
    }

    /// The host part of a Host header, without brackets or port.
    static func host(of authority: String) -> String {
        if authority.hasPrefix("[") {
            guard let end = authority.firstIndex(of: "]") else { return "" }
            return String(authority[authority.index(after: authority.startIndex)..<end])
        }
        if let colon = authority.lastIndex(of: ":"), authority[authority.index(after: colon)...].allSatisfy(\.isNumber)
        {
            return String(authority[..<colon])
        }
        return authority
    }

    /// An IPv4 or IPv6 address, written as one (never a name, which DNS could rebind).
    static func isAddress(_ host: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
    }

    /// This machine's names: its host name, and with `.local` (mDNS), lowercased.
    static func machineNames() -> Set<String> {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count) == 0 else { return [] }
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self).lowercased()
        guard !name.isEmpty else { return [] }
        let short = name.split(separator: ".").first.map(String.init) ?? name
        return [name, short, short + ".local"]
    }
}

extension HTTPField.Name {
    static let xFrameOptions = HTTPField.Name("X-Frame-Options")!
    static let referrerPolicy = HTTPField.Name("Referrer-Policy")!
}
