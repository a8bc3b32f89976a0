import Foundation
import HubCore
import HubNotify
import HubTestKit
import Testing

/// Telegram and Gotify (issue 19, the first of its backends) against local servers shaped like their documented
/// APIs: the request each makes, secrets from files, what counts as delivered, retried and failed.
@Suite struct ChatBackendTests {
    /// Telegram's Bot API: `POST /bot<token>/sendMessage` with JSON; 429 with `parameters.retry_after` waits that
    /// long; 400 (a chat that does not exist) is permanent; the token never shows in what a failure says.
    @Test func telegramSendsToItsChatAndHonoursRetryAfter() async throws {
        let directory = try TemporaryDirectory()
        let server = try await TestHTTPServer.start { request, index in
            if request.path.contains("/sendMessage"), index == 0 {
                return .init(
                    status: 429,
                    body:
                        #"{"ok":false,"error_code":429,"description":"Too Many Requests: retry after 1","parameters":{"retry_after":1}}"#
                )
            }
            if request.text.contains(#""chat_id":"-999""#) {
                return .init(
                    status: 400, body: #"{"ok":false,"error_code":400,"description":"Bad Request: chat not found"}"#)
            }
            return .init(body: #"{"ok":true,"result":{"message_id":7}}"#)
        }
        defer { Task { await server.stop() } }
        try "123456:ABC-secret_token\n".write(toFile: directory.file("bot-token"), atomically: true, encoding: .utf8)
        let yaml = """
            notifiers:
              backends:
                chat: { type: telegram, url: "\(server.url)", token_file: bot-token, chat_id: "-1001234567890" }
                nobody: { type: telegram, url: "\(server.url)", token_file: bot-token, chat_id: "-999" }
              rules:
                doors: { backends: [chat], title: "{sensor}: {new}", message: "was {old}" }
                lost: { backends: [nobody], sensors: [cellar] }
            """
        try await withRouter(yaml, directory: directory) { router in
            let started = ContinuousClock.now
            router.submit(event("front door", "closed", "open <b>&"))
            try await eventually("delivered after the wait Telegram asked for") {
                router.statistics.backends["chat"]?.delivered == 1
            }
            #expect(ContinuousClock.now - started >= .seconds(1))
            let requests = server.requests.filter { $0.path.contains("/sendMessage") }
            #expect(requests.count == 2)
            #expect(requests[1].path == "/bot123456:ABC-secret_token/sendMessage")
            let body = try #require(try JSONSerialization.jsonObject(with: Data(requests[1].body)) as? [String: Any])
            #expect(body["chat_id"] as? String == "-1001234567890")
            #expect(body["text"] as? String == "front door: open <b>&\nwas closed")
            #expect(body["parse_mode"] == nil)
            #expect(router.statistics.backends["chat"]?.retried == 1)

            router.submit(event("cellar"))
            try await eventually("a chat that does not exist fails for good") {
                router.statistics.backends["nobody"]?.failed == 1
            }
            let error = router.statistics.backends["nobody"]?.lastError ?? ""
            #expect(error.contains("HTTP 400") && error.contains("chat not found"), "\(error)")
            #expect(!error.contains("secret_token"), "\(error)")
        }
    }

    /// Gotify: `POST /message` with `X-Gotify-Key`; the hub's priority on Gotify's 0–10; 401 is permanent.
    @Test func gotifyPostsWithItsAppTokenAndPriority() async throws {
        let directory = try TemporaryDirectory()
        let server = try await TestHTTPServer.start { request, _ in
            request.header("X-Gotify-Key") == "AbCdEf.123"
                ? .init(body: #"{"id":1}"#)
                : .init(status: 401, body: #"{"error":"Unauthorized","errorCode":401}"#)
        }
        defer { Task { await server.stop() } }
        try "AbCdEf.123\n".write(toFile: directory.file("gotify-token"), atomically: true, encoding: .utf8)
        try "wrong\n".write(toFile: directory.file("other-token"), atomically: true, encoding: .utf8)
        let yaml = """
            notifiers:
              backends:
                home: { type: gotify, url: "\(server.url)/", token_file: gotify-token }
                stale: { type: gotify, url: "\(server.url)", token_file: other-token }
              rules:
                urgent: { backends: [home], priority: urgent, title: "{sensor}", message: "{old} → {new}" }
                old: { backends: [stale], sensors: [cellar] }
            """
        try await withRouter(yaml, directory: directory) { router in
            router.submit(event("front door"))
            let request = try #require(try await server.waitForRequests(1).first)
            #expect(request.path == "/message" && request.header("X-Gotify-Key") == "AbCdEf.123")
            let body = try #require(try JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any])
            #expect(body["title"] as? String == "front door" && body["message"] as? String == "closed → open")
            #expect(body["priority"] as? Int == 10)
            router.submit(event("cellar"))
            try await eventually("a wrong token fails for good") { router.statistics.backends["stale"]?.failed == 1 }
        }
    }

    /// Discord and Slack incoming webhooks: the URL (its secret) from a file and never shown beyond its host; no
    /// mention of everyone and no markup from a status; Discord's 429 body says how long; Slack's 4xx is for good.
    @Test func discordAndSlackWebhooksKeepTheirSecretAndTheirText() async throws {
        let directory = try TemporaryDirectory()
        let server = try await TestHTTPServer.start { request, index in
            if request.path.hasPrefix("/api/webhooks") {
                return index == 0
                    ? .init(
                        status: 429,
                        body: #"{"message":"You are being rate limited.","retry_after":0.5,"global":false}"#)
                    : .init(status: 204)
            }
            return request.text.contains("cellar") ? .init(status: 400, body: "invalid_payload") : .init(body: "ok")
        }
        defer { Task { await server.stop() } }
        try "\(server.url)/api/webhooks/123/s3cret-discord\n".write(
            toFile: directory.file("discord-url"), atomically: true, encoding: .utf8)
        try "\(server.url)/services/T1/B2/s3cret-slack\n".write(
            toFile: directory.file("slack-url"), atomically: true, encoding: .utf8)
        let yaml = """
            notifiers:
              backends:
                discord: { type: discord, webhook_url_file: discord-url }
                slack: { type: slack, webhook_url_file: slack-url }
              rules:
                doors: { backends: [discord, slack], sensors: [door], title: "{sensor}: {new}" }
                cellar: { backends: [slack], sensors: [cellar] }
            """
        try await withRouter(yaml, directory: directory) { router in
            router.submit(event("door", "closed", "@everyone <!channel> & <b>"))
            try await eventually("both delivered, Discord after its wait") {
                router.statistics.backends["discord"]?.delivered == 1
                    && router.statistics.backends["slack"]?.delivered == 1
            }
            #expect(router.statistics.backends["discord"]?.retried == 1)
            let discord = try #require(server.requests.last { $0.path == "/api/webhooks/123/s3cret-discord" })
            let content = try #require(try JSONSerialization.jsonObject(with: Data(discord.body)) as? [String: Any])
            #expect((content["content"] as? String)?.hasPrefix("door: @everyone <!channel> & <b>") == true)
            #expect((content["allowed_mentions"] as? [String: Any])?["parse"] as? [String] == [])
            let slack = try #require(server.requests.first { $0.path == "/services/T1/B2/s3cret-slack" })
            let text = try #require(try JSONSerialization.jsonObject(with: Data(slack.body)) as? [String: Any])
            #expect((text["text"] as? String)?.hasPrefix("door: @everyone &lt;!channel&gt; &amp; &lt;b&gt;") == true)
            router.submit(event("cellar"))
            try await eventually("Slack's invalid_payload fails for good") {
                router.statistics.backends["slack"]?.failed == 1
            }
            let error = router.statistics.backends["slack"]?.lastError ?? ""
            #expect(error.contains("invalid_payload") && !error.contains("s3cret"), "\(error)")
        }
    }

    /// A missing token or chat stops the configuration with the key named; a token is never taken from a URL.
    @Test func badSettingsAreRefusedNamingTheKey() throws {
        #expect(backendError("{ type: telegram, chat_id: \"1\" }").contains("needs its bot token"))
        #expect(backendError("{ type: telegram, token: \"x\", chat_id: \"1\" }").contains("a bot token looks like"))
        #expect(backendError("{ type: telegram, token: \"1:a\" }").contains("notifiers.backends.x.chat_id"))
        #expect(backendError("{ type: telegram, token: \"1:a\", chat_id: \"me\" }").contains("chat id"))
        #expect(backendError("{ type: gotify, token: \"t\" }").contains("notifiers.backends.x.url"))
        #expect(backendError("{ type: gotify, url: \"http://h\" }").contains("needs its application token"))
        #expect(backendError("{ type: gotify, url: \"http://h\", token: \"t\", priority: 11 }").contains("priority"))
        #expect(backendError("{ type: slack }").contains("needs its webhook's URL"))
        #expect(backendError("{ type: discord, webhook_url: \"ftp://x\" }").contains("an https:// (or http://) URL"))
        // A bad secret read from its file is that key's: the message names token_file, where the mistake is.
        let directory = try TemporaryDirectory()
        try "not-a-token\n".write(toFile: directory.file("token"), atomically: true, encoding: .utf8)
        let error = backendError("{ type: telegram, token_file: \(directory.file("token")), chat_id: \"1\" }")
        #expect(
            error.contains("notifiers.backends.x.token_file") && error.contains("a bot token looks like"), "\(error)")
    }
}
