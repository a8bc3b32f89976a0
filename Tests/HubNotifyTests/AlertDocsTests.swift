import Foundation
import HubCore
import Testing

@testable import HubNotify

/// The alert configuration the docs show is what hubd reads: the worked example in docs/alerts.md and the alerting
/// rule of examples/notifiers.yaml parse, and a mistyped one is refused with its place and reason.
@Suite struct AlertDocsTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    @Test func theWorkedExampleReads() throws {
        let text = try String(contentsOf: Self.root.appendingPathComponent("docs/alerts.md"), encoding: .utf8)
        let block = try #require(
            text.components(separatedBy: "```yaml\n").dropFirst().first?.components(separatedBy: "```").first)
        let yaml = block.replacingOccurrences(of: "token_file: /etc/sensorhub/bot.token", with: "token: \"1:a\"")
        let configuration = try NotifierConfiguration.parse(yaml)
        let leak = try #require(configuration.rules.first { $0.name == "leak" })
        #expect(leak.alerting?.repeatEvery == [.seconds(900), .seconds(1800), .seconds(3600)])
        #expect(leak.alerting?.escalate.first?.backends == ["partner"] && leak.priority == 5)
        #expect(
            configuration.alerts.facts("zb-shed")
                == AlertBook.SensorFacts(labels: ["room": "garage"], parent: "zigbee-bridge"))
        #expect(configuration.alerts.quietHours.first?.zone.identifier == "Europe/Berlin")
        #expect(configuration.rules.first { $0.name == "doors" }?.alerting?.groupBy == ["room"])
    }

    @Test func theExampleFileReads() throws {
        let configuration = try NotifierConfiguration.parse(
            try String(contentsOf: Self.root.appendingPathComponent("examples/notifiers.yaml"), encoding: .utf8),
            environment: ["HUB_NOTIFIERS_BACKENDS_PHONE_TOKEN": "tk_x"])
        #expect(configuration.rules.first { $0.name == "leak" }?.alerting?.repeatLimit == 10)
        #expect(configuration.rules.first { $0.name == "record" }?.alerting == nil)
    }

    @Test(arguments: [
        ("group_wait: soon", "notifiers.rules.r.group_wait"),
        ("quiet_hours: [nights]", "no quiet hours are named 'nights'"),
        ("escalate: [{after: 10m, to: [pager]}]", "no backend is named 'pager'"),
        ("escalate: [{to: [b]}]", "after how long"),
        ("repeat: [0s]", "notifiers.rules.r.repeat"),
        ("group_by: room\n      repaet: 1m", "unknown key"),
    ])
    func aMistakeIsNamed(_ line: String, _ expected: String) {
        let yaml = """
            alerts:
              quiet_hours:
                night: { from: "22:00", to: "07:00" }
            notifiers:
              backends:
                b: { type: log }
              rules:
                r:
                  backends: [b]
                  \(line)
            """
        do {
            _ = try NotifierConfiguration.parse(yaml)
            Issue.record("\(line) was taken")
        } catch {
            #expect(error.description.contains(expected), "\(error)")
        }
    }

    /// A backend's `quiet_hours` reach the book; a name no window has is refused, naming the key.
    @Test func aBackendTakesQuietHours() throws {
        let yaml = """
            alerts:
              quiet_hours:
                night: { from: "22:00", to: "07:00" }
            notifiers:
              backends:
                partner: { type: log, quiet_hours: [night] }
                tablet: { type: log }
              rules:
                r: { backends: [partner, tablet], group_wait: 0s }
            """
        let configuration = try NotifierConfiguration.parse(yaml)
        #expect(configuration.alertSetup.backendQuietHours == ["partner": ["night"]])
        do {
            _ = try NotifierConfiguration.parse(yaml.replacingOccurrences(of: "[night] }", with: "[nights] }"))
            Issue.record("an unknown window was taken")
        } catch {
            #expect(error.description.contains("notifiers.backends.partner.quiet_hours"), "\(error)")
            #expect(error.description.contains("no quiet hours are named 'nights'"), "\(error)")
        }
    }

    @Test func badQuietHoursAreNamed() {
        for (window, expected) in [
            (#"{ from: "22:00" }"#, "say when the quiet hours end"),
            (#"{ from: "25:00", to: "07:00" }"#, "a time from 00:00 to 24:00"),
            (#"{ from: "22:00", to: "22:00" }"#, "the window is empty"),
            (#"{ from: "22:00", to: "07:00", days: [someday] }"#, "is not a weekday"),
            (#"{ from: "22:00", to: "07:00", zone: Mars/Olympus }"#, "an IANA time zone"),
        ] {
            do {
                _ = try NotifierConfiguration.parse("alerts:\n  quiet_hours:\n    n: \(window)\n")
                Issue.record("\(window) was taken")
            } catch {
                #expect(error.description.contains(expected), "\(window): \(error)")
            }
        }
    }
}
