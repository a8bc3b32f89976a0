import Foundation
import HTTPTypes
import HubAccess
import HubCore
import HubSupport
import Hummingbird
import NIOCore

/// Logging in and out (`/login`, `/logout`), who one is (`/api/v1/me`), and one's logins, listed and ended
/// (`/api/v1/logins`): a phone lost is logged out from another.
extension HubAPI {
    /// The login page: a plain form (no script), and on a hub with no accounts, how to make the first.
    func loginPage(
        next: String?, _ context: HubRequestContext, status: HTTPResponse.Status = .ok, error: String? = nil
    ) -> Response {
        let next = Self.safeNext(next)
        let (document, _) = access.accounts.document()
        var html = Self.pageHead(title: "Log in · SensorHub") + "<main class=\"login\"><h1>SensorHub</h1>\n"
        if let identity = context.identity {
            html +=
                "<p>Logged in as <strong>\(escape(identity.described))</strong>. <a href=\"/\">To the dashboard</a></p>\n"
        }
        if document.users.isEmpty {
            html += """
                <p class="notice">This hub has no accounts yet. On the hub's machine, make the first one:</p>
                <pre>sudo hubctl users add NAME --role admin</pre>
                <p class="muted">(It asks for a password. <code>hubctl tokens add</code> makes a token for a program.)</p>

                """
        }
        if let error { html += "<p class=\"error\" role=\"alert\">\(escape(error))</p>\n" }
        html += """
            <form method="post" action="/login">
            <input type="hidden" name="next" value="\(escape(next))">
            <label>Name <input name="user" autocomplete="username" autocapitalize="none" required></label>
            <label>Password <input name="password" type="password" autocomplete="current-password" required></label>
            <button type="submit">Log in</button>
            </form></main></body></html>

            """
        return Response(
            status: status, headers: [.contentType: "text/html; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: html)))
    }

    /// Where to go after logging in: a path on this hub, never another site (`//evil.example`, `https://…`).
    static func safeNext(_ next: String?) -> String {
        guard let next, next.hasPrefix("/"), !next.hasPrefix("//"), !next.hasPrefix("/\\"),
            !next.contains(where: { $0.isNewline || $0 == "\\" })
        else { return "/" }
        return next
    }

    /// `POST /login` (a form: user, password, next): a session cookie and back to `next`, or the page again saying
    /// what went wrong. From the hub's own page only (the same origin check as every browser write).
    func logIn(_ request: Request, _ context: HubRequestContext) async throws -> Response {
        try access.checkSameOrigin(request, context)
        let buffer = try? await request.body.collect(upTo: 4096)
        let form = String(buffer: buffer ?? ByteBuffer())
        var fields: [String: String] = [:]
        for pair in form.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2 else { continue }
            let decode = { (text: Substring) in
                text.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? ""
            }
            fields[decode(parts[0])] = decode(parts[1])
        }
        let next = Self.safeNext(fields["next"])
        guard let user = fields["user"], let password = fields["password"], !user.isEmpty else {
            return loginPage(next: next, context, status: .badRequest, error: "Give a name and a password.")
        }
        let client = access.client(request, context)
        let cookie: String
        do {
            cookie = try await access.logIn(
                user: user, password: password, client: client, agent: request.headers[.userAgent] ?? "")
        } catch .wait(let milliseconds) {
            var response = loginPage(
                next: next, context, status: .tooManyRequests,
                error: "Too many failed logins from here or for this name: try again in \(Self.seconds(milliseconds)).")
            response.headers[.retryAfter] = "\((milliseconds + 999) / 1000)"
            return response
        } catch {
            return loginPage(next: next, context, status: .unauthorized, error: "Wrong name or password.")
        }
        var response = Response(status: .seeOther, headers: [.location: next])
        response.setCookie(sessionCookie(cookie, request, context))
        return response
    }

    /// The session cookie: HttpOnly (no script reads it), SameSite=Strict (no other site's request carries it),
    /// Secure over HTTPS, for the session's longest life.
    func sessionCookie(_ value: String, _ request: Request, _ context: HubRequestContext) -> Cookie {
        Cookie(
            name: HTTPAccess.cookie, value: value, maxAge: Int(AccessDocument.absolute / 1000), path: "/",
            secure: access.isSecure(request, context), httpOnly: true, sameSite: .strict)
    }

    static func seconds(_ milliseconds: Int64) -> String {
        let seconds = (milliseconds + 999) / 1000
        return seconds < 120 ? "\(seconds) s" : "\((seconds + 59) / 60) min"
    }

    /// `POST /logout`: ends this browser's session and forgets the cookie.
    func logOut(_ request: Request, _ context: HubRequestContext) throws -> Response {
        try access.checkSameOrigin(request, context)
        if let cookie = request.cookies[HTTPAccess.cookie]?.value { access.logOut(cookie: cookie) }
        var response = Response(status: .seeOther, headers: [.location: "/login"])
        response.setCookie(
            Cookie(
                name: HTTPAccess.cookie, value: "", maxAge: 0, path: "/", secure: access.isSecure(request, context),
                httpOnly: true, sameSite: .strict))
        return response
    }

    struct MeAnswer: Encodable {
        var name: String
        /// `person`, `token` or `http.token`.
        var kind: String
        var role: String?
        var scope: String?
        /// What it may do: read, act, manage.
        var access: String
    }

    /// `GET /api/v1/me`: who the request is from, and what it may do.
    func me(_ context: HubRequestContext) -> Response {
        guard let identity = context.identity else { return json(ErrorAnswer(error: "nobody"), status: .unauthorized) }
        var answer = MeAnswer(name: identity.name, kind: "http.token", access: "\(identity.access)")
        answer.access = ["read", "act", "manage"][identity.access.rawValue - 1]
        switch identity.kind {
        case .person(let role, _): (answer.kind, answer.role) = ("person", role.rawValue)
        case .token(let scope, _): (answer.kind, answer.scope) = ("token", scope.rawValue)
        case .configuredToken: break
        }
        return json(answer)
    }

    struct LoginAnswer: Encodable {
        var id: String
        var user: String
        var created: Timestamp
        var lastSeen: Timestamp
        var address: String
        var agent: String
        /// The session this request came with.
        var current: Bool
    }

    /// `GET /api/v1/logins`: one's own logins (an admin's: everyone's), newest first.
    func listLogins(_ context: HubRequestContext) -> Response {
        let document = access.accounts.document().document
        let now = Timestamp.now
        let mine = context.identity.map { identity -> (String?, String?, Bool) in
            if case .person(_, let session) = identity.kind {
                return (identity.name, session, identity.access == .manage)
            }
            return (nil, nil, identity.access == .manage)
        }
        let (name, current, admin) = mine ?? (nil, nil, false)
        let sessions = document.sessions.filter { session in
            AccessDocument.isLive(session, now: now) && (admin || session.user == name)
        }
        return json(
            sessions.sorted { $0.created > $1.created }.map {
                LoginAnswer(
                    id: $0.id, user: $0.user, created: $0.created, lastSeen: $0.lastSeen, address: $0.address,
                    agent: $0.agent, current: $0.id == current)
            })
    }

    /// `DELETE /api/v1/logins/{id}`: ends one of one's own logins (an admin: anyone's).
    func endLogin(_ context: HubRequestContext) throws -> Response {
        let id = pathName(context, "id")
        guard let identity = context.identity else { throw HTTPError(.unauthorized) }
        var name: String?
        if case .person = identity.kind { name = identity.name }
        let admin = identity.access == .manage
        let ended: Int
        do {
            ended = try access.accounts.store.update { document throws(AccessError) in
                guard let session = document.sessions.first(where: { $0.id == id }), admin || session.user == name
                else { return 0 }
                return document.endSessions(id: id)
            }
        } catch {
            throw HTTPError(.internalServerError, message: error.description)
        }
        guard ended > 0 else { throw HTTPError(.notFound, message: "no login '\(id)' of yours") }
        logger.notice("login ended", metadata: ["session": "\(id)", "by": "\(identity.who)"])
        return Response(status: .noContent)
    }

    /// The line at the top of a page: who is logged in, and a button to log out.
    func userBar(_ context: HubRequestContext) -> String {
        guard let identity = context.identity else { return "" }
        var html = "<div class=\"userbar\"><span>\(escape(identity.described))</span>"
        if identity.byCookie {
            html += " <form method=\"post\" action=\"/logout\"><button type=\"submit\">Log out</button></form>"
        }
        return html + "</div>\n"
    }
}
