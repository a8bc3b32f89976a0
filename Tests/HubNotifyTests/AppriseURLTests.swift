import Foundation
import HubCore
import HubTestKit
import Testing

@testable import HubNotify

/// Apprise URLs as a shorthand for a backend: each scheme says the keys of its kind, which the kind then reads as if
/// written out; what hubd would not act on is refused; secrets never appear in a message.
@Suite struct AppriseURLTests {
    /// The keys each URL says.
    @Test(arguments: Self.examples)
    func eachSchemeSaysItsKindsKeys(url: String, type: String, keys: String) throws {
        let (kind, derived) = try AppriseURL(url).settings()
        #expect(kind == type)
        #expect(derived.map { "\($0.key)=\($0.values.joined(separator: ","))" }.joined(separator: " ") == keys)
    }

    /// Apprise itself (from PyPI, `Tests/Peers/apprise_keys.py`) reads each example's URL as hubd does: the same
    /// kind, and every key Apprise has the same value. (One example differs on purpose and is left out: Apprise
    /// makes `hub@smtp.example.org` the sender of `mailtos://hub@example.org:pw@…`; hubd takes the user's address.)
    @Test func appriseReadsTheURLsAsHubdDoes() async throws {
        let examples = Self.examples.filter { !$0.0.contains("hub@example.org:pw") }
        let output = try await PythonPeers.run("Tests/Peers/apprise_keys.py", examples.map(\.0))
        #expect(output.status == 0, "\(output.standardError)")
        let answers = output.standardOutput.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        #expect(answers.count == examples.count, "\(output.standardOutput)\(output.standardError)")
        for (answer, example) in zip(answers, examples) {
            let url = example.0
            #expect(answer["error"] == nil, "Apprise refused \(url): \(answer["error"] ?? "")")
            #expect(answer["type"] as? String == example.1, "\(url)")
            let (_, derived) = try AppriseURL(url).settings()
            let ours = Dictionary(uniqueKeysWithValues: derived.map { ($0.key, $0.values.joined(separator: ",")) })
            let theirs = try #require(answer["keys"] as? [String: String], "\(url)")
            for (key, value) in theirs {
                #expect(
                    ours[key] == value, "\(url): \(key) is '\(value)' to Apprise, '\(ours[key] ?? "nothing")' to hubd")
            }
        }
    }

    static let examples: [(String, String, String)] = [
        (
            "tgram://123456:ABC-def_1/-1001234567890", "telegram",
            "token=123456:ABC-def_1 chat_id=-1001234567890"
        ),
        (
            "pover://gznej3rKEVAvPUxu9vvNnqpmZpokzF@azGDORePK8gMaC0QOYAMyEEuzJnyUi/phone?priority=high&sound=siren",
            "pushover",
            "user=gznej3rKEVAvPUxu9vvNnqpmZpokzF token=azGDORePK8gMaC0QOYAMyEEuzJnyUi device=phone priority=1 sound=siren"
        ),
        (
            "gotifys://push.example.org:8443/sub/AbCdEf.123?priority=8", "gotify",
            "url=https://push.example.org:8443/sub token=AbCdEf.123 priority=8"
        ),
        ("ntfy://alerts-4711", "ntfy", "topic=alerts-4711"),
        (
            "ntfys://tk_secret@ntfy.example.org/doors?tags=door", "ntfy",
            "url=https://ntfy.example.org topic=doors token=tk_secret tags=door"
        ),
        ("discord://123456/s3cret", "discord", "webhook_url=https://discord.com/api/webhooks/123456/s3cret"),
        ("slack://T1/B2/s3cret", "slack", "webhook_url=https://hooks.slack.com/services/T1/B2/s3cret"),
        (
            "matrixs://hub:p%40ss@matrix.example.org/#home", "matrix",
            "homeserver=https://matrix.example.org user=hub password=p@ss room=#home:matrix.example.org"
        ),
        (
            "matrix://syt_token@localhost:8008/!abc:example.org", "matrix",
            "homeserver=http://localhost:8008 token=syt_token room=!abc:example.org"
        ),
        (
            "mailtos://hub:pw@mail.example.org?to=me@example.org,you@example.org&name=Sensor%20Hub", "email",
            "host=mail.example.org tls=starttls username=hub password=pw from=Sensor Hub <hub@mail.example.org> to=me@example.org,you@example.org"
        ),
        (
            "mailto://relay.lan:2525/me@example.org?from=hub@example.org", "email",
            "host=relay.lan port=2525 tls=none from=hub@example.org to=me@example.org"
        ),
        (
            "mailtos://hub@example.org:pw@smtp.example.org?mode=ssl", "email",
            "host=smtp.example.org tls=implicit username=hub@example.org password=pw from=hub@example.org to=hub@example.org"
        ),
    ]

    /// What hubd would not act on, or a URL it can't read, is refused with a reason that never repeats the URL.
    @Test(arguments: [
        ("json://example.org", "not a kind hubd has"),
        ("tgram://123456:ABC", "one chat per backend"),
        ("tgram://123456:ABC/1/2", "one chat per backend"),
        ("pover://user@token?url=x", "?url= is not something hubd's pushover takes"),
        ("slack://xoxb-1234/#general", "incoming webhook"),
        ("ntfys://user:s3cret@host/topic", "use an access token"),
        ("matrixs://t@m.org/#a/#b", "one room per backend"),
        ("mailtos://u:p@h?mode=tls", "mode=starttls or mode=ssl"),
        ("gotify://host", "gotify://<host>/<application token>"),
        ("tgram:123", "starts with its kind"),
        ("discord://", "nothing after"),
    ])
    func badURLsAreRefused(url: String, reason: String) {
        #expect(throws: AppriseURL.Problem.self) { try AppriseURL(url).settings() }
        do {
            _ = try AppriseURL(url).settings()
        } catch {
            #expect(error.description.contains(reason), "\(error)")
            #expect(!error.description.contains("s3cret"))
        }
    }

    /// In a configuration: `apprise_file` (the URL holds the secret), keys beside it win, `type` beside it is refused,
    /// and a kind's own check still applies to what the URL said, naming the key.
    @Test func aBackendFromAnAppriseURL() throws {
        let directory = try TemporaryDirectory()
        try "gotify://push.lan/AbCdEf.123\n".write(
            toFile: directory.file("gotify-url"), atomically: true, encoding: .utf8)
        func read(_ backend: String) throws -> BackendSpec {
            let text = "notifiers:\n  backends:\n    x: \(backend)\n  rules:\n    all: { backends: [x] }\n"
            let configuration = try NotifierConfiguration.read(
                try ConfigNode.parse(text, file: directory.file("hubd.yaml"), environment: [:]))
            return try #require(configuration.backends.first)
        }
        func error(_ backend: String) -> String {
            do {
                _ = try read(backend)
                return ""
            } catch {
                return "\(error)"
            }
        }
        let gotify = try read("{ apprise_file: gotify-url, priority: 9, retry_delay: 5s }")
        let settings = try #require(gotify.settings as? GotifyNotifier.Settings)
        #expect(gotify.type == "gotify" && settings.url == "http://push.lan" && settings.token == "AbCdEf.123")
        #expect(settings.priority == 9 && gotify.policy.initialDelay == .seconds(5))
        let mail = try read(#"{ apprise: "mailtos://hub:pw@mail.example.org?to=me@example.org,you@example.org" }"#)
        #expect(mail.type == "email")
        #expect(error(#"{ apprise: "mailto://hub:pw@mail.example.org" }"#).contains("notifiers.backends.x.tls"))
        #expect(error(#"{ apprise: "mailto://hub:pw@mail.example.org" }"#).contains("from the backend's apprise URL"))
        #expect(!error(#"{ apprise: "gotify://h/t", priority: 11 }"#).contains("apprise URL"), "a key written out")
        #expect(!error(#"{ apprise: "mailto://hub:pw@mail.example.org" }"#).contains("pw"))
        #expect(error("{ apprise: \"tgram://1:a/2\", type: telegram }").contains("remove type"))
        #expect(error("{ apprise: \"tgram://not-a-token/2\" }").contains("notifiers.backends.x.token"))
        #expect(!error("{ apprise: \"tgram://not-a-token/2\" }").contains("not-a-token"))
        #expect(error("{ apprise: \"json://x\" }").contains("notifiers.backends.x.apprise"))
    }
}
