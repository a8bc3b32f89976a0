import Foundation
import HubCore
import HubTestKit
import Testing

/// `hubctl sensors import` and `export` as processes against real files: the round trip in every format, all or
/// nothing with every bad line named, and a running hubd following an import (issue 16, item 5).
@Suite(.timeLimit(.minutes(2)))
struct HubctlImportTests {
    let hubctl: Hubctl

    init() throws {
        hubctl = try Hubctl()
    }

    /// What import and export carry of each sensor.
    func fields(_ state: String) throws -> [[String]] {
        try DefaultsStore(directory: state).read().sensors.map {
            [$0.name, $0.topic, $0.kind.rawValue, $0.silenceTimeout.map { "\($0)" } ?? "-"]
                + [
                    $0.format.path?.description, $0.format.map?.description, $0.format.unit, $0.format.rangeText,
                    $0.format.bands?.description,
                ]
                .map { $0 ?? "-" } + ["\($0.format.decimals ?? -1)", $0.availability ?? "-"]
        }
    }

    @Test(arguments: SensorList.Format.allCases)
    func exportThenImportRoundTrips(format: SensorList.Format) async throws {
        for arguments in [
            ["kitchen"], ["Küche oben", "--topic", #"home/"a,b"/küche"#], ["air", "--kind", "particulate"],
            ["door", "--topic", "zigbee/0x1234", "--silence-timeout", "90s"], ["null"], ["123"],
            ["garage", "--topic", "x/- yes: no &", "--silence-timeout", "1h30m"], ["flag", "--topic", "flags/🏳️‍🌈"],
            // Devices that publish JSON: their value path, map, unit, decimals, range and availability go too.
            ["front door", "--preset", "zigbee2mqtt", "--value", "contact"],
            [
                "cellar", "--topic", "home/cellar", "--value", #"a\.b[0]"#, "--kind", "numeric", "--unit", "°C",
                "--decimals", "1", "--range", "-40..85", "--map", "1=one,2=two",
            ],
            [
                "garden uv", "--kind", "numeric", "--value", "uvi", "--unit", "UVI", "--bands",
                #"0=Low,2.5=Mid "ok",9=Top"#,
            ],
        ] {
            let added = try await hubctl.run(["sensors", "add"] + arguments)
            #expect(added.status == 0, "\(added.standardError)")
        }
        let exported = try await hubctl.run("sensors", "export", "--format", format.rawValue)
        #expect(exported.status == 0)
        let file = hubctl.state.file("sensors.\(format.rawValue)")
        try exported.standardOutput.write(toFile: file, atomically: true, encoding: .utf8)

        let other = try TemporaryDirectory(prefix: "hub-state")
        let imported = try await hubctl.run("sensors", "import", file, "--state-dir", other.path)
        #expect(imported.status == 0, "\(imported.standardError)")
        #expect(imported.standardOutput == "Imported 11 sensors.\n")
        #expect(try fields(other.path) == fields(hubctl.state.path))
        let again = try await hubctl.run("sensors", "export", "--format", format.rawValue, "--state-dir", other.path)
        #expect(again.standardOutput == exported.standardOutput)
        // From standard input, the format told by what the text looks like.
        let piped = try TemporaryDirectory(prefix: "hub-state")
        let stdin = try await hubctl.run(
            ["sensors", "import", "-", "--state-dir", piped.path], input: exported.standardOutput)
        #expect(stdin.status == 0, "\(stdin.standardError)")
        #expect(try fields(piped.path) == fields(hubctl.state.path))
    }

    @Test func exportWritesAFileInTheFormatOfItsExtension() async throws {
        _ = try await hubctl.run("sensors", "add", "kitchen", "--silence-timeout", "15m")
        let file = hubctl.state.file("all.yaml")
        let result = try await hubctl.run("sensors", "export", file)
        #expect(result.status == 0)
        #expect(
            try String(contentsOfFile: file, encoding: .utf8)
                == "- name: \"kitchen\"\n  topic: \"kitchen\"\n  kind: \"status\"\n  silenceTimeout: \"15m\"\n")
        let csv = try await hubctl.run("sensors", "export")
        #expect(csv.standardOutput == "name,topic,kind,silenceTimeout\nkitchen,kitchen,status,15m\n")
    }

    /// One bad line and nothing is written; every bad line is named, with why.
    @Test func anImportIsAllOrNothingAndNamesEveryBadLine() async throws {
        _ = try await hubctl.run("sensors", "add", "Kitchen")
        let before = try String(contentsOfFile: hubctl.storePath, encoding: .utf8)
        let file = hubctl.state.file("new.csv")
        try """
        name,topic,kind,silenceTimeout
        hall,hall,status,
        a/b,,,
        kitchen,elsewhere,,
        pantry,"x\u{1B}[31m",,
        Hall,hall2,,
        cellar,hall,,
        attic,,thermometer,
        shed,,,soon
        "multi
        line",,,
        ,nameless,,
        garden,garden

        """.write(toFile: file, atomically: true, encoding: .utf8)
        let result = try await hubctl.run("sensors", "import", file)
        #expect(result.status == 64)
        #expect(
            result.standardError == """
                hubctl: nothing imported: 10 of the sensors in \(file) can't be added
                  line 3: 'a/b' is not a valid sensor name: '/' separates MQTT topic levels and can't be part of a name
                  line 4: a sensor named 'Kitchen' already exists — names are case-insensitive (--skip-existing skips such sensors)
                  line 5: 'x\\u{1B}[31m' is not a valid sensor topic: it contains a control character (U+001B): control and invisible formatting characters are not allowed, because terminals and logs act on them instead of showing them
                  line 6: 'Hall' is also on line 2
                  line 7: the topic 'hall' is also the topic on line 2
                  line 8: kind 'thermometer' is not status, numeric or particulate
                  line 9: silenceTimeout 'soon' is not a duration like 90s, 10m or 2h
                  line 10: 'multi\\u{A}line' is not a valid sensor name: it contains a control character (U+000A): control and invisible formatting characters are not allowed, because terminals and logs act on them instead of showing them
                  line 12: no name (every sensor needs one)
                  line 13: 2 fields, but the header has 4

                """)
        #expect(try String(contentsOfFile: hubctl.storePath, encoding: .utf8) == before)

        // The same without the bad lines, existing names skipped when asked: one write, all of them.
        try "name,topic\nhall,hall\nkitchen,kitchen\ngarden,garden\n".write(
            toFile: file, atomically: true, encoding: .utf8)
        let refused = try await hubctl.run("sensors", "import", file)
        #expect(refused.status == 64)
        let skipped = try await hubctl.run("sensors", "import", file, "--skip-existing")
        #expect(skipped.status == 0, "\(skipped.standardError)")
        #expect(skipped.standardOutput == "Imported 2 sensors; skipped 1 the registry already has.\n")
        #expect(try fields(hubctl.state.path).map(\.[0]) == ["Kitchen", "hall", "garden"])
    }

    @Test(arguments: [
        (
            "name,topic,qos\nkitchen,kitchen,1\n", "csv",
            "line 1: unknown column 'qos' (columns: name, topic, kind, silenceTimeout, value, map, unit, decimals, range, bands, availability)"
        ),
        (
            #"[{"name": "a"}, {"topic": "b"}, 3, {"name": "c", "qos": 1}]"#, "json",
            "[1]: no name (every sensor needs one)\n  [2]: expected an object with a \"name\"\n  [3]: unknown field 'qos'"
        ),
        (
            "- name: a\n- topic: b\n- [c]\n", "yaml",
            "line 2: no name (every sensor needs one)\n  line 3: expected a mapping with a name"
        ),
        ("{name: a}", "yaml", "expected a YAML list of sensors (- name: …)"),
        ("{", "json", "not valid JSON"),
    ])
    func badShapesAreNamed(text: String, format: String, message: String) async throws {
        let result = try await hubctl.run(["sensors", "import", "-", "--format", format], input: text)
        #expect(result.status == 64)
        #expect(result.standardError.contains(message), "\(result.standardError)")
        #expect(!FileManager.default.fileExists(atPath: hubctl.storePath))
    }

    @Test func helpSaysTheColumnsAndTheRules() async throws {
        let help = try await hubctl.run("sensors", "import", "--help")
        for text in ["name,topic,kind,silenceTimeout", "All or nothing", "--skip-existing", "--format <format>"] {
            #expect(help.standardOutput.contains(text), "\(text)")
        }
        #expect(try await hubctl.run("sensors", "export", "--help").standardOutput.contains("csv, json or yaml"))
    }

    /// hubd follows the registry file: sensors imported while it runs are subscribed to and get their statuses.
    @Test func aRunningHubFollowsAnImport() async throws {
        try await withBroker { broker in
            let hub = try RunningHub(configuration: "store:\n  flush_interval: 100ms\n")
            try await hub.prepare(broker, sensors: ["kitchen"])
            try await hub.startAndWaitUntilReady()
            let csv = "name,topic\n" + (0..<200).map { "sensor \($0),house/sensor-\($0)" }.joined(separator: "\n")
            let result = try await hub.hubctl.run(["sensors", "import", "-"], input: csv)
            #expect(result.status == 0, "\(result.standardError)")
            try await hub.waitForLog("followed the registry", "subscribed=200")
            try await publish(broker, "house/sensor-199", "open")
            try await eventually("the last imported sensor shows open") {
                try hub.sensor("sensor 199")?.status == "open"
            }
            #expect(try hub.registry().sensors.count == 201)
            await hub.stop()
        }
    }
}
