import Foundation
import HubCore
import HubSupport
import HubTestKit
import Testing

/// Names, topics, broker settings and statuses with control or bidi characters, through every way in (hubctl,
/// the registry file, hubd.yaml; the HTTP API in HubAPITests): refused with a message naming the field, and escaped
/// wherever something that got in anyway is shown (issue 16, item 3).
@Suite(.timeLimit(.minutes(2)))
struct HostileInputTests {
    let hubctl: Hubctl

    init() throws {
        hubctl = try Hubctl()
    }

    /// Nothing a terminal would act on: no control character other than the line breaks, no bidi or format one.
    func expectNothingRaw(_ text: String, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let found = UnsafeText.firstUnsafe(in: text, allowing: .lineBreak)
        #expect(
            found == nil, "\(what) has U+\(String(found?.value ?? 0, radix: 16)) raw", sourceLocation: sourceLocation)
    }

    @Test(arguments: [
        (
            ["sensors", "add", "x", "--topic", "a\u{1B}[31m"],
            "'a\\u{1B}[31m' is not a valid sensor topic: it contains a control character (U+001B)"
        ),
        (
            ["sensors", "add", "x", "--topic", "home/\u{7}"],
            "'home/\\u{7}' is not a valid sensor topic: it contains a control character (U+0007)"
        ),
        (
            ["sensors", "add", "x", "--topic", "t\u{9B}2J"],
            "'t\\u{9B}2J' is not a valid sensor topic: it contains a control character (U+009B)"
        ),
        (
            ["sensors", "add", "x", "--topic", "home/\u{202E}door"],
            "'home/\\u{202E}door' is not a valid sensor topic: it contains an invisible formatting character (U+202E)"
        ),
        (
            ["sensors", "add", "door\u{202E}", "--topic", "door"],
            "'door\\u{202E}' is not a valid sensor name: it contains an invisible formatting character (U+202E)"
        ),
        (
            ["sensors", "add", "\u{FEFF}door"],
            "'\\u{FEFF}door' is not a valid sensor name: it contains an invisible formatting character (U+FEFF)"
        ),
        (
            ["sensors", "add", "x", "--topic-template", "home/\u{1B}/{name}"],
            "the topic template 'home/\\u{1B}/{name}' is not valid"
        ),
        (
            ["sensors", "rename", "kitchen", "kit\u{1B}chen"],
            "'kit\\u{1B}chen' is not a valid sensor name: it contains a control character (U+001B)"
        ),
        (
            ["broker", "set", "--host", "bad host"],
            "the broker host 'bad host' is not a host name or an IP address: a host name is letters, digits and '-' in labels of 1–63 separated by dots"
        ),
        (
            ["broker", "set", "--host", "broker\nlan"],
            "the broker host 'broker\\u{A}lan' contains a control character (U+000A)"
        ),
        (
            ["broker", "set", "--host", "broker.lan\u{200F}"],
            "the broker host 'broker.lan\\u{200F}' contains an invisible formatting character (U+200F)"
        ),
        (
            ["broker", "set", "--client-id", "hub\u{1B}]0;x\u{7}"],
            "the client id 'hub\\u{1B}]0;x\\u{7}' contains a control character (U+001B)"
        ),
        (
            ["broker", "set", "--username", "\u{FEFF}hub"],
            "the user name '\\u{FEFF}hub' contains an invisible formatting character (U+FEFF)"
        ),
        (["broker", "check", "--host", "bad host"], "the broker host 'bad host' is not a host name or an IP address"),
    ])
    func hubctlRefusesThemNamingTheField(arguments: [String], message: String) async throws {
        #expect(try await hubctl.run("sensors", "add", "kitchen").status == 0)
        let before = try String(contentsOfFile: hubctl.storePath, encoding: .utf8)
        let result = try await hubctl.run(arguments)
        #expect(result.status == 64, "\(result.standardError)")
        #expect(result.standardError.hasPrefix("hubctl: " + message), "\(result.standardError)")
        expectNothingRaw(result.standardError, "the message")
        #expect(try String(contentsOfFile: hubctl.storePath, encoding: .utf8) == before)
    }

    private func writeStore(sensors: [String], broker: String = #""host": "localhost", "clientId": "sensorhub""#)
        throws
    {
        try FileManager.default.createDirectory(atPath: hubctl.state.path, withIntermediateDirectories: true)
        let text = """
            {"schemaVersion": 1, "broker": {"port": 1883, \(broker)},
             "sensors": [\(sensors.joined(separator: ",\n"))]}

            """
        try text.write(toFile: hubctl.storePath, atomically: true, encoding: .utf8)
    }

    /// A registry written by hand, or by a hub from before the rule: a bad name, topic or host is refused where it
    /// is in the file (exit 65, the file left alone), as an invalid name always was.
    @Test(arguments: [
        (
            #"{"name": "a\u202eb", "topic": "a", "added": "2026-11-22T10:03:00.000Z"}"#, "",
            "sensors[0].name: 'a\\u{202E}b' is not a valid sensor name"
        ),
        (
            #"{"name": "a", "topic": "a\u001b[31m", "added": "2026-11-22T10:03:00.000Z"}"#, "",
            "sensors[0].topic: 'a\\u{1B}[31m' is not a valid sensor topic"
        ),
        (
            "", #""host": "broker\nlan", "clientId": "c""#,
            "broker.host: the broker host 'broker\\u{A}lan' contains a control character (U+000A)"
        ),
        ("", #""host": "bad host", "clientId": "c""#, "broker.host: the broker host 'bad host' is not a host name"),
    ])
    func aRegistryFileWithThemIsRefusedWhereTheyAre(sensor: String, broker: String, message: String) async throws {
        if broker.isEmpty { try writeStore(sensors: [sensor]) } else { try writeStore(sensors: [], broker: broker) }
        let before = try String(contentsOfFile: hubctl.storePath, encoding: .utf8)
        for arguments in [["sensors", "list"], ["sensors", "add", "kitchen"], ["broker", "show"]] {
            let result = try await hubctl.run(arguments)
            #expect(result.status == 65, "\(arguments): \(result.standardError)")
            #expect(result.standardError.contains(message), "\(result.standardError)")
            expectNothingRaw(result.standardError, "the message")
        }
        #expect(try String(contentsOfFile: hubctl.storePath, encoding: .utf8) == before)
    }

    /// A status from an old registry, written by hand with ESC and U+202E: the registry is read, and every way of
    /// showing it escapes them.
    @Test func aStoredStatusWithThemIsShownEscaped() async throws {
        try writeStore(sensors: [
            #"{"name": "door", "topic": "door", "status": "\u001b[2J\u001b]0;owned\u0007open\u202e", "lastUpdated": "2026-11-22T10:00:00.000Z", "added": "2026-11-01T08:00:00.000Z"}"#
        ])
        let now = "2026-11-22T10:03:00Z"
        let list = try await hubctl.run("sensors", "list", "--now", now)
        #expect(list.status == 0)
        #expect(
            list.standardOutput == """
                NAME  STATUS                                    LAST UPDATED                     TOPIC
                door  \\u{1B}[2J\\u{1B}]0;owned\\u{7}open\\u{202E}  3 min ago (2026-11-22 10:00:00)  door

                """)
        let show = try await hubctl.run("sensors", "show", "door", "--now", now)
        #expect(show.standardOutput.contains("Status:        \\u{1B}[2J\\u{1B}]0;owned\\u{7}open\\u{202E}\n"))
        let json = try await hubctl.run("sensors", "list", "--json")
        #expect(json.standardOutput.contains(#""status": "\u001b[2J\u001b]0;owned\u0007open\u202e""#))
        for output in [list, show, json] { expectNothingRaw(output.standardOutput, "the output") }
        // JSON escapes are the same text to a script.
        let parsed = try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [[String: Any]]
        #expect(parsed?.first?["status"] as? String == "\u{1B}[2J\u{1B}]0;owned\u{7}open\u{202E}")
    }

    /// hubd.yaml: a value with them stops hubd (exit 78) and hubctl, naming the key, the value escaped.
    @Test func aConfigurationValueWithThemStopsStartUp() async throws {
        let hub = try RunningHub(configuration: "sensors:\n  topic_template: \"home/\\e[31m/{name}\"\n")
        let message =
            "\(hub.configFile): sensors.topic_template (or $HUB_SENSORS_TOPIC_TEMPLATE) is 'home/\\u{1B}[31m/{name}':"
            + " contains a control character (U+001B)"
        let hubd = try await runProcess(hub.hubd, [], environment: hub.environment)
        #expect(hubd.status == 78)
        #expect(hubd.standardError.hasPrefix("hubd: " + message), "\(hubd.standardError)")
        expectNothingRaw(hubd.standardError, "hubd's message")
        let add = try await runProcess(
            hub.hubctl.executable, ["sensors", "add", "kitchen"], environment: hub.environment)
        #expect(add.status == 78)
        #expect(add.standardError.hasPrefix("hubctl: " + message), "\(add.standardError)")
    }

    /// A stored status with ESC that hubd moves on from: its log line and `hubctl events` show it escaped.
    @Test func hubdLogsAndEventsShowThemEscaped() async throws {
        try await withBroker { broker in
            let hub = try RunningHub(configuration: "store:\n  flush_interval: 100ms\n")
            try await hub.use(broker)
            var document = try hub.registry()
            try document.addSensor(named: "door")
            document.recordStatus("\u{1B}[2Jgone\u{202E}", lastUpdated: .now, onTopic: "door")
            try Data(document.encode()).write(to: URL(fileURLWithPath: hub.hubctl.storePath))
            try await hub.startAndWaitUntilReady()
            try await publish(broker, "door", "open")
            let line = try await hub.waitForLog("sensor event", "sensor=door", "to=open")
            #expect(line.contains("from=\\u{1B}[2Jgone\\u{202E}"), "\(line)")
            expectNothingRaw(line, "the log line")
            try await eventually("the event is in the history") {
                try runProcessBlocking(
                    hub.hubctl.executable, ["events", "door"], environment: hub.environment
                ).standardOutput.contains("open")
            }
            let events = try await hub.hubctl.run("events", "door")
            #expect(events.standardOutput.contains("\\u{1B}[2Jgone\\u{202E}"), "\(events.standardOutput)")
            expectNothingRaw(events.standardOutput, "hubctl events")
            let csv = try await hub.hubctl.run("events", "door", "--csv")
            #expect(csv.standardOutput.contains(",\\u{1B}[2Jgone\\u{202E},open,"), "\(csv.standardOutput)")
            expectNothingRaw(csv.standardOutput, "hubctl events --csv")
            await hub.stop()
        }
    }
}
