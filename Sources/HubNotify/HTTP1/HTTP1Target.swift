/// Where an HTTP/1.1 request goes, read from its URL: the connection it needs (scheme, host, port) and what the
/// request line names (path and query). Parsed by hand, not by Foundation's `URL`: a webhook parses its URL on every
/// request, and this is a few string scans.
struct HTTP1Target: Sendable, Hashable {
    /// The connection a request to this target can use: requests with the same origin share the pool's connections.
    struct Origin: Sendable, Hashable, CustomStringConvertible {
        var tls: Bool
        /// The host as connected to: a name, or an IP address (IPv6 without its brackets).
        var host: String
        var port: Int

        var description: String { "\(tls ? "https" : "http")://\(hostHeader)" }

        /// `Host:`'s value: the port only when it is not the scheme's default.
        var hostHeader: String {
            let name = host.contains(":") ? "[\(host)]" : host
            return port == (tls ? 443 : 80) ? name : "\(name):\(port)"
        }

        /// Whether `host` is an IP address, which TLS's server name indication (SNI) must not carry: NIOSSL then checks
        /// the certificate against the address connected to.
        var hostIsAddress: Bool {
            host.contains(":") || (!host.isEmpty && host.allSatisfy { $0.isNumber || $0 == "." })
        }
    }

    var origin: Origin
    /// The request line's target: the path (at least `/`) and the query, without the fragment.
    var path: String

    /// Reads `url`: `http://` or `https://`, a host, an optional port, then the path and query.
    init(_ url: String) throws(HTTP1Error) {
        // The standard library's scans, not Foundation's `range(of:)`: that one went through CFString and was 4.5 %
        // of hubd's CPU in the webhook fan-out benchmark.
        let scheme = url.prefix { $0 != ":" }
        let tls: Bool
        switch url[scheme.endIndex...].hasPrefix("://") ? scheme.lowercased() : "" {
        case "https": tls = true
        case "http": tls = false
        default: throw .invalidURL(url, "it does not start with http:// or https://")
        }
        var rest = url[scheme.endIndex...].dropFirst(3)
        if let fragment = rest.firstIndex(of: "#") { rest = rest[..<fragment] }
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        var authority = rest[..<authorityEnd]
        let pathPart = rest[authorityEnd...]
        // Credentials in the URL (`user:pass@`) are not sent: backends that need them say so in their settings.
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        var host: Substring
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw .invalidURL(url, "its IPv6 address has no ]") }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if after.hasPrefix(":") {
                portText = after.dropFirst()
            } else if !after.isEmpty {
                throw .invalidURL(url, "text follows its IPv6 address")
            }
        } else if let colon = authority.lastIndex(of: ":") {
            host = authority[..<colon]
            portText = authority[authority.index(after: colon)...]
        } else {
            host = authority
        }
        guard !host.isEmpty else { throw .invalidURL(url, "it names no host") }
        var port = tls ? 443 : 80
        if let portText, !portText.isEmpty {
            guard let number = Int(portText), (1...65535).contains(number) else {
                throw .invalidURL(url, "its port '\(portText)' is not a number from 1 to 65535")
            }
            port = number
        }
        origin = Origin(tls: tls, host: String(host), port: port)
        path = pathPart.hasPrefix("/") ? String(pathPart) : "/" + pathPart
    }
}
