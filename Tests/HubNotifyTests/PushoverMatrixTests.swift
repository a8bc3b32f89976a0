import Foundation
import HubCore
import HubNotify
import HubSupport
import HubTestKit
import Testing

/// Pushover and Matrix against local servers shaped like their documented APIs: the request each makes, what counts
/// as delivered, retried and failed, and Matrix' transaction ids making a redelivery one message.
@Suite struct PushoverMatrixTests {
    /// Pushover: a form to `/1/messages.json`; the hub's urgent is Pushover's emergency, with the retry and expiry it
    /// requires; a 5xx is retried, a 400 fails for good saying Pushover's `errors`.
    @Test func pushoverPostsAFormAndReadsItsErrors() async throws {
        let directory = try TemporaryDirectory()
        let server = try await TestHTTPServer.start { request, index in
            let form = Self.form(request.text)
            if form["user"] == "uQiRzpo4DXghDmr9QzzfQu27cmVRsG" {
                return .init(
                    status: 400, body: #"{"user":"invalid","errors":["user identifier is invalid"],"status":0}"#)
            }
            return index == 0 ? .init(status: 503, body: "busy") : .init(body: #"{"status":1,"request":"r-1"}"#)
        }
        defer { Task { await server.stop() } }
        try "azGDORePK8gMaC0QOYAMyEEuzJnyUi\n".write(
            toFile: directory.file("pushover-token"), atomically: true, encoding: .utf8)
        let yaml = """
            notifiers:
              backends:
                phone:
                  type: pushover
                  url: "\(server.url)"
                  token_file: pushover-token
                  user: gznej3rKEVAvPUxu9vvNnqpmZpokzF
                  sound: siren
                  emergency_retry: 2m
                gone: { type: pushover, url: "\(server.url)", token_file: pushover-token, user: uQiRzpo4DXghDmr9QzzfQu27cmVRsG }
              rules:
                doors: { backends: [phone], sensors: [door], priority: urgent, title: "{sensor} is {new}", message: "was {old}" }
                cellar: { backends: [gone], sensors: [cellar] }
            """
        try await withRouter(yaml, directory: directory) { router in
            router.submit(event("door", "closed", "open & shut = 100% ü"))
            try await eventually("delivered after a 503") { router.statistics.backends["phone"]?.delivered == 1 }
            #expect(router.statistics.backends["phone"]?.retried == 1)
            let request = try #require(server.requests.last)
            #expect(request.path == "/1/messages.json" && request.method == "POST")
            #expect(request.header("Content-Type") == "application/x-www-form-urlencoded")
            let form = Self.form(request.text)
            #expect(
                form["token"] == "azGDORePK8gMaC0QOYAMyEEuzJnyUi" && form["user"] == "gznej3rKEVAvPUxu9vvNnqpmZpokzF")
            #expect(form["title"] == "door is open & shut = 100% ü" && form["message"] == "was closed")
            #expect(form["priority"] == "2" && form["retry"] == "120" && form["expire"] == "3600")
            #expect(form["sound"] == "siren")

            router.submit(event("cellar"))
            try await eventually("a wrong user key fails for good") { router.statistics.backends["gone"]?.failed == 1 }
            let error = router.statistics.backends["gone"]?.lastError ?? ""
            #expect(error.contains("HTTP 400: user identifier is invalid"), "\(error)")
            #expect(!error.contains("azGDORePK8gMaC0QOYAMyEEuzJnyUi"), "\(error)")
        }
    }

    static func form(_ text: String) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in text.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map { $0.removingPercentEncoding ?? "" }
            fields[parts[0]] = parts.count > 1 ? parts[1] : ""
        }
        return fields
    }

    /// Matrix with a password: one login (as one stable device), the room alias resolved once, the message PUT with
    /// the notification id as its transaction id (the retry after the server's 429 has the same one, so the server
    /// would make it one message even had it kept the first), its HTML escaped; a logged-out token logs in again; a room the account is not in fails, saying so.
    @Test func matrixSendsOnceAndLogsInAgain() async throws {
        let directory = try TemporaryDirectory()
        let homeserver = MatrixStandIn()
        let server = try await TestHTTPServer.start { request, _ in homeserver.answer(request) }
        defer { Task { await server.stop() } }
        try "c0rrect horse\n".write(toFile: directory.file("matrix-password"), atomically: true, encoding: .utf8)
        let yaml = """
            notifiers:
              backends:
                room: { type: matrix, homeserver: "\(server.url)", user: hub, password_file: matrix-password, room: "#home:example.org" }
                elsewhere: { type: matrix, homeserver: "\(server.url)", token: other-token, room: "!nope:example.org", msgtype: text }
              rules:
                doors: { backends: [room], sensors: [door*], title: "{sensor} is {new}", message: "was {old}\\nsince now" }
                cellar: { backends: [elsewhere], sensors: [cellar] }
            """
        try await withRouter(yaml, directory: directory) { router in
            let first = event("door", "closed", "<b>open</b> & \"wide\"")
            router.submit(first)
            try await eventually("delivered after the server's 429") {
                router.statistics.backends["room"]?.delivered == 1
            }
            #expect(router.statistics.backends["room"]?.retried == 1)
            let sends = server.requests.filter { $0.method == "PUT" }
            #expect(sends.count == 2)
            // The same transaction id both times: the notification's id.
            #expect(
                sends.allSatisfy {
                    $0.path == "/_matrix/client/v3/rooms/%21abc%3Aexample.org/send/m.room.message/\(first.id)"
                })
            #expect(sends.allSatisfy { $0.header("Authorization") == "Bearer token-1" })
            let body = try #require(try JSONSerialization.jsonObject(with: Data(sends[1].body)) as? [String: Any])
            #expect(body["msgtype"] as? String == "m.notice")
            #expect(body["body"] as? String == "door is <b>open</b> & \"wide\"\nwas closed\nsince now")
            #expect(body["format"] as? String == "org.matrix.custom.html")
            #expect(
                body["formatted_body"] as? String
                    == "<strong>door is &lt;b&gt;open&lt;/b&gt; &amp; &quot;wide&quot;</strong><br>was closed<br>since now"
            )
            let login = try #require(server.requests.first { $0.path == "/_matrix/client/v3/login" })
            let credentials = try #require(try JSONSerialization.jsonObject(with: Data(login.body)) as? [String: Any])
            #expect(credentials["device_id"] as? String == "SENSORHUB")
            #expect((credentials["identifier"] as? [String: String])?["user"] == "hub")

            homeserver.logOut()
            router.submit(event("door 2"))
            try await eventually("delivered after logging in again") {
                router.statistics.backends["room"]?.delivered == 2
            }
            #expect(server.requests.filter { $0.path == "/_matrix/client/v3/login" }.count == 2)
            #expect(server.requests.filter { $0.path.contains("/directory/room/") }.count == 1)
            #expect(server.requests.last?.header("Authorization") == "Bearer token-2")
            #expect(homeserver.messages == 2)

            router.submit(event("cellar"))
            try await eventually("a room the account is not in fails for good") {
                router.statistics.backends["elsewhere"]?.failed == 1
            }
            let error = router.statistics.backends["elsewhere"]?.lastError ?? ""
            #expect(error.contains("HTTP 403 M_FORBIDDEN") && error.contains("joined the room"), "\(error)")
        }
    }

    /// Bad settings stop the configuration naming the key; secrets never appear in the message.
    @Test func badSettingsAreRefusedNamingTheKey() throws {
        let user = "user: gznej3rKEVAvPUxu9vvNnqpmZpokzF"
        #expect(backendError("{ type: pushover, \(user) }").contains("needs the application's API token"))
        #expect(backendError("{ type: pushover, \(user), token: short }").contains("30 letters and digits"))
        #expect(!backendError("{ type: pushover, \(user), token: short }").contains("short"))
        #expect(
            backendError("{ type: pushover, \(user), token: azGDORePK8gMaC0QOYAMyEEuzJnyUi, emergency_retry: 5s }")
                .contains("notifiers.backends.x.emergency_retry"))
        #expect(backendError("{ type: matrix, room: \"#a:b\", token: t }").contains("notifiers.backends.x.homeserver"))
        #expect(
            backendError("{ type: matrix, homeserver: \"https://m\", token: t, room: lobby }").contains("a room id"))
        #expect(
            backendError("{ type: matrix, homeserver: \"https://m\", room: \"#a:b\" }").contains(
                "needs an access token"))
        #expect(
            backendError("{ type: matrix, homeserver: \"https://m\", room: \"#a:b\", token: t, user: u, password: p }")
                .contains("not both"))
        #expect(
            backendError("{ type: matrix, homeserver: \"https://m\", room: \"#a:b\", token: t, msgtype: html }")
                .contains(
                    "msgtype"))
    }
}

/// A homeserver's client-server API, as much as the backend uses: password login, room alias lookup, sending with
/// transaction ids (one event per id, as the spec requires), a 429 for the first message, and a logout.
final class MatrixStandIn: Sendable {
    private let state = Locked((tokens: 0, valid: "", events: [String: String](), sent: 0))

    var messages: Int { state.withLock { $0.events.count } }

    func logOut() { state.withLock { $0.valid = "" } }

    func answer(_ request: TestHTTPServer.Request) -> TestHTTPServer.Response {
        state.withLock { state in
            if request.path == "/_matrix/client/v3/login" {
                guard request.text.contains(#""password":"c0rrect horse""#) else {
                    return .init(status: 403, body: #"{"errcode":"M_FORBIDDEN","error":"Invalid password"}"#)
                }
                state.tokens += 1
                state.valid = "token-\(state.tokens)"
                return .init(
                    body: #"{"access_token":"\#(state.valid)","device_id":"SENSORHUB","user_id":"@hub:example.org"}"#)
            }
            let authorization = request.header("Authorization") ?? ""
            if authorization == "Bearer other-token" {
                return .init(status: 403, body: #"{"errcode":"M_FORBIDDEN","error":"User not in room"}"#)
            }
            guard authorization == "Bearer " + state.valid, !state.valid.isEmpty else {
                return .init(status: 401, body: #"{"errcode":"M_UNKNOWN_TOKEN","error":"Invalid access token"}"#)
            }
            if request.method == "GET", request.path == "/_matrix/client/v3/directory/room/%23home%3Aexample.org" {
                return .init(body: #"{"room_id":"!abc:example.org","servers":["example.org"]}"#)
            }
            let prefix = "/_matrix/client/v3/rooms/%21abc%3Aexample.org/send/m.room.message/"
            guard request.method == "PUT", request.path.hasPrefix(prefix) else {
                return .init(status: 404, body: #"{"errcode":"M_UNRECOGNIZED"}"#)
            }
            state.sent += 1
            if state.sent == 1 {
                return .init(
                    status: 429, body: #"{"errcode":"M_LIMIT_EXCEEDED","error":"Too many","retry_after_ms":200}"#)
            }
            let id = String(request.path.dropFirst(prefix.count))
            let event = state.events[id] ?? "$event-\(state.events.count + 1)"
            state.events[id] = event
            return .init(body: #"{"event_id":"\#(event)"}"#)
        }
    }
}
