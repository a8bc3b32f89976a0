import Crypto
import Foundation
import HubCore
import HubTestKit
import Testing

@testable import HubNotify

/// The configuration reference's notifier and alert sections (`NotifierConfiguration.referenceSections`): each key's
/// documented default, written into a backend, a rule, `alerts` or a quiet-hours window, reads the same as leaving it
/// out, so the Default column can't say what hubd does not do.
@Suite struct NotifierReferenceTests {
    /// A kind's required keys, so that it reads at all (`key_file` is made by the test).
    static let required: [String: String] = [
        "log": "", "file": "path: /dev/null", "exec": "command: [/bin/true]", "webhook": "url: http://127.0.0.1:9/",
        "ntfy": "topic: house", "mqtt": "",
        "apns": "bundle_id: a.b, team_id: TEAM123456, key_id: KEY1234567, "
            + "key_file: KEYFILE",
        "webpush": "subject: 'mailto:a@b.org'", "telegram": "token: '123:abc', chat_id: '42'",
        "gotify": "url: http://127.0.0.1:9/, token: AbCdEf123", "discord": "webhook_url: https://discord.test/x",
        "slack": "webhook_url: https://hooks.slack.test/x",
        "pushover": "token: azGDORePK8gMaC0QOYAMyEEuzJnyUi, user: uQiRzpo4DXghDmr9QzzfQu27cmVRsG",
        "matrix": "homeserver: http://127.0.0.1:9/, token: t, room: '!room:example.org'",
        "email": "host: localhost, from: hub@example.org, to: me@example.org",
    ]

    /// What a file with `backend` as backend `x` and `rule` (besides its backends) as rule `r` reads to, in words.
    static func read(backend: String, rule: String = "", alerts: String = "") throws -> String {
        let yaml = """
            alerts: { \(alerts) }
            notifiers:
              backends:
                x: { \(backend) }
              rules:
                r: { backends: [x]\(rule.isEmpty ? "" : ", " + rule) }
            """
        let configuration = try NotifierConfiguration.parse(yaml)
        let spec = try #require(configuration.backends.first)
        return "\(spec.settings) \(spec.policy) \(spec.quietHours) \(configuration.rules.map { "\($0)" }) "
            + "\(configuration.alerts.storm) \(String(describing: configuration.alerts.publicURL)) "
            + "\(configuration.alerts.quietHours)"
    }

    @Test func everyDocumentedDefaultIsWhatAnEmptyKeyDoes() throws {
        let directory = try TemporaryDirectory()
        let keyFile = directory.file("AuthKey.p8")
        try P256.Signing.PrivateKey().pemRepresentation.write(toFile: keyFile, atomically: true, encoding: .utf8)
        let required = Self.required.mapValues { $0.replacingOccurrences(of: "KEYFILE", with: keyFile) }
        var checked = 0
        for section in NotifierConfiguration.referenceSections {
            for key in section.keys {
                guard let value = key.defaultValue else { continue }
                let entry = "\(key.name): \(value)"
                let (with, without): (String, String)
                switch section.path {
                case "notifiers.backends.<name>":
                    (with, without) = (
                        try Self.read(backend: "type: log, " + entry), try Self.read(backend: "type: log")
                    )
                case let path where path.hasPrefix("notifiers.backends.<name> (type: "):
                    let kind = String(path.dropFirst("notifiers.backends.<name> (type: ".count).dropLast())
                    let base = "type: \(kind)" + (required[kind].map { $0.isEmpty ? "" : ", " + $0 } ?? "")
                    (with, without) = (try Self.read(backend: base + ", " + entry), try Self.read(backend: base))
                case "notifiers.rules.<name>":
                    // An alerting key's default is an alerting rule's: the base rule alerts already.
                    let base = "group_by: [sensor]"
                    (with, without) = (
                        try Self.read(backend: "type: log", rule: base + ", " + entry),
                        try Self.read(backend: "type: log", rule: base)
                    )
                case "alerts":
                    (with, without) = (
                        try Self.read(backend: "type: log", alerts: entry), try Self.read(backend: "type: log")
                    )
                case "alerts.quiet_hours.<name>":
                    let base = "quiet_hours: { night: { from: '22:00', to: '07:00'"
                    (with, without) = (
                        try Self.read(backend: "type: log", alerts: base + ", " + entry + " } }"),
                        try Self.read(backend: "type: log", alerts: base + " } }")
                    )
                default:
                    Issue.record("\(section.path).\(key.name): no test reads this section's default \(value)")
                    continue
                }
                #expect(with == without, "\(section.path).\(key.name): the documented default \(value) reads otherwise")
                checked += 1
            }
        }
        #expect(checked >= 20, "\(checked) defaults checked")
    }

    /// A duration with no range of its own (a backend's `timeout`, a rule's `rate_limit`) is still a duration: a
    /// bare `0` or a negative number of seconds is refused, as `0s` is, naming the key (`timeout: 0` made every
    /// attempt time out, `-5` a negative wait).
    @Test func aZeroOrNegativeBareDurationIsRefused() throws {
        for value in ["0", "-5", "0s"] {
            for key in ["timeout", "retry_delay", "retry_max_delay", "max_age"] {
                let error = backendError("{ type: log, \(key): \(value) }")
                #expect(
                    error.contains("notifiers.backends.x.\(key)") && error.contains("a duration"),
                    "\(key): \(value): \(error)")
            }
        }
        #expect(backendError("{ type: log, timeout: 5 }").isEmpty)
        // Where zero means something, its range says so: an APNs push delivered at once or never.
        let directory = try TemporaryDirectory()
        let keyFile = directory.file("AuthKey.p8")
        try P256.Signing.PrivateKey().pemRepresentation.write(toFile: keyFile, atomically: true, encoding: .utf8)
        let apns = "type: apns, " + Self.required["apns"]!.replacingOccurrences(of: "KEYFILE", with: keyFile)
        for value in ["0", "0s"] { #expect(backendError("{ \(apns), expiration: \(value) }").isEmpty, "\(value)") }
        #expect(backendError("{ \(apns), expiration: -1 }").contains("expiration"))
    }

    /// An empty label or reminder gap is refused, naming it, not skipped.
    @Test func anEmptyLabelOrGapIsRefused() {
        func error(_ yaml: String) -> String {
            do {
                _ = try NotifierConfiguration.parse(yaml)
                return ""
            } catch { return "\(error)" }
        }
        let label = error("alerts:\n  sensors:\n    \"door*\": { labels: { room: } }\n")
        #expect(label.contains("alerts.sensors.door*.labels.room") && label.contains("needs a value"), "\(label)")
        let gap = error(
            "notifiers:\n  backends: { x: { type: log } }\n  rules:\n    r: { backends: [x], repeat: [15m, ~] }\n")
        #expect(gap.contains("notifiers.rules.r.repeat[1]") && gap.contains("empty gap"), "\(gap)")
    }

    /// Every kind hubd knows has its section, with a summary, and a base the test above can read.
    @Test func everyKindIsInTheReference() {
        let paths = Set(NotifierConfiguration.referenceSections.map(\.path))
        for kind in BackendSpec.kinds {
            #expect(paths.contains("notifiers.backends.<name> (type: \(kind.type))"), "\(kind.type)")
            #expect(Self.required[kind.type] != nil, "\(kind.type): no base in the test")
            #expect(kind.summary.hasSuffix("."), "\(kind.type)")
        }
    }
}
