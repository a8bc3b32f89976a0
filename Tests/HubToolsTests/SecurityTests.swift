import AsyncHTTPClient
import Foundation
import HubCore
import HubTestKit
import NIOCore
import NIOSSL
import Testing

@testable import HubAgent

/// Locked doors (issue 51), against a real hubd over real HTTP with its default configuration (no `http.token`):
/// every reproduction of the issue is now a refused request, with its status and the reason named, and changes
/// nothing; a person's role and a token's scope decide what they may do, and the book names who did it.
@Suite(.timeLimit(.minutes(3)))
struct SecurityTests {
    /// A running hubd as it comes, with a household: ana (admin), ben (member), vic (viewer), and a read token.
    struct House {
        let hub: RunningHub
        let http: RawHTTP
        let readToken: String

        /// Logs `user` in through the login page as a browser would (its form, from its own origin): the cookie.
        func logIn(_ user: String, password: String = RunningHub.password) async throws -> String {
            let answer = try await http.send(
                "POST", "/login",
                headers: [("Origin", http.origin), ("Content-Type", "application/x-www-form-urlencoded")],
                body: "user=\(user)&password=\(password.replacingOccurrences(of: " ", with: "+"))&next=%2Falerts")
            #expect(answer.status == 303 && answer.header("location") == "/alerts", "\(answer)")
            let cookie = try #require(answer.header("set-cookie"), "no cookie: \(answer)")
            return String(cookie.split(separator: ";")[0])
        }

        /// A browser's request with `cookie`, from `origin` (nil: no Origin header).
        func browser(
            _ method: String, _ path: String, cookie: String, origin: String?, type: String = "application/json",
            body: String? = nil, extra: [(String, String)] = []
        ) async throws -> RawHTTP.Answer {
            var headers = [("Cookie", cookie)] + extra
            if let origin { headers.append(("Origin", origin)) }
            if body != nil { headers.append(("Content-Type", type)) }
            return try await http.send(method, path, headers: headers, body: body)
        }

        func program(_ method: String, _ path: String, token: String, body: String? = nil) async throws
            -> RawHTTP.Answer
        {
            var headers = [("Authorization", "Bearer \(token)")]
            if body != nil { headers.append(("Content-Type", "application/json")) }
            return try await http.send(method, path, headers: headers, body: body)
        }

        var silences: String {
            get async throws { try await hub.hubctl.run("silences", "list").standardOutput }
        }
    }

    static let notifiers = """
        notifiers:
          backends:
            audit: { type: file, path: audit.jsonl }
          rules:
            doors: { events: [changed], statuses: [open], backends: [audit], group_wait: 0s }

        """

    func withHouse(
        _ configuration: String = notifiers, _ body: (House) async throws -> Void
    ) async throws {
        try await withBroker { broker in
            let hub = try RunningHub(configuration: configuration, withToken: false)
            try await hub.prepare(broker, sensors: ["kitchen", "front door"])
            try await hub.addUser("ana", role: "admin")
            try await hub.addUser("ben", role: "member")
            try await hub.addUser("vic", role: "viewer")
            let token = try await hub.hubctl.run("tokens", "add", "grafana", "--scope", "read")
            #expect(token.status == 0 && token.standardOutput.hasPrefix("shub_"), "\(token.standardError)")
            let address = try await hub.startAndWaitForHTTP()
            let house = House(
                hub: hub, http: RawHTTP(address: address),
                readToken: token.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines))
            do {
                try await body(house)
            } catch {
                await hub.stop()
                throw error
            }
            #expect(await hub.stop() == 0)
        }
    }

    static let everything = #"{"matchers":["sensor=*"],"endsAt":"2099-01-01T00:00:00Z"}"#

    /// The stranger: the issue's own requests, with no identity, each refused, and nothing changed.
    @Test func aStrangerGetsNowhere() async throws {
        try await withHouse { house in
            let http = house.http
            // Any page on the machine: silence everything until 2099, acknowledge, delete a sensor.
            let silence = try await http.send(
                "POST", "/api/v1/silences",
                headers: [("Origin", "http://evil.example"), ("Content-Type", "text/plain")], body: Self.everything)
            #expect(silence.status == 401 && silence.error.contains("needs a login or an API token"), "\(silence)")
            #expect(silence.header("www-authenticate") == "Bearer realm=\"SensorHub\"")
            let ack = try await http.send(
                "POST", "/api/v1/alerts/doors%2Fkitchen%2Fstatus/ack", headers: [("Origin", "http://evil.example")],
                body: "{}")
            #expect(ack.status == 401, "\(ack)")
            let delete = try await http.send(
                "DELETE", "/api/v1/sensors/kitchen", headers: [("Origin", "http://evil.example")])
            #expect(delete.status == 401, "\(delete)")
            // CORS closed: the preflight is refused, naming the setting.
            let preflight = try await http.send(
                "OPTIONS", "/api/v1/silences",
                headers: [("Origin", "http://evil.example"), ("Access-Control-Request-Method", "POST")])
            #expect(preflight.status == 403 && preflight.error.contains("http.cors_origins"), "\(preflight)")
            #expect(preflight.header("access-control-allow-origin") == nil)
            // DNS rebinding: another name for the hub's address reads nothing, even with a good token.
            let rebound = try await http.send(
                "GET", "/api/v1/sensors",
                headers: [("Host", "attacker.example"), ("Authorization", "Bearer \(house.readToken)")])
            #expect(rebound.status == 403 && rebound.error.contains("does not answer to the name 'attacker.example'"))
            // Reads: the burglar on the LAN learns nothing of the doors or the silences.
            for path in [
                "/api/v1/sensors", "/api/v1/events", "/api/v1/alerts", "/api/v1/silences", "/metrics", "/alerts",
            ] {
                let read = try await http.send("GET", path)
                #expect(read.status == 401, "GET \(path): \(read)")
            }
            // A person's browser asking for a page is sent to the login page, and back after.
            let page = try await http.send("GET", "/alerts", headers: [("Accept", "text/html")])
            #expect(page.status == 303 && page.header("location") == "/login?next=%2Falerts", "\(page)")
            // Followed from another site: asked again by the hub's own page (a logged-in browser's cookie then goes),
            // which shows nothing of the hub.
            let linked = try await http.send(
                "GET", "/alerts", headers: [("Accept", "text/html"), ("Sec-Fetch-Site", "cross-site")])
            #expect(linked.status == 200 && linked.body.contains(#"http-equiv="refresh" content="0; url=/alerts""#))
            #expect(!linked.body.contains("Silences"))
            // A token that is not one: refused, as is a made-up one in the tokens' form.
            for token in ["aaaaaaaaaaaaaaaa", "shub_00000000_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"] {
                let wrong = try await house.program("GET", "/api/v1/sensors", token: token)
                #expect(wrong.status == 401 && wrong.error.contains("not one this hub knows"), "\(wrong)")
            }
            // Nothing changed.
            #expect(try await house.silences.contains("No silences in force"))
            #expect(try house.hub.sensor("kitchen") != nil)
            #expect(try await house.program("GET", "/api/v1/sensors", token: house.readToken).status == 200)
            // Each refusal counted by why.
            let metrics = try await house.program("GET", "/metrics", token: house.readToken).body
            for (reason, count) in [("no identity", 11), ("host", 1), ("cross-origin", 1), ("bad credentials", 2)] {
                let line = metrics.split(separator: "\n").first {
                    $0.hasPrefix("sensorhub_http_refused_total{reason=\"\(reason)\"}")
                }
                #expect(line.flatMap { Int($0.split(separator: " ").last ?? "") } == count, "\(reason): \(line ?? "none")")
            }
        }
    }

    /// A logged-in browser is no weapon for another page: its cookie goes only with the hub's own requests
    /// (SameSite=Strict), and a write that does carry it is refused unless it comes from the hub's own origin.
    @Test func aLoggedInBrowserIsNoWeaponForAnotherPage() async throws {
        try await withHouse { house in
            let cookie = try await house.logIn("ana")
            let origin = house.http.origin
            let refusals: [(String, RawHTTP.Answer)] = [
                (
                    "another origin",
                    try await house.browser(
                        "POST", "/api/v1/silences", cookie: cookie, origin: "http://evil.example", type: "text/plain",
                        body: Self.everything)
                ),
                (
                    "no Origin",
                    try await house.browser(
                        "POST", "/api/v1/silences", cookie: cookie, origin: nil, body: Self.everything)
                ),
                (
                    "Origin null",
                    try await house.browser(
                        "POST", "/api/v1/silences", cookie: cookie, origin: "null", body: Self.everything)
                ),
                (
                    "Sec-Fetch-Site: cross-site",
                    try await house.browser(
                        "POST", "/api/v1/silences", cookie: cookie, origin: origin, body: Self.everything,
                        extra: [("Sec-Fetch-Site", "cross-site")])
                ),
                (
                    "a delete from another origin",
                    try await house.browser(
                        "DELETE", "/api/v1/sensors/kitchen", cookie: cookie, origin: "http://evil.example")
                ),
            ]
            for (what, answer) in refusals {
                #expect(
                    answer.status == 403 && answer.error.contains("must come from the hub's own pages"),
                    "\(what): \(answer)")
            }
            // From its own page, but not as JSON: refused too (a form can send text/plain without a preflight).
            let plain = try await house.browser(
                "POST", "/api/v1/silences", cookie: cookie, origin: origin, type: "text/plain",
                body: #"{"matchers":["door*"],"endsAt":"2026-12-31T00:00:00Z"}"#)
            #expect(plain.status == 415 && plain.error.contains("Content-Type: application/json"), "\(plain)")
            #expect(try await house.silences.contains("No silences in force"))
            #expect(try house.hub.sensor("kitchen") != nil)
        }
    }

    /// Viewers look, members act, admins manage; a token's scope is its role; the book names who did what.
    @Test func rolesAndScopesDecideAndTheBookNamesWho() async throws {
        try await withHouse { house in
            let (ana, ben, vic) = (
                try await house.logIn("ana"), try await house.logIn("ben"), try await house.logIn("vic")
            )
            let origin = house.http.origin
            let end = Timestamp.now.adding(milliseconds: 2 * 3_600_000).iso8601
            let silence = #"{"matchers":["door*"],"endsAt":"\#(end)","comment":"painting"}"#
            #expect(try await house.browser("GET", "/api/v1/sensors", cookie: vic, origin: nil).status == 200)
            let viewer = try await house.browser("POST", "/api/v1/silences", cookie: vic, origin: origin, body: silence)
            #expect(viewer.status == 403 && viewer.error.contains("vic (viewer) may not do this"), "\(viewer)")
            let reader = try await house.program("POST", "/api/v1/silences", token: house.readToken, body: silence)
            #expect(reader.status == 403 && reader.error.contains("token grafana (read) may not"), "\(reader)")
            // A member silences, as herself, whatever the body claims.
            let made = try await house.browser(
                "POST", "/api/v1/silences", cookie: ben, origin: origin,
                body: #"{"matchers":["door*"],"endsAt":"\#(end)","comment":"painting","createdBy":"ben"}"#)
            #expect(made.status == 201 && made.body.contains(#""createdBy":"ben""#), "\(made)")
            let member = try await house.browser("DELETE", "/api/v1/sensors/kitchen", cookie: ben, origin: origin)
            #expect(member.status == 403 && member.error.contains("needs manage (admin)"), "\(member)")
            // The silence is announced where the doors' alerts go, naming ben.
            let audit = house.hub.hubctl.state.file("audit.jsonl")
            try await eventually("the silence announced") {
                (try? String(contentsOfFile: audit, encoding: .utf8))?.contains("ben silenced door* for 2 h — painting")
                    == true
            }
            // An admin manages.
            let removed = try await house.browser("DELETE", "/api/v1/sensors/kitchen", cookie: ana, origin: origin)
            #expect(removed.status == 204, "\(removed)")
            try await house.hub.waitForLog("sensor removed over HTTP", "by=ana")
            // Who one is.
            let me = try await house.browser("GET", "/api/v1/me", cookie: ben, origin: nil)
            #expect(me.body == #"{"access":"act","kind":"person","name":"ben","role":"member"}"#, "\(me)")
        }
    }

    /// A token revoked, a person removed, a password changed, a logout: refused from the next request.
    @Test func whatIsTakenBackIsRefusedAtOnce() async throws {
        try await withHouse { house in
            let hubctl = house.hub.hubctl
            let write = try await hubctl.run("tokens", "add", "ha", "--scope", "write")
            let token = write.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(try await house.program("GET", "/api/v1/me", token: token).body.contains(#""scope":"write""#))
            #expect(try await hubctl.run("tokens", "revoke", "ha").status == 0)
            #expect(try await house.program("GET", "/api/v1/me", token: token).status == 401)

            let ben = try await house.logIn("ben")
            #expect(try await house.browser("GET", "/api/v1/me", cookie: ben, origin: nil).status == 200)
            let logins = try await hubctl.run("users", "logins", "ben")
            #expect(logins.standardOutput.contains("ben") && logins.standardOutput.contains("127.0.0.1"))
            #expect(try await hubctl.run("users", "passwd", "ben", input: "another pass phrase\n").status == 0)
            #expect(try await house.browser("GET", "/api/v1/me", cookie: ben, origin: nil).status == 401)

            let vic = try await house.logIn("vic")
            #expect(try await hubctl.run("users", "remove", "vic").status == 0)
            #expect(try await house.browser("GET", "/api/v1/me", cookie: vic, origin: nil).status == 401)

            // A lost phone: its login ended from another.
            let ana = try await house.logIn("ana")
            let phone = try await house.logIn("ana")
            let phoneID = String(phone.split(separator: "=")[1].split(separator: ".")[0])
            let listed = try await house.browser("GET", "/api/v1/logins", cookie: ana, origin: nil)
            #expect(listed.body.contains(phoneID), "\(listed)")
            let ended = try await house.browser(
                "DELETE", "/api/v1/logins/\(phoneID)", cookie: ana, origin: house.http.origin)
            #expect(ended.status == 204, "\(ended)")
            #expect(try await house.browser("GET", "/api/v1/me", cookie: phone, origin: nil).status == 401)
            // Logging out ends this browser's.
            let out = try await house.browser("POST", "/logout", cookie: ana, origin: house.http.origin)
            #expect(out.status == 303 && out.header("set-cookie")?.contains("Max-Age=0") == true, "\(out)")
            #expect(try await house.browser("GET", "/api/v1/me", cookie: ana, origin: nil).status == 401)
        }
    }

    /// Silences have limits, each refused naming it (the issue took 10,000 silences, 64 KB comments, 9999-12-31 and
    /// 1970).
    @Test func silencesAreBounded() async throws {
        try await withHouse { house in
            let ben = try await house.logIn("ben")
            func add(_ body: String) async throws -> RawHTTP.Answer {
                try await house.browser("POST", "/api/v1/silences", cookie: ben, origin: house.http.origin, body: body)
            }
            let soon = Timestamp.now.adding(milliseconds: 3_600_000).iso8601
            let cases: [(String, String)] = [
                (#"{"matchers":["door*"],"endsAt":"9999-12-31T00:00:00Z"}"#, "the longest is 90 days"),
                (#"{"matchers":["door*"],"startsAt":"1970-01-01T00:00:00Z","endsAt":"\#(soon)"}"#, "in the past"),
                (
                    #"{"matchers":["door*"],"endsAt":"\#(soon)","comment":"\#(String(repeating: "x", count: 60_000))"}"#,
                    "at most 500"
                ),
            ]
            for (body, reason) in cases {
                let answer = try await add(body)
                #expect(answer.status == 400 && answer.error.contains(reason), "\(reason): \(answer)")
            }
            for index in 0..<100 {
                let answer = try await add(#"{"matchers":["sensor=s\#(index)"],"endsAt":"\#(soon)"}"#)
                #expect(answer.status == 201, "silence \(index): \(answer)")
            }
            let more = try await add(#"{"matchers":["sensor=one-more"],"endsAt":"\#(soon)"}"#)
            #expect(more.status == 400 && more.error.contains("the most the hub keeps (100)"), "\(more)")
        }
    }

    /// The headers every answer leaves with, the cookie's attributes, and no token kept by the pages.
    @Test func headersCookieAndPages() async throws {
        try await withHouse { house in
            let login = try await house.http.send(
                "POST", "/login",
                headers: [("Origin", house.http.origin), ("Content-Type", "application/x-www-form-urlencoded")],
                body: "user=ana&password=tests+pass+phrase+42")
            let cookie = try #require(login.header("set-cookie"))
            #expect(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict") && cookie.contains("Path=/"))
            #expect(!cookie.contains("Secure"), "plain HTTP: no Secure (the browser would not send it back)")
            let session = String(cookie.split(separator: ";")[0])
            for path in ["/", "/alerts", "/api/v1/sensors", "/healthz", "/login", "/a/nothing"] {
                let answer = try await house.browser("GET", path, cookie: session, origin: nil)
                let policy = answer.header("content-security-policy") ?? ""
                #expect(policy.contains("script-src 'self';") && policy.contains("frame-ancestors 'none'"), "\(path)")
                #expect(!policy.contains("script-src 'self' 'unsafe-inline'"), "\(path)")
                #expect(answer.header("x-content-type-options") == "nosniff", "\(path)")
                #expect(answer.header("x-frame-options") == "DENY", "\(path)")
                #expect(
                    answer.header("referrer-policy") == (path.hasPrefix("/a/") ? "no-referrer" : "same-origin"),
                    "\(path)")
            }
            let page = try await house.browser("GET", "/", cookie: session, origin: nil)
            #expect(page.status == 200 && !page.body.contains("<script>"), "no inline script")
            let push = try await house.http.send("GET", "/dashboard/push.js")
            #expect(push.status == 200 && !push.body.contains("Authorization") && !push.body.contains("'token'"))
            // A hub with no accounts says how to make the first, on the login page.
            let form = try await house.http.send("GET", "/login")
            #expect(form.status == 200 && form.body.contains("<form method=\"post\" action=\"/login\">"))
        }
    }

    /// Guessing is slow, per address and per name, and nobody in the household is kept out by a stranger's failures
    /// (addresses through a trusted proxy's X-Forwarded-For).
    @Test func failedLoginsAreSlowedWithoutLockingTheHouseholdOut() async throws {
        try await withHouse("http: { trusted_proxies: [127.0.0.1] }\n") { house in
            func login(_ user: String, _ password: String, from address: String) async throws -> RawHTTP.Answer {
                try await house.http.send(
                    "POST", "/login",
                    headers: [
                        ("Origin", house.http.origin), ("Content-Type", "application/x-www-form-urlencoded"),
                        ("X-Forwarded-For", address),
                    ], body: "user=\(user)&password=\(password)")
            }
            // Ana's phone logged in before.
            #expect(try await login("ana", "tests+pass+phrase+42", from: "10.0.0.7").status == 303)
            // A stranger: five failures free, then a wait that grows.
            for attempt in 1...6 {
                let answer = try await login("ana", "guess\(attempt)", from: "10.0.0.66")
                #expect(answer.status == 401 && answer.body.contains("Wrong name or password."), "attempt \(attempt)")
            }
            let held = try await login("ana", "tests+pass+phrase+42", from: "10.0.0.66")
            #expect(held.status == 429 && held.header("retry-after") != nil, "\(held)")
            #expect(held.body.contains("Too many failed logins"))
            // A name nobody has fails the same way (the answer does not tell which names exist).
            let nobody = try await login("mallory", "guess", from: "10.0.0.67")
            #expect(nobody.status == 401 && nobody.body.contains("Wrong name or password."))
            // Failures for "ana" from many addresses hold the name back from strangers…
            for index in 0..<6 { _ = try await login("ana", "guess", from: "10.0.1.\(index)") }
            let stranger = try await login("ana", "tests+pass+phrase+42", from: "10.0.2.1")
            #expect(stranger.status == 429, "\(stranger)")
            // …but not from Ana's phone, which logged in as ana before.
            #expect(try await login("ana", "tests+pass+phrase+42", from: "10.0.0.7").status == 303)
            try await house.hub.waitForLog("login held back: too many failures")
            // Tokens guessed from one address are slowed too.
            func get(_ token: String, from address: String) async throws -> RawHTTP.Answer {
                try await house.http.send(
                    "GET", "/api/v1/me", headers: [("Authorization", "Bearer \(token)"), ("X-Forwarded-For", address)])
            }
            for attempt in 1...6 {
                #expect(try await get("guess-\(attempt)-0123456789", from: "10.0.9.9").status == 401)
            }
            let guessing = try await get(house.readToken, from: "10.0.9.9")
            #expect(guessing.status == 429 && guessing.header("retry-after") != nil, "\(guessing)")
            #expect(try await get(house.readToken, from: "10.0.9.10").status == 200)
        }
    }

    /// `http.token` keeps working as an admin token (no configuration breaks), and a weak one is refused at start.
    @Test func aConfiguredTokenKeepsWorkingAndAWeakOneIsRefused() async throws {
        let strong = "hub-token-3f9c2a1b7e4d5c60"
        try await withHouse(Self.notifiers + "http: { token: \(strong) }\n") { house in
            #expect(try await house.program("GET", "/api/v1/sensors", token: strong).status == 200)
            let made = try await house.program(
                "POST", "/api/v1/sensors", token: strong, body: #"{"name":"garage"}"#)
            #expect(made.status == 201, "\(made)")
        }
        let hub = try RunningHub(configuration: "http: { token: aaaaaaaaaaaaaaaa }\n", withToken: false)
        let check = try await runProcess(hub.hubd, ["--check-config"], environment: hub.environment)
        #expect(check.status == 78 && check.standardError.contains("easy to guess"), "\(check.standardError)")
    }

    /// Every route the router knows decides: reachable without an identity only when it is on the public list, which
    /// is the one docs/security.md shows.
    @Test func everyRouteDecides() async throws {
        try await withHouse { house in
            var open: [String] = []
            for route in HubAPI.table {
                let path = route.path.replacingOccurrences(of: "{name}", with: "kitchen")
                    .replacingOccurrences(of: "{id}", with: "00")
                let body: String? = [.post, .patch].contains(route.method) ? "{}" : nil
                let answer = try await house.http.send(
                    route.method.rawValue, path,
                    headers: body == nil ? [] : [("Content-Type", "application/json"), ("Origin", house.http.origin)],
                    body: body)
                let refused = answer.status == 401
                if case .everyone = route.access {
                    #expect(!refused, "\(route.method) \(route.path) is public: \(answer)")
                    open.append("\(route.method) \(route.path)")
                } else {
                    #expect(refused, "\(route.method) \(route.path) answered without an identity: \(answer)")
                }
            }
            let page = try String(
                contentsOf: DocsTests.root.appendingPathComponent("docs/security.md"), encoding: .utf8)
            let documented = page.components(separatedBy: "\n").compactMap { line -> String? in
                guard line.hasPrefix("- `"), let end = line.dropFirst(3).firstIndex(of: "`") else { return nil }
                let entry = String(line.dropFirst(3)[..<end])
                return ["GET ", "POST "].contains(where: entry.hasPrefix) ? entry : nil
            }
            #expect(Set(documented) == Set(open), "docs/security.md's public list")
        }
    }
}

/// hubd's own HTTPS (`http.tls_certificate`, `http.tls_key`): served with the files given, cookies `Secure`, and the
/// files read again on SIGHUP (a renewed certificate needs no restart; one that can't be read leaves the running
/// one).
@Suite(.timeLimit(.minutes(2)))
struct OwnHTTPSTests {
    /// GET `path` over a new connection trusting the test CA; the status, or the error.
    func get(_ url: String, ca: String) async -> Result<UInt, any Error> {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .file(ca)
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(tlsConfiguration: tls))
        let result: Result<UInt, any Error>
        do {
            let response = try await client.execute(authorized(HTTPClientRequest(url: url)), timeout: .seconds(10))
            _ = try await response.body.collect(upTo: 1 << 20)
            result = .success(response.status.code)
        } catch {
            result = .failure(error)
        }
        try? await client.shutdown()
        return result
    }

    @Test func servedWithItsFilesAndReadAgainOnSIGHUP() async throws {
        let certificates = try await TestCertificates.shared()
        try await withBroker { broker in
            let hub = try RunningHub(configuration: "http: { tls_certificate: tls.crt, tls_key: tls.key }\n")
            let (certificate, key) = (hub.hubctl.state.file("tls.crt"), hub.hubctl.state.file("tls.key"))
            func install(_ identity: TestCertificates.ServerIdentity) throws {
                for (from, to) in [(identity.certificateFile, certificate), (identity.keyFile, key)] {
                    try? FileManager.default.removeItem(atPath: to)
                    try FileManager.default.copyItem(atPath: from, toPath: to)
                }
            }
            try install(certificates.localhost)
            try await hub.prepare(broker, sensors: ["door"])
            let address = try await hub.startAndWaitForHTTP()
            let port = try #require(address.split(separator: ":").last)
            let url = "https://localhost:\(port)/api/v1/sensors"
            #expect(try await get(url, ca: certificates.caFile).get() == 200)
            // A login over HTTPS: the cookie is Secure.
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .file(certificates.caFile)
            try await hub.addUser()
            let client = HTTPClient(
                eventLoopGroupProvider: .singleton,
                configuration: .init(tlsConfiguration: tls, redirectConfiguration: .disallow))
            var login = HTTPClientRequest(url: "https://localhost:\(port)/login")
            login.method = .POST
            login.headers.add(name: "Origin", value: "https://localhost:\(port)")
            login.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
            login.body = .bytes(ByteBuffer(string: "user=ana&password=tests+pass+phrase+42"))
            let answer = try await client.execute(login, timeout: .seconds(10))
            try await client.shutdown()
            #expect(answer.status.code == 303)
            let cookie = try #require(answer.headers.first(name: "Set-Cookie"))
            #expect(cookie.contains("Secure") && cookie.contains("HttpOnly"), "\(cookie)")

            // Renewed: another certificate (for another name, so a client can tell), read on SIGHUP.
            try install(certificates.wrongHost)
            hub.child?.send(SIGHUP)
            try await hub.waitForLog("HTTPS certificate read again")
            if case .success(let status) = await get(url, ca: certificates.caFile) {
                Issue.record("the old certificate is still served: \(status)")
            }
            // Files that can't be read at a reload: logged, and the running certificate stays.
            try Data("not a certificate".utf8).write(to: URL(fileURLWithPath: certificate))
            hub.child?.send(SIGHUP)
            try await hub.waitForLog("the HTTPS certificate or key can't be read; the running one stays")
            try install(certificates.localhost)
            hub.child?.send(SIGHUP)
            try await hub.waitForLog("HTTPS certificate read again")
            #expect(try await get(url, ca: certificates.caFile).get() == 200)
            #expect(await hub.stop() == 0)
        }
    }

    /// A certificate that can't be read at start stops hubd (exit 78), naming it.
    @Test func anUnreadableCertificateStopsStartUp() async throws {
        try await withBroker { broker in
            let hub = try RunningHub(configuration: "http: { tls_certificate: missing.crt, tls_key: missing.key }\n")
            try await hub.prepare(broker)
            try hub.start()
            let status = await hub.child?.wait(timeout: .seconds(20))
            #expect(status == 78)
            try await hub.waitForLog("the HTTPS certificate or key can't be used")
        }
    }
}
