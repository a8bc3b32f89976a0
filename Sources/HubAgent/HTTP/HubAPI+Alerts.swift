import Crypto
import Foundation
import HubCore
import HubNotify
import Hummingbird

/// `/api/v1/alerts` and `/api/v1/silences`, and `/a/{token}`, where a notification's buttons and links act. What
/// they ask goes to hubd's alert book the way `hubctl`'s requests do (`AlertRequests`), so there is one way in.
extension HubAPI {
    /// The book as last kept (`alerts.json`, or a cluster's database), and the requests not taken yet.
    func savedAlerts() async throws -> SavedAlerts {
        do {
            return try await alerts.saved()
        } catch {
            throw HTTPError(.internalServerError, message: "\(error)")
        }
    }

    func send(_ request: AlertRequest) async throws {
        do {
            try await alerts.send([request])
        } catch {
            throw HTTPError(.internalServerError, message: "\(error)")
        }
    }

    /// The open alerts, each with `state`: what it is doing, and why it waits ("in group_wait, 12 s left").
    func listAlerts() async throws -> Response {
        let book = try await savedAlerts().book
        let alerts = book.alerts.values.sorted { ($0.opened, $0.id) < ($1.opened, $1.id) }
        return Response(
            status: .ok, headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: book.json(alerts, alertSetup(), now: .now))))
    }

    func acknowledgeAlert(_ request: Request, _ context: HubRequestContext) async throws -> Response {
        let id = pathName(context, "id")
        let body = try await object(request, context, allowed: ["by"])
        guard try await savedAlerts().book.alerts[id]?.firing == true else {
            throw HTTPError(.notFound, message: "no firing alert '\(id)'")
        }
        let who = Self.who(context, onBehalfOf: try optionalString(body, "by"))
        try await send(.acknowledge(alert: id, by: who, via: context.identity?.via ?? "api", at: .now))
        logger.notice("alert acknowledged over HTTP", metadata: ["alert": "\(id)", "by": "\(who)"])
        return json(["acknowledged": id], status: .accepted)
    }

    /// Who the book records as having done it: the identity (a person's name, "token grafana", "http.token"); a
    /// name the body gives (`by`, `createdBy`: a program acting for someone) is kept beside it, never instead.
    static func who(_ context: HubRequestContext, onBehalfOf named: String?) -> String {
        let who = context.identity?.who ?? "api"
        guard let named = named?.trimmingCharacters(in: .whitespacesAndNewlines), !named.isEmpty,
            named != context.identity?.name, named != "api"
        else { return who }
        return "\(who) for \(named.prefix(40))"
    }

    func listSilences() async throws -> Response {
        return json(try await savedAlerts().silences(at: .now, expired: true).map(\.silence))
    }

    func addSilence(_ request: Request, _ context: HubRequestContext) async throws -> Response {
        let body = try await object(
            request, context, allowed: ["matchers", "startsAt", "endsAt", "createdBy", "comment"])
        guard let texts = body["matchers"] as? [String], !texts.isEmpty else {
            throw HTTPError(.badRequest, message: "\"matchers\" is a list of strings like \"sensor=door*\"")
        }
        var matchers: [Silence.Matcher] = []
        for text in texts {
            do {
                matchers.append(try Silence.Matcher(parsing: text))
            } catch {
                throw HTTPError(.badRequest, message: error.description)
            }
        }
        func time(_ key: String) throws -> Timestamp? {
            guard let text = try optionalString(body, key) else { return nil }
            guard let time = Timestamp(iso8601: text) else {
                throw HTTPError(.badRequest, message: "\"\(key)\" is an ISO 8601 time like 2026-12-01T08:00:00Z")
            }
            return time
        }
        let now = Timestamp.now
        let start = try time("startsAt") ?? now
        guard let end = try time("endsAt") else { throw HTTPError(.badRequest, message: "\"endsAt\" is required") }
        guard end > start, end > now else {
            throw HTTPError(.badRequest, message: "the silence would end before it starts")
        }
        let silence = Silence(
            id: String(UInt32.random(in: 0...UInt32.max), radix: 16), matchers: matchers, startsAt: start, endsAt: end,
            createdBy: Self.who(context, onBehalfOf: try optionalString(body, "createdBy")),
            comment: try optionalString(body, "comment") ?? "")
        let inForce = try await savedAlerts().silences(at: now).count
        do {
            try silence.check(inForce: inForce, now: now)
        } catch {
            throw HTTPError(.badRequest, message: error.description)
        }
        try await send(.silence(silence))
        // Said, not refused: a sensor may be added later.
        let names = (try? await readStore())?.sensors.map(\.name) ?? []
        let facts = alertSetup()?.facts ?? { _ in AlertBook.SensorFacts() }
        guard let warning = silence.unmatchedWarning(sensors: names, facts: facts),
            var object = (try? JSONSerialization.jsonObject(with: JSONEncoder().encode(silence))) as? [String: Any]
        else { return json(silence, status: .created) }
        object["warning"] = warning
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        return Response(
            status: .created, headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    func expireSilence(_ request: Request, _ context: HubRequestContext) async throws -> Response {
        let id = pathName(context, "id")
        let now = Timestamp.now
        guard try await savedAlerts().hasSilence(id, at: now) else {
            throw HTTPError(.notFound, message: "no silence '\(id)' is in force or to come")
        }
        let who = Self.who(context, onBehalfOf: nil)
        try await send(.expire(silence: id, at: now, by: who))
        logger.notice("silence expired over HTTP", metadata: ["silence": "\(id)", "by": "\(who)"])
        return json(["expired": id])
    }

    // MARK: - Buttons and links

    /// The token in the path, checked: a forged or expired one is refused (403 / 410) and logged, as is one whose
    /// alerts are gone or that was used before (404 / 409).
    private func checkedToken(_ context: HubRequestContext) async throws -> (ActionToken, [String]) {
        let text = pathName(context, "id")
        guard let key = actionKey() else {
            throw HTTPError(.serviceUnavailable, message: "the hub has no key for alert links")
        }
        let now = Timestamp.now
        let token: ActionToken
        do {
            token = try ActionToken(verifying: text, key: key, now: now)
        } catch {
            logger.warning("alert link refused", metadata: ["reason": "\(error)"])
            throw HTTPError(error == .expired ? .gone : .forbidden, message: error.description)
        }
        let saved = try await savedAlerts()
        let (book, pending) = (saved.book, saved.pending)
        let taken = pending.contains {
            if case .act(let handle, _, _, _, _) = $0 { handle == token.handle } else { false }
        }
        if let refusal = taken ? "already used" : book.refusal(of: token.handle, now: now) {
            logger.warning("alert link refused", metadata: ["reason": "\(refusal)", "handle": "\(token.handle)"])
            throw HTTPError(refusal.hasPrefix("already") ? .conflict : .notFound, message: refusal)
        }
        return (token, book.links[token.handle]?.alerts ?? [])
    }

    /// GET: a page that says what the link does and asks to confirm (a mail scanner that fetches links acts on
    /// nothing).
    func alertLinkPage(_ context: HubRequestContext) async throws -> Response {
        let (token, alerts) = try await checkedToken(context)
        let text = pathName(context, "id")
        let names = await spokenNames(alerts)
        var html = Self.pageHead(title: "\(token.action.word) · SensorHub") + "<main class=\"narrow\">\n"
        html += "<h1>\(token.action.word)?</h1>\n<ul class=\"names\">"
        html += names.map { "<li>\(escape($0))</li>" }.joined() + "</ul>\n"
        html += "<form method=\"post\" action=\"/a/\(escape(text))\">"
        html += "<button class=\"primary\">\(token.action.word)</button></form>\n"
        html += "<p class=\"muted\">\(token.action == .acknowledge ? "Its reminders stop, and the others are told." : "Its reminders wait an hour.")</p>\n"
        html += "</main></body></html>\n"
        return Response(
            status: .ok, headers: [.contentType: "text/html; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: html)))
    }

    /// The alerts as a person names them ("front door open · hall, since 21:04"), not by their ids.
    func spokenNames(_ ids: [String]) async -> [String] {
        let book = (try? await savedAlerts())?.book
        let now = Timestamp.now
        return ids.map { book?.alerts[$0]?.spoken(now: now) ?? $0 }
    }

    /// POST: acts (ntfy's `http` action, the service worker's button, the confirmation page's form).
    func alertLinkAct(_ request: Request, _ context: HubRequestContext) async throws -> Response {
        let (token, alerts) = try await checkedToken(context)
        // Who POSTs: Pushover's callback (a form with the emergency's receipt), the ntfy app, or a page or service
        // worker. Nothing the body says is believed: Pushover's callback hands its receipt to the Pushover backend,
        // which asks Pushover's API who acknowledged and acts by that device (`PushoverReceipts.pollNow`).
        let form = String(buffer: (try? await request.body.collect(upTo: 4096)) ?? ByteBuffer())
        let via = request.headers[.userAgent].map { $0.lowercased().contains("ntfy") ? "ntfy" : "link" } ?? "link"
        let by = context.identity?.who ?? via
        if let callback = try? URLEncodedFormDecoder().decode(PushoverCallback.self, from: form),
            pushoverCallback(callback.receipt)
        {
            logger.notice(
                "Pushover callback: asking Pushover who acknowledged",
                metadata: ["receipt": "\(callback.receipt)", "alerts": "\(alerts.joined(separator: ","))"])
            return json(["done": "checking with Pushover", "alerts": alerts.joined(separator: ",")], status: .accepted)
        }
        try await send(.act(handle: token.handle, action: token.action, by: by, via: via, at: .now))
        logger.notice(
            "alert link used",
            metadata: ["action": "\(token.action.word)", "alerts": "\(alerts.joined(separator: ","))"])
        let done = token.action == .acknowledge ? "Acknowledged" : "Snoozed for an hour"
        if request.headers[.accept]?.contains("text/html") == true {
            let names = await spokenNames(alerts)
            var html = Self.pageHead(title: "\(done) · SensorHub") + "<main class=\"narrow\">\n"
            html += "<h1>\(done)</h1>\n<ul class=\"names\">" + names.map { "<li>\(escape($0))</li>" }.joined()
            html += "</ul>\n<p><a href=\"/\">To the dashboard</a></p>\n</main></body></html>\n"
            return Response(
                status: .ok, headers: [.contentType: "text/html; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(string: html)))
        }
        return json(["done": done, "alerts": alerts.joined(separator: ",")])
    }
}

/// What Pushover POSTs to an emergency's `callback` once someone acknowledges it (pushover.net/api/receipts): only
/// the receipt is read, to ask Pushover about it.
private struct PushoverCallback: Decodable {
    var receipt: String
}
