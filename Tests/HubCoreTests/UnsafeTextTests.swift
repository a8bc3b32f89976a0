import Foundation
import HubCore
import HubSupport
import HubTestKit
import Testing

/// What the refusal of a control character says after "it" or the field's name.
func controlCharacter(_ codePoint: String) -> String {
    "contains a control character (\(codePoint)): control and invisible formatting characters are not allowed,"
        + " because terminals and logs act on them instead of showing them"
}

/// What the refusal of a bidi control or another invisible formatting character says.
func formattingCharacter(_ codePoint: String) -> String {
    "contains an invisible formatting character (\(codePoint)): control and invisible formatting characters are not"
        + " allowed, because they reorder or hide the text around them wherever it is shown"
}

/// Control and invisible formatting characters: one rule, refused in every name, topic, broker setting and
/// configuration value where it comes in, and escaped wherever text is shown.
@Suite struct UnsafeTextTests {
    @Test(
        arguments: [
            ("\u{1B}", true), ("\u{07}", true), ("\u{7F}", true), ("\u{85}", true), ("\u{9B}", true), ("\n", true),
            ("\u{200E}", true), ("\u{200F}", true), ("\u{202A}", true), ("\u{202E}", true), ("\u{2066}", true),
            ("\u{2069}", true), ("\u{061C}", true), ("\u{FEFF}", true), ("\u{200B}", true), ("\u{00AD}", true),
            ("\u{2028}", true), ("\u{2029}", true), ("\u{E0041}", true),
            // Zero-width (non-)joiners: Persian, Indic scripts and emoji sequences need them.
            ("\u{200C}", false), ("\u{200D}", false),
            ("a", false), ("é", false), ("€", false), ("😀", false), ("\u{A0}", false), ("\u{0308}", false),
        ] as [(Unicode.Scalar, Bool)])
    func whatIsUnsafe(scalar: Unicode.Scalar, unsafe: Bool) {
        #expect(UnsafeText.isUnsafe(scalar) == unsafe, "U+\(String(scalar.value, radix: 16))")
    }

    @Test func escapingMakesThemVisible() {
        #expect(UnsafeText.escaped("a\u{1B}[31mred") == #"a\u{1B}[31mred"#)
        #expect(UnsafeText.escaped("exe.\u{202E}txt") == #"exe.\u{202E}txt"#)
        #expect(UnsafeText.escaped("one\ntwo\tthree") == #"one\u{A}two\u{9}three"#)
        #expect(UnsafeText.escaped("one\ntwo\u{7}", keepingLineBreaks: true) == "one\ntwo\\u{7}")
        #expect(UnsafeText.escaped("Küche 👨‍👩‍👧 ok") == "Küche 👨‍👩‍👧 ok")
    }

    @Test(arguments: [
        ("a\u{1B}[31m", "it " + controlCharacter("U+001B")),
        ("home/\u{7}/bell", "it " + controlCharacter("U+0007")),
        ("line\nbreak", "it " + controlCharacter("U+000A")),
        ("x\u{9B}y", "it " + controlCharacter("U+009B")),
        ("home/\u{202E}roodtnorf", "it " + formattingCharacter("U+202E")),
        ("\u{FEFF}kitchen", "it " + formattingCharacter("U+FEFF")),
    ])
    func topicsWithThemAreRefused(topic: String, reason: String) {
        #expect(throws: RegistryError.invalidTopic(topic, reason)) { try SensorRules.topic(topic) }
        var document = DefaultsDocument()
        let error = #expect(throws: RegistryError.self) { try document.addSensor(named: "x", topic: topic) }
        // The message shows the topic escaped: it is printed to the terminal that must not act on it.
        #expect(error?.description == "'\(UnsafeText.escaped(topic))' is not a valid sensor topic: \(reason)")
        #expect(error.map { UnsafeText.firstUnsafe(in: $0.description) } == .some(nil))
        #expect(throws: RegistryError.self) { try TopicTemplate("home/\(topic)/{name}") }
    }

    @Test(arguments: [
        ("bad host", "is not a host name or an IP address"),
        ("broker\nlan", "the broker host 'broker\\u{A}lan' " + controlCharacter("U+000A")),
        ("broker.lan\u{202E}", "the broker host 'broker.lan\\u{202E}' " + formattingCharacter("U+202E")),
        ("-broker", "is not a host name or an IP address"),
        ("a..b", "is not a host name or an IP address"),
        ("[::1]", "is not a host name or an IP address"),
        ("Küche.lan", "is not a host name or an IP address"),
        (String(repeating: "a", count: 64) + ".lan", "is not a host name or an IP address"),
    ])
    func badHostsAreRefusedSayingTheRule(host: String, message: String) {
        let error = #expect(throws: RegistryError.self) { try BrokerSettings(host: host).validate() }
        #expect(error?.description.contains(message) == true, "\(String(describing: error))")
        if message.hasPrefix("is not") {
            #expect(error?.description.contains("labels of 1–63 separated by dots") == true)
        }
    }

    @Test(arguments: [
        "localhost", "broker.lan", "mqtt.example.com.", "my_broker", "192.168.1.10", "::1", "fd00::1",
        "fe80::1%eth0", "10-0-0-1.nip.io",
    ])
    func goodHostsPass(host: String) throws {
        try BrokerSettings(host: host).validate()
    }

    @Test func otherBrokerSettingsNameTheirField() {
        let clientID = #expect(throws: RegistryError.self) {
            try BrokerSettings(clientID: "hub\u{1B}]0;owned\u{7}").validate()
        }
        #expect(clientID?.description == "the client id 'hub\\u{1B}]0;owned\\u{7}' " + controlCharacter("U+001B"))
        let user = #expect(throws: RegistryError.self) {
            try BrokerSettings(username: "admin\u{202E}").validate()
        }
        #expect(user?.description == "the user name 'admin\\u{202E}' " + formattingCharacter("U+202E"))
    }

    // MARK: The registry file

    static func document(sensor: String = "", broker: String = #""host": "localhost", "clientId": "sensorhub""#)
        -> String
    {
        """
        {"schemaVersion": 1, "broker": {"port": 1883, \(broker)},
         "sensors": [\(sensor.isEmpty ? "" : "{\(sensor), \"added\": \"2026-11-22T10:03:00.000Z\"}")]}
        """
    }

    /// A file written by hand (or by an older hub) is held to the same rule: refused with the path of the value,
    /// like an invalid name, rather than passed on to the broker, the log and the terminal.
    @Test(arguments: [
        (
            document(sensor: #""name": "a\u202eb", "topic": "a""#),
            "sensors[0].name: 'a\\u{202E}b' is not a valid sensor name: it " + formattingCharacter("U+202E")
        ),
        (
            document(sensor: #""name": "a", "topic": "a\u001b[31m""#),
            "sensors[0].topic: 'a\\u{1B}[31m' is not a valid sensor topic: it " + controlCharacter("U+001B")
        ),
        (
            document(broker: #""host": "broker\nlan""#),
            "broker.host: the broker host 'broker\\u{A}lan' " + controlCharacter("U+000A")
        ),
        (document(broker: #""host": "bad host""#), "broker.host: the broker host 'bad host' is not a host name"),
        (
            document(broker: #""clientId": "hub\u0007""#),
            "broker.clientId: the client id 'hub\\u{7}' " + controlCharacter("U+0007")
        ),
        (
            document(broker: #""username": "\ufeffhub""#),
            "broker.username: the user name '\\u{FEFF}hub' " + formattingCharacter("U+FEFF")
        ),
    ])
    func theRegistryFileIsHeldToTheRule(text: String, message: String) {
        let error = #expect(throws: JSONSyntaxError.self) { try DefaultsDocument.decode(Array(text.utf8)) }
        #expect(error?.description.contains(message) == true, "\(String(describing: error))")
    }

    /// A status is what the sensor said: one with control characters from an old file is read (and shown
    /// escaped), not a reason to refuse the whole registry.
    @Test func aStoredStatusWithThemIsStillRead() throws {
        let text = Self.document(sensor: #""name": "a", "topic": "a", "status": "\u001b[2Jgone""#)
        #expect(try DefaultsDocument.decode(Array(text.utf8)).sensors.first?.status == "\u{1B}[2Jgone")
    }

    // MARK: The configuration

    @Test func theEnvironmentIsHeldToTheRuleToo() {
        let error = #expect(throws: ConfigurationError.self) {
            try HubConfiguration.load(option: nil, environment: ["HUB_STATE_DIRECTORY": "/srv/\u{1B}[2J"])
        }
        #expect(
            error?.description.hasSuffix("is '$HUB_STATE_DIRECTORY=/srv/\\u{1B}[2J': " + controlCharacter("U+001B"))
                == true)
    }

    func load(_ yaml: String) throws -> HubConfiguration {
        let directory = try TemporaryDirectory(prefix: "config")
        try yaml.write(toFile: directory.file("hubd.yaml"), atomically: true, encoding: .utf8)
        return try HubConfiguration.load(option: directory.file("hubd.yaml"), environment: [:])
    }

    /// Every value in hubd.yaml (escapes written in YAML's double quotes, or the characters themselves) and in the
    /// environment is held to the rule, with the key path.
    @Test(arguments: [
        (
            #"sensors: {topic_template: "home/\e[31m/{name}"}"#,
            "sensors.topic_template (or $HUB_SENSORS_TOPIC_TEMPLATE) is 'home/\\u{1B}[31m/{name}': "
                + controlCharacter("U+001B")
        ),
        (
            "hub: {availability_topic: \"hub/\u{202E}\"}",
            "hub.availability_topic (or $HUB_HUB_AVAILABILITY_TOPIC) is 'hub/\\u{202E}': "
                + formattingCharacter("U+202E")
        ),
        (
            #"sds011: {name: "air\u2066"}"#,
            "sds011.name (or $HUB_SDS011_NAME) is 'air\\u{2066}': " + formattingCharacter("U+2066")
        ),
        (
            #"state: {directory: "/srv/hub\a"}"#,
            "state.directory (or $HUB_STATE_DIRECTORY) is '/srv/hub\\u{7}': " + controlCharacter("U+0007")
        ),
    ])
    func configurationValuesAreHeldToTheRule(yaml: String, message: String) throws {
        let error = #expect(throws: ConfigurationError.self) { try load(yaml) }
        #expect(error?.description.hasSuffix(message) == true, "\(String(describing: error))")
    }
}
