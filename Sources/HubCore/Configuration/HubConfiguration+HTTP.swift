import Foundation

extension HubConfiguration {
    /// The `http` section.
    static func readHTTP(_ http: ConfigNode, into result: inout HubConfiguration) throws(ConfigurationError) {
        try http.allow(httpKeys)
        if let listen = try http["listen"].value(
            "host:port (127.0.0.1:8080, 0.0.0.0:8080, [::1]:8080), unix:/path, or off", { HTTPListen($0) })
        {
            result.httpListen = listen
        }
        if let token = try http.secret("token"), !token.isEmpty { result.httpToken = token }
        if let token = result.httpToken {
            // A token anyone could guess lets them in as admin: long, and not one character or a short pattern again.
            guard token.count >= 16 else {
                throw http.secretSource("token").invalidValue("…", "a token of at least 16 characters")
            }
            guard Set(token).count >= 8 else {
                throw http.secretSource("token").invalidValue(
                    "…",
                    "a token of at least 8 different characters (this one is easy to guess): "
                        + "make one with `openssl rand -hex 24`, or use `hubctl tokens add`")
            }
        }
        result.httpPublic = try http["public"].strings() ?? []
        for (text, node) in try http["public"].stringItems() ?? [] where !text.hasPrefix("/") {
            throw node.invalidValue(text, "a path of the hub, like /metrics")
        }
        result.httpHosts = (try http["hosts"].strings() ?? []).map { $0.lowercased() }
        for (text, node) in try http["hosts"].stringItems() ?? []
        where text.isEmpty || text.contains("/") || text.contains(":") || text.contains(" ") {
            throw node.invalidValue(text, "a host name, like hub.example.com (no scheme, port or path)")
        }
        result.httpCORSOrigins = try http["cors_origins"].strings() ?? []
        for (text, node) in try http["cors_origins"].stringItems() ?? [] {
            guard let scheme = text.range(of: "://"), ["http", "https"].contains(text[..<scheme.lowerBound]),
                !text[scheme.upperBound...].isEmpty, !text[scheme.upperBound...].contains("/")
            else {
                throw node.invalidValue(
                    text, "an origin, like https://grafana.example.com (a scheme and a host, no path)")
            }
        }
        result.httpTrustedProxies = try http["trusted_proxies"].strings() ?? []
        for (text, node) in try http["trusted_proxies"].stringItems() ?? [] {
            var v4 = in_addr()
            var v6 = in6_addr()
            guard inet_pton(AF_INET, text, &v4) == 1 || inet_pton(AF_INET6, text, &v6) == 1 else {
                throw node.invalidValue(text, "an IP address, like 127.0.0.1")
            }
        }
        let attribution = try http["map_attribution"].string() ?? MapTiles.openStreetMap.attribution
        let template = try http["map_tiles"].string() ?? MapTiles.openStreetMap.template
        if template == "off" {
            result.httpMapTiles = nil
        } else {
            guard let tiles = MapTiles(checking: template, attribution: attribution) else {
                throw http["map_tiles"].invalidValue(template, MapTiles.expected)
            }
            result.httpMapTiles = tiles
        }
        let certificate = try http["tls_certificate"].filePath()
        let key = try http["tls_key"].filePath()
        switch (certificate, key) {
        case (let certificate?, let key?): result.httpTLS = TLSFiles(certificate: certificate, key: key)
        case (nil, nil): break
        case (nil, _): throw http["tls_key"].invalid("tls_key needs tls_certificate beside it")
        case (_, nil): throw http["tls_certificate"].invalid("tls_certificate needs tls_key beside it")
        }
    }
}
