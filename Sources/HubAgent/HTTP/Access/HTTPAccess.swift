import Foundation
import HTTPTypes
import HubAccess
import HubCore
import HubSupport
import Hummingbird
import Logging
import Metrics
import NIOCore

/// The HTTP server's doors (docs/security.md): who a request is from, whether that one may do what it asks, and
/// whether a browser's request really comes from the hub's own pages.
///
/// Every route needs an identity — a person's session cookie, an API token (`hubctl tokens add`), or `http.token`
/// — except the few public ones (`HubRoutes`, `Access`), and the reads `http.public` opens. A browser's write must
/// also come from the hub's own origin (`Origin`, or `Sec-Fetch-Site`), so that no other page can act with the
/// cookie; a token's write needs nothing more (no page can add a token to another site's request).
struct HTTPAccess: Sendable {
    struct Settings: Sendable {
        /// `http.token`: an admin token.
        var configuredToken: String?
        /// The read routes `http.public` opens to anyone, by their path as the route table writes it.
        var publicPaths: Set<String> = []
        /// The names the hub answers to, lowercased, besides IP addresses and `localhost` (`http.hosts`,
        /// `alerts.public_url`'s host, this machine's name); nil answers every name (a Unix socket: no browser can
        /// be rebound onto one).
        var hosts: Set<String>? = []
        /// Other sites whose pages may call the API with a token (`http.cors_origins`).
        var corsOrigins: Set<String> = []
        /// Other origins the pages may show images from: the map tiles' server (`http.map_tiles`).
        var imageOrigins: [String] = []
        /// Reverse proxies whose `X-Forwarded-For` and `X-Forwarded-Proto` are believed (`http.trusted_proxies`).
        var trustedProxies: Set<String> = []
        /// Served over TLS by hubd itself: cookies are `Secure`.
        var tls = false

        init() {}
    }

    let settings: Settings
    /// `http.token`'s SHA-256: compared in constant time with the presented token's.
    private let configuredDigest: String?
    let accounts: AccessCache
    let logger: Logger
    private let throttle = Locked(LoginThrottle())
    /// An unreadable accounts file is logged at most every 10 s, not at every request.
    private let unreadable = Locked(LogThrottle())
    /// One password hash at a time: a burst of logins waits for memory (19 MiB each) rather than taking it.
    private let hashing = AsyncLock()
    /// Where the hashes run: off Swift's cooperative threads (two on 2 cores), which a 36 ms hash would stall.
    static let hashQueue = DispatchQueue(label: "sensorhub.passwords")

    init(settings: Settings, stateDirectory: String, logger: Logger) {
        self.settings = settings
        configuredDigest = settings.configuredToken.map(Secrets.digest)
        self.accounts = AccessCache(store: AccessStore(directory: stateDirectory))
        self.logger = logger
    }

    static let cookie = "sensorhub_session"

    /// Counts a request refused at the doors, by why (`sensorhub_http_refused_total{reason=…}` in /metrics): no
    /// identity, credentials no good, a role or scope short, another site's page, another host name, too many
    /// guesses.
    static func refused(_ reason: String) {
        Counter(label: "sensorhub_http_refused_total", dimensions: [("reason", reason)]).increment()
    }

    /// Counts a login by its outcome (`sensorhub_logins_total{outcome="ok|failed|held"}`).
    static func login(_ outcome: String) {
        Counter(label: "sensorhub_logins_total", dimensions: [("outcome", outcome)]).increment()
    }

    // MARK: - Who

    /// What a request's credentials say.
    enum Found {
        case nobody
        case identity(Identity)
        /// Credentials that are no good, and why (logged; the answer says it too).
        case refused(String)
    }

    /// Who `request` is from: a bearer token first, else the session cookie.
    func identify(_ request: Request, _ context: HubRequestContext, now: Timestamp = .now) -> Found {
        let (document, error) = accounts.document()
        if let error, let count = unreadable.withLock({ $0.note() }) {
            logger.error(
                "the accounts file can't be read; only http.token is taken",
                metadata: ["error": "\(error)", "requests": "\(count)"])
        }
        if let header = request.headers[.authorization] {
            guard header.lowercased().hasPrefix("bearer ") else {
                return .refused("Authorization must be 'Bearer <token>'")
            }
            let token = String(header.dropFirst(7)).trimmingCharacters(in: .whitespaces)
            if token.hasPrefix("shub_"), let found = document.token(token, now: now) {
                return .identity(Identity(name: found.name, kind: .token(found.scope, id: found.id)))
            }
            if let configured = configuredDigest, Secrets.sameDigest(Secrets.digest(token), configured) {
                return .identity(Identity(name: "http.token", kind: .configuredToken))
            }
            return .refused("the token is not one this hub knows (mistyped, expired or revoked?)")
        }
        guard let cookie = request.cookies[Self.cookie]?.value, !cookie.isEmpty else { return .nobody }
        guard let session = document.session(cookie, now: now), let user = document.user(named: session.user) else {
            return .refused("the login has ended (logged out, expired, or the password changed): log in again")
        }
        if now.millisecondsSince1970 - session.lastSeen.millisecondsSince1970 > AccessDocument.seenEvery {
            touch(session.id, now: now)
        }
        return .identity(Identity(name: user.name, kind: .person(user.role, session: session.id)))
    }

    /// Notes that a session was used (its idle time starts again), at most once an hour a session.
    private func touch(_ id: String, now: Timestamp) {
        do {
            try accounts.store.update { document throws(AccessError) in
                guard let index = document.sessions.firstIndex(where: { $0.id == id }) else { return }
                document.sessions[index].lastSeen = now
                document.pruneSessions(now: now)
            }
        } catch {
            logger.error("cannot note a session's use", metadata: ["error": "\(error)"])
        }
    }

    /// The identity `request` needs for `access`, or the refusal: 401 with no (good) credentials — a page asked for
    /// by a browser is sent to the login page instead — 403 when the identity may not, or when a browser's write
    /// comes from another site.
    func require(_ access: Access, _ request: Request, _ context: HubRequestContext) throws -> Identity {
        let identity: Identity
        // Tokens guessed from one address are slowed as passwords are (http.token may be short).
        let bearer = request.headers[.authorization] != nil
        let address = client(request, context)
        let guesses = "(tokens from \(address))"
        if bearer, let wait = throttle.withLock({ $0.wait(address: address, user: guesses, now: .now) }) {
            Self.refused("throttled")
            throw HTTPError(
                .tooManyRequests, headers: [.retryAfter: "\((wait + 999) / 1000)"],
                message: "too many wrong tokens from here: try again in \(HubAPI.seconds(wait))")
        }
        switch identify(request, context) {
        case .identity(let found):
            identity = found
        case .nobody:
            Self.refused("no identity")
            throw unauthenticated(request, reason: nil)
        case .refused(let reason):
            Self.refused("bad credentials")
            if bearer { throttle.withLock { _ = $0.failed(address: address, user: guesses, now: .now) } }
            logger.notice(
                "HTTP request refused",
                metadata: ["path": "\(request.uri.path)", "client": "\(address)", "reason": "\(reason)"])
            throw unauthenticated(request, reason: reason)
        }
        guard identity.access >= access else {
            Self.refused("not allowed")
            throw HTTPError(
                .forbidden,
                message: "\(identity.described) may not do this: it needs \(access) (hubctl users role, hubctl tokens)")
        }
        if identity.byCookie && !Self.isSafe(request.method) {
            try checkSameOrigin(request, context)
        }
        return identity
    }

    static func isSafe(_ method: HTTPRequest.Method) -> Bool {
        method == .get || method == .head || method == .options
    }

    /// Refuses a browser's write that another site's page made: its `Origin` must be the hub's own (the host it
    /// asked for), and `Sec-Fetch-Site`, when the browser sends it, must not say cross-site. A browser's POST, PUT,
    /// PATCH or DELETE always carries `Origin`; one without it (or with `null`) is refused too.
    func checkSameOrigin(_ request: Request, _ context: HubRequestContext) throws {
        if let site = request.headers[.secFetchSite], site == "cross-site" || site == "same-site" {
            throw crossSite(request, context, "Sec-Fetch-Site: \(site)")
        }
        guard let origin = request.headers[.origin], origin != "null" else {
            throw crossSite(request, context, "no Origin")
        }
        guard let host = Self.authority(ofOrigin: origin), let asked = asked(request, context),
            host.lowercased() == asked.lowercased()
        else {
            throw crossSite(request, context, "Origin \(origin)")
        }
    }

    private func crossSite(_ request: Request, _ context: HubRequestContext, _ what: String) -> HTTPError {
        Self.refused("cross-site")
        logger.warning(
            "cross-site request refused",
            metadata: [
                "path": "\(request.uri.path)", "method": "\(request.method)", "why": "\(what)",
                "client": "\(client(request, context))",
            ])
        return HTTPError(
            .forbidden,
            message: "a browser's write must come from the hub's own pages (\(what)); programs use a token instead")
    }

    /// `hub.lan:8080` of `http://hub.lan:8080`; nil when it is not an origin.
    static func authority(ofOrigin origin: String) -> String? {
        guard let scheme = origin.range(of: "://") else { return nil }
        let rest = origin[scheme.upperBound...]
        guard !rest.isEmpty, !rest.contains("/") else { return nil }
        return String(rest)
    }

    private func unauthenticated(_ request: Request, reason: String?) -> any Error {
        if request.method == .get, request.headers[.accept]?.contains("text/html") == true {
            // A link followed from another site (a chat, a mail) comes without the SameSite=Strict cookie even when
            // the browser is logged in: the page asks again itself, a navigation of the hub's own, which carries it.
            if reason == nil, request.headers[.secFetchSite] == "cross-site" { return PageRedirect.again(request) }
            return PageRedirect.login(from: request)
        }
        var headers = HTTPFields()
        headers[.wwwAuthenticate] = "Bearer realm=\"SensorHub\""
        let message =
            reason.map { "not let in: \($0)" }
            ?? "this needs a login or an API token (Authorization: Bearer …): see docs/security.md"
        return HTTPError(.unauthorized, headers: headers, message: message)
    }

    // MARK: - Where from

    /// The client's address: the socket's peer, or — when the peer is a trusted proxy — the last address it put in
    /// `X-Forwarded-For`. "local" on a Unix socket.
    func client(_ request: Request, _ context: HubRequestContext) -> String {
        guard let peer = context.peer else { return "local" }
        guard settings.trustedProxies.contains(peer), let forwarded = request.headers[.xForwardedFor],
            let last = forwarded.split(separator: ",").last?.trimmingCharacters(in: .whitespaces), !last.isEmpty
        else { return peer }
        return last
    }

    /// The host (and port) the browser asked for: the `Host` header, or a trusted proxy's `X-Forwarded-Host` (nginx
    /// passes its own upstream's name as `Host` unless told otherwise).
    func asked(_ request: Request, _ context: HubRequestContext) -> String? {
        if let peer = context.peer, settings.trustedProxies.contains(peer),
            let forwarded = request.headers[.xForwardedHost]?.split(separator: ",").first
        {
            return forwarded.trimmingCharacters(in: .whitespaces)
        }
        return request.head.authority
    }

    /// Whether the browser reached the hub over HTTPS: hubd's own TLS, or a trusted proxy's `X-Forwarded-Proto`.
    func isSecure(_ request: Request, _ context: HubRequestContext) -> Bool {
        if settings.tls { return true }
        guard let peer = context.peer, settings.trustedProxies.contains(peer) else { return false }
        return request.headers[.xForwardedProto]?.lowercased() == "https"
    }

    // MARK: - Logging in

    /// Why a login was not taken.
    enum LoginRefusal: Error {
        /// Too many failures: try again in this many milliseconds.
        case wait(Int64)
        case wrong
    }

    /// Checks `password` for `user` (slowed per address and per name), and opens a session: the cookie's value.
    func logIn(user: String, password: String, client: String, agent: String, now: Timestamp = .now)
        async throws(LoginRefusal) -> String
    {
        let name = user.lowercased().trimmingCharacters(in: .whitespaces)
        if let wait = throttle.withLock({ $0.wait(address: client, user: name, now: now) }) {
            Self.login("held")
            logger.warning(
                "login held back: too many failures",
                metadata: [
                    "user": "\(name)", "client": "\(client)",
                    "wait_ms": "\(wait)",
                ])
            throw .wait(wait)
        }
        let found = accounts.document().document.user(named: name)
        // A name nobody has is checked against a decoy: the time does not tell which names exist.
        let stored = found?.password ?? PasswordHash.decoy
        let good = await hashing.withLock {
            await Self.hashQueue.run { PasswordHash.verify(password, against: stored) }
        }
        guard good, let found else {
            let wait = throttle.withLock { $0.failed(address: client, user: name, now: now) }
            Self.login("failed")
            logger.warning(
                "login failed", metadata: ["user": "\(name)", "client": "\(client)", "wait_ms": "\(wait)"])
            throw .wrong
        }
        throttle.withLock { $0.succeeded(address: client, user: name, now: now) }
        let rehash = PasswordHash.needsRehash(found.password)
        let newHash =
            rehash
            ? await hashing.withLock { await Self.hashQueue.run { try? PasswordHash.make(password) } } : nil
        do {
            let cookie = try accounts.store.update { document throws(AccessError) in
                document.pruneSessions(now: now)
                if let newHash, document.user(named: name)?.password == found.password {
                    try document.setPassword(name, hash: newHash, now: found.passwordChanged, keep: nil)
                }
                return document.openSession(user: name, address: client, agent: agent, now: now)
            }
            Self.login("ok")
            logger.notice("logged in", metadata: ["user": "\(name)", "client": "\(client)"])
            return cookie
        } catch {
            logger.error("cannot open a session", metadata: ["user": "\(name)", "error": "\(error)"])
            throw .wrong
        }
    }

    /// Ends the session a cookie names (logging out).
    func logOut(cookie: String) {
        guard let dot = cookie.firstIndex(of: ".") else { return }
        let id = String(cookie[..<dot])
        let document = accounts.document().document
        guard let session = document.session(cookie, now: .now), session.id == id else { return }
        do {
            _ = try accounts.store.update { document throws(AccessError) in document.endSessions(id: id) }
            logger.notice("logged out", metadata: ["user": "\(session.user)", "session": "\(id)"])
        } catch {
            logger.error("cannot end a session", metadata: ["error": "\(error)"])
        }
    }
}

/// A page asked for by a browser without a login: to the login page, and back once logged in; or, for a link
/// followed from another site, the same page asked again by the hub's own page (`again`).
struct PageRedirect: Error {
    let location: String
    /// Asked again through a page that refreshes itself (the browser then sends its SameSite=Strict cookie).
    var refresh = false

    static func login(from request: Request) -> PageRedirect {
        let path = request.uri.path
        let query = request.uri.query.map { "?" + $0 } ?? ""
        return PageRedirect(location: "/login?next=" + WebText.percentEncoded(path + query))
    }

    static func again(_ request: Request) -> PageRedirect {
        let query = request.uri.query.map { "?" + $0 } ?? ""
        return PageRedirect(location: request.uri.path + query, refresh: true)
    }

    var response: Response {
        guard refresh else {
            return Response(status: .seeOther, headers: [.location: location, .cacheControl: "no-store"])
        }
        let target = WebText.html(location)
        let page =
            "<!doctype html><html><head><meta charset=\"utf-8\">"
            + "<meta http-equiv=\"refresh\" content=\"0; url=\(target)\"><title>SensorHub</title></head>"
            + "<body><p><a href=\"\(target)\">SensorHub</a></p></body></html>"
        return Response(
            status: .ok, headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(string: page)))
    }
}

extension HTTPField.Name {
    static let secFetchSite = HTTPField.Name("Sec-Fetch-Site")!
    static let xForwardedFor = HTTPField.Name("X-Forwarded-For")!
    static let xForwardedProto = HTTPField.Name("X-Forwarded-Proto")!
    static let xForwardedHost = HTTPField.Name("X-Forwarded-Host")!
}
