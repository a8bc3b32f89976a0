import Foundation
import HubCore

/// Apprise's URLs (`tgram://token/chat`, `pover://user@token`, …), the convention many tools share, as a shorthand
/// for a backend: `apprise: …` (better `apprise_file:`, or `$HUB_NOTIFIERS_BACKENDS_<NAME>_APPRISE`: the URL holds
/// the secret) in place of `type:` and the kind's keys. The URL only says those keys; the backend then reads and
/// checks them as if they had been written out, so there is one reader of each kind's settings.
///
/// Only the kinds hubd has: `mailto`/`mailtos`, `tgram`, `pover`, `gotify`/`gotifys`, `ntfy`/`ntfys`, `discord`,
/// `slack`, `matrix`/`matrixs`. Anything the URL says that hubd would not act on is refused, not dropped.
struct AppriseURL: Sendable {
    var scheme: String
    var user: String?
    var password: String?
    /// Between `://` (and user info) and the first `/`, as written: a Telegram bot token has a `:` in it.
    var authority: String
    var path: [String]
    var query: [(key: String, value: String)]

    /// Why a URL can't be taken; never says the URL itself (it holds secrets).
    struct Problem: Error, CustomStringConvertible {
        var description: String
    }

    static let schemes = [
        "mailto", "mailtos", "tgram", "pover", "gotify", "gotifys", "ntfy", "ntfys", "discord", "slack", "matrix",
        "matrixs",
    ]

    init(_ text: String) throws(Problem) {
        guard let separator = text.range(of: "://") else {
            throw Problem(
                description: "an Apprise URL starts with its kind: \(Self.schemes.joined(separator: "://, "))://")
        }
        scheme = text[..<separator.lowerBound].lowercased()
        guard Self.schemes.contains(scheme) else {
            throw Problem(
                description: "'\(scheme)://' is not a kind hubd has; use \(Self.schemes.joined(separator: "://, "))://")
        }
        guard !text.contains(where: { $0.isWhitespace || $0.isNewline }) else {
            throw Problem(description: "a URL has no spaces or line breaks (percent-encode them as %20)")
        }
        var rest = Substring(text[separator.upperBound...])
        query = []
        if let mark = rest.firstIndex(of: "?") {
            for pair in rest[rest.index(after: mark)...].split(separator: "&") where !pair.isEmpty {
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let value = parts.count > 1 ? Self.decoded(parts[1].replacingOccurrences(of: "+", with: " ")) : ""
                query.append((Self.decoded(String(parts[0])).lowercased(), value))
            }
            rest = rest[..<mark]
        }
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        var authority = rest[..<slash]
        path = rest[slash...].split(separator: "/").map { Self.decoded(String($0)) }
        if let at = authority.lastIndex(of: "@") {
            let info = authority[..<at]
            if let colon = info.firstIndex(of: ":") {
                user = Self.decoded(String(info[..<colon]))
                password = Self.decoded(String(info[info.index(after: colon)...]))
            } else {
                user = Self.decoded(String(info))
            }
            authority = authority[authority.index(after: at)...]
        }
        self.authority = Self.decoded(String(authority))
        guard !self.authority.isEmpty else { throw Problem(description: "the URL has nothing after \(scheme)://") }
    }

    private static func decoded(_ text: String) -> String { text.removingPercentEncoding ?? text }

    /// The host and port as an `http(s)://` base URL.
    private func base(secure: Bool) -> String { (secure ? "https://" : "http://") + authority }

    /// The query's value for `key`; `nil` when absent.
    private func parameter(_ key: String) -> String? { query.last { $0.key == key }?.value }

    /// The backend's `type` and keys the URL says.
    func settings() throws(Problem) -> (type: String, keys: [(key: String, values: [String])]) {
        var keys: [(key: String, values: [String])] = []
        func set(_ key: String, _ value: String?) { if let value, !value.isEmpty { keys.append((key, [value])) } }
        let type: String
        var allowed: [String] = []
        switch scheme {
        case "mailto", "mailtos":
            type = "email"
            allowed = ["to", "from", "smtp", "mode", "name"]
            let host = parameter("smtp") ?? authority.split(separator: ":").first.map(String.init) ?? authority
            set("host", host)
            if parameter("smtp") == nil, let port = authority.split(separator: ":").dropFirst().first {
                set("port", String(port))
            }
            switch parameter("mode")?.lowercased() {
            case "ssl"?, "implicit"?: set("tls", "implicit")
            case "starttls"?: set("tls", "starttls")
            case nil: set("tls", scheme == "mailtos" ? "starttls" : "none")
            case let mode?: throw Problem(description: "mode=\(mode): use mode=starttls or mode=ssl")
            }
            set("username", user)
            set("password", password)
            let from = parameter("from") ?? user.map { $0.contains("@") ? $0 : $0 + "@" + host }
            set("from", parameter("name").map { name in from.map { "\(name) <\($0)>" } ?? name } ?? from)
            let recipients =
                (parameter("to").map { $0.split(separator: ",").map(String.init) } ?? []) + path
            let to = recipients.isEmpty ? from.map { [$0] } ?? [] : recipients
            if !to.isEmpty { keys.append(("to", to)) }
        case "tgram":
            type = "telegram"
            set("token", authority)
            guard path.count == 1 else {
                throw Problem(description: "tgram://<bot token>/<chat id>: one chat per backend")
            }
            set("chat_id", path[0])
        case "pover":
            type = "pushover"
            allowed = ["priority", "sound", "retry", "expire"]
            set("user", user)
            set("token", authority)
            if !path.isEmpty { set("device", path.joined(separator: ",")) }
            let names = ["low": "-2", "moderate": "-1", "normal": "0", "high": "1", "emergency": "2"]
            set("priority", parameter("priority").map { names[$0.lowercased()] ?? $0 })
            set("sound", parameter("sound"))
            set("emergency_retry", parameter("retry"))
            set("emergency_expire", parameter("expire"))
        case "gotify", "gotifys":
            type = "gotify"
            allowed = ["priority"]
            guard let token = path.last else { throw Problem(description: "gotify://<host>/<application token>") }
            set("url", ([base(secure: scheme == "gotifys")] + path.dropLast()).joined(separator: "/"))
            set("token", token)
            set("priority", parameter("priority"))
        case "ntfy", "ntfys":
            type = "ntfy"
            allowed = ["priority", "tags", "click"]
            if password != nil {
                throw Problem(
                    description: "ntfy with a user and password: use an access token, ntfys://<token>@<host>/<topic>")
            }
            if path.isEmpty {
                set("topic", authority)
            } else {
                set("url", base(secure: scheme == "ntfys"))
                guard path.count == 1 else {
                    throw Problem(description: "ntfy://<host>/<topic>: one topic per backend")
                }
                set("topic", path[0])
            }
            set("token", user)
            set("priority", parameter("priority"))
            set("tags", parameter("tags"))
            set("click", parameter("click"))
        case "discord":
            type = "discord"
            guard path.count == 1 else { throw Problem(description: "discord://<webhook id>/<webhook token>") }
            set("webhook_url", "https://discord.com/api/webhooks/\(authority)/\(path[0])")
        case "slack":
            type = "slack"
            guard path.count == 2, !authority.hasPrefix("xox") else {
                throw Problem(
                    description:
                        "slack://<A>/<B>/<C>, the three parts of an incoming webhook (it posts to the channel it was made for)"
                )
            }
            set("webhook_url", "https://hooks.slack.com/services/\(authority)/\(path[0])/\(path[1])")
        default:  // matrix, matrixs
            type = "matrix"
            allowed = ["msgtype"]
            set("homeserver", base(secure: scheme == "matrixs"))
            if let password {
                set("user", user)
                set("password", password)
            } else {
                set("token", user)
            }
            guard path.count == 1 else {
                throw Problem(description: "matrixs://…@<host>/#<room>: one room per backend")
            }
            let host = authority.split(separator: ":").first.map(String.init) ?? authority
            let room = path[0].hasPrefix("!") || path[0].hasPrefix("#") ? path[0] : "#" + path[0]
            set("room", room.contains(":") ? room : room + ":" + host)
            set("msgtype", parameter("msgtype"))
        }
        if let unknown = query.first(where: { !allowed.contains($0.key) }) {
            let known = allowed.isEmpty ? "none" : allowed.joined(separator: ", ")
            throw Problem(description: "?\(unknown.key)= is not something hubd's \(type) takes (it takes: \(known))")
        }
        return (type, keys)
    }
}

extension ConfigNode {
    /// A backend given by an Apprise URL (`apprise:`, `apprise_file:` or its environment variable), expanded into
    /// the keys of its kind, and the keys the URL said (not those the mapping set beside it); this node and none
    /// when there is no URL.
    func expandingApprise() throws(ConfigurationError) -> (node: ConfigNode, derived: Set<String>) {
        guard self["apprise"].isSet || self["apprise_file"].isSet else { return (self, []) }
        if self["type"].isSet {
            throw self["type"].invalid("an apprise URL says the kind itself (its scheme): remove type")
        }
        guard let text = try secret("apprise"), !text.isEmpty else { throw self["apprise"].invalid("empty") }
        let expanded: (type: String, keys: [(key: String, values: [String])])
        do {
            expanded = try AppriseURL(text).settings()
        } catch {
            throw secretSource("apprise").invalidValue("…", error.description)
        }
        let written = Set((try? keys()) ?? [])
        let derived = Set(expanded.keys.map(\.key).filter { !written.contains($0) }.map { path + "." + $0 })
        return (replacing("apprise", with: [("type", [expanded.type])] + expanded.keys), derived)
    }
}

extension ConfigurationError {
    /// This error, saying that its key came from the backend's apprise URL when it did (the user wrote the URL, not
    /// the key the message names).
    func said(byAppriseURL keys: Set<String>) -> ConfigurationError {
        let note = " (this comes from the backend's apprise URL)"
        switch self {
        case .invalid(let file, let key, let line, let reason) where keys.contains(key):
            return .invalid(file: file, key: key, line: line, reason: reason + note)
        case .invalidValue(let file, let key, let value, let reason) where keys.contains(key):
            return .invalidValue(file: file, key: key, value: value, reason: reason + note)
        default:
            return self
        }
    }
}
