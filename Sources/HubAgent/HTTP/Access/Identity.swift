import HubAccess

/// Who a request is from: a person logged in (a session cookie), an API token, or the configuration's `http.token`.
struct Identity: Sendable, Hashable {
    enum Kind: Sendable, Hashable {
        case person(Role, session: String)
        case token(Scope, id: String)
        /// `http.token` in hubd.yaml: an admin token, as it was before there were accounts.
        case configuredToken
    }

    /// The user's or the token's name.
    var name: String
    var kind: Kind

    var access: Access {
        switch kind {
        case .person(let role, _): role.access
        case .token(let scope, _): scope.access
        case .configuredToken: .manage
        }
    }

    /// How it is written where people read who did something (the alert book, the pages, the log): "ana", "token
    /// grafana", "http.token".
    var who: String {
        switch kind {
        case .person: name
        case .token: "token \(name)"
        case .configuredToken: "http.token"
        }
    }

    /// Where it came from, as the alert book records it: "web" for a browser, "api" for a token.
    var via: String {
        if case .person = kind { return "web" }
        return "api"
    }

    /// Whether it came with the browser's cookie (a write then also needs a matching Origin).
    var byCookie: Bool {
        if case .person = kind { return true }
        return false
    }

    /// What it is, in a refusal: "ana (viewer)", "token grafana (read)".
    var described: String {
        switch kind {
        case .person(let role, _): "\(name) (\(role.rawValue))"
        case .token(let scope, _): "token \(name) (\(scope.rawValue))"
        case .configuredToken: "http.token (admin)"
        }
    }
}
