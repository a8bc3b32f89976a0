import Foundation

// The broker settings as the registry document holds them (`"broker": {…}`): read and written with the document.

extension BrokerSettings {
    /// Reads the `broker` object. A host, client id or user name that `validate()` would refuse for what it holds
    /// (control characters, a host that is no host name) is refused here too, rather than passed on to the
    /// connection and its log lines.
    static func decode(_ reader: inout JSONReader) throws(JSONSyntaxError) -> BrokerSettings {
        var settings = BrokerSettings()
        try reader.readObject { key, reader throws(JSONSyntaxError) in
            let at = reader.index
            func checked(_ text: String, _ problem: (String) -> String?) throws(JSONSyntaxError) -> String {
                guard let problem = problem(text) else { return text }
                throw reader.error("broker.\(key): \(problem)", at: at)
            }
            switch key {
            case "host": settings.host = try checked(try reader.string(at: "broker.host"), Self.problem(withHost:))
            case "port":
                settings.port = try reader.int(at: "broker.port")
                guard (1...65535).contains(settings.port) else {
                    throw reader.error("broker.port: \(settings.port) is outside 1–65535", at: at)
                }
            case "clientId":
                settings.clientID = try checked(
                    try reader.string(at: "broker.clientId"), { Self.problem(with: $0, field: "the client id") })
            case "username":
                if let name = try reader.optionalString(at: "broker.username") {
                    settings.username = try checked(name, { Self.problem(with: $0, field: "the user name") })
                }
            case "passwordFile": settings.passwordFile = try reader.optionalString(at: "broker.passwordFile")
            case "tls":
                if reader.nextIsNull {
                    try reader.readNull()
                } else {
                    settings.tls = try TLS.decode(&reader)
                }
            default: settings.unknownFields.members.append((key, try reader.readRaw()))
            }
        }
        return settings
    }
}

extension BrokerSettings.TLS {
    static func decode(_ reader: inout JSONReader) throws(JSONSyntaxError) -> Self {
        var tls = Self()
        try reader.readObject { key, reader throws(JSONSyntaxError) in
            switch key {
            case "caFile": tls.caFile = try reader.optionalString(at: "broker.tls.caFile")
            case "caDirectory": tls.caDirectory = try reader.optionalString(at: "broker.tls.caDirectory")
            case "certificateFile": tls.certificateFile = try reader.optionalString(at: "broker.tls.certificateFile")
            case "keyFile": tls.keyFile = try reader.optionalString(at: "broker.tls.keyFile")
            case "verifyHostname": tls.verifyHostname = try reader.bool(at: "broker.tls.verifyHostname")
            default: tls.unknownFields.members.append((key, try reader.readRaw()))
            }
        }
        return tls
    }
}

extension BrokerSettings {
    func encode(into writer: inout JSONWriter) {
        var first = true
        writer.raw("{")
        writer.key("host", first: &first)
        writer.string(host)
        writer.key("port", first: &first)
        writer.number(port)
        writer.key("clientId", first: &first)
        writer.string(clientID)
        if let username {
            writer.key("username", first: &first)
            writer.string(username)
        }
        if let passwordFile {
            writer.key("passwordFile", first: &first)
            writer.string(passwordFile)
        }
        if let tls {
            writer.key("tls", first: &first)
            tls.encode(into: &writer)
        }
        writer.unknown(unknownFields, first: &first)
        writer.raw("}")
    }
}

extension BrokerSettings.TLS {
    func encode(into writer: inout JSONWriter) {
        var first = true
        writer.raw("{")
        for (key, value) in [
            ("caFile", caFile), ("caDirectory", caDirectory), ("certificateFile", certificateFile),
            ("keyFile", keyFile),
        ] {
            guard let value else { continue }
            writer.key(key, first: &first)
            writer.string(value)
        }
        writer.key("verifyHostname", first: &first)
        writer.bool(verifyHostname)
        writer.unknown(unknownFields, first: &first)
        writer.raw("}")
    }
}
