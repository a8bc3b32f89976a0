import Foundation
import HubCore
import Testing

/// The document's JSON: what it reads, what it refuses (and where), what it keeps that it does not know.
@Suite struct DefaultsDocumentTests {
    static let sample = """
        {
          "schemaVersion": 1,
          "broker": {"host": "broker.lan", "port": 8883, "clientId": "hub", "username": "hub", "passwordFile": "broker-password", "tls": {"caFile": "/etc/ca.pem", "verifyHostname": true}},
          "sensors": [
            {"id": "0a1b2c3d4e5f", "name": "kitchen", "topic": "kitchen", "status": "open", "lastUpdated": "2026-11-22T10:03:00.000Z", "added": "2026-11-20T08:00:00.000Z", "kind": "status", "sequence": 7},
            {"id": "00000000abcd", "name": "Küche oben", "topic": "home/küche", "status": "says \\"hi\\"\\n", "added": "2026-11-21T08:00:00.000Z", "kind": "particulate", "silenceTimeout": 600}
          ]
        }

        """

    func decode(_ text: String) throws -> DefaultsDocument { try DefaultsDocument.decode(Array(text.utf8)) }

    @Test func readsEveryField() throws {
        let document = try decode(Self.sample)
        #expect(document.broker.host == "broker.lan")
        #expect(document.broker.port == 8883)
        #expect(document.broker.tls?.caFile == "/etc/ca.pem")
        #expect(document.sensors.count == 2)
        let kitchen = try #require(document.sensor(named: "KITCHEN"))
        #expect(kitchen.status == "open")
        #expect(kitchen.lastUpdated == Timestamp(iso8601: "2026-11-22T10:03:00.000Z"))
        let other = try #require(document.sensor(onTopic: "home/küche"))
        #expect(other.name == "Küche oben")
        #expect(other.status == "says \"hi\"\n")
        #expect(other.kind == .particulate)
        #expect(other.silenceTimeout == .seconds(600))
        #expect(other.lastUpdated == nil)
    }

    @Test func writesWhatItReadsByteForByte() throws {
        #expect(String(decoding: try decode(Self.sample).encode(), as: UTF8.self) == Self.sample)
        let kitchen = try #require(try decode(Self.sample).sensor(named: "kitchen"))
        #expect(kitchen.id == "0a1b2c3d4e5f" && kitchen.sequence == 7)
    }

    /// A registry written before sensors had ids: every reader gives each sensor the same id, the next write keeps
    /// it, and a rename does not change it.
    @Test func sensorsWithoutIdsGetOneThatStays() throws {
        let old = """
            {"schemaVersion": 1, "broker": {"host": "h", "port": 1883, "clientId": "c"},
             "sensors": [{"name": "a", "topic": "a", "status": "s", "added": "2026-11-22T10:03:00.000Z", "kind": "status"},
                         {"name": "b", "topic": "b", "status": "s", "added": "2026-11-22T10:03:00.000Z", "kind": "status"}]}
            """
        var first = try decode(old)
        let ids = first.sensors.map(\.id)
        #expect(try decode(old).sensors.map(\.id) == ids)
        #expect(Set(ids).count == 2 && ids.allSatisfy { $0.count == 12 })
        try first.renameSensor("a", to: "c")
        let written = try DefaultsDocument.decode(first.encode())
        #expect(written.sensors.map(\.id) == ids)
        // A new sensor gets a random id of its own.
        try first.addSensor(named: "d")
        #expect(!ids.contains(try #require(first.sensor(named: "d")).id))
    }

    @Test func anIdIsUniqueAndWellFormed() throws {
        let twice = """
            {"schemaVersion": 1, "sensors": [
              {"id": "0a1b2c3d4e5f", "name": "a", "topic": "a", "added": "2026-11-22T10:03:00.000Z"},
              {"id": "0a1b2c3d4e5f", "name": "b", "topic": "b", "added": "2026-11-22T10:03:00.000Z"}]}
            """
        #expect(throws: JSONSyntaxError.self) { try decode(twice) }
        let malformed =
            #"{"schemaVersion": 1, "sensors": [{"id": "x y", "name": "a", "topic": "a", "added": "2026-11-22T10:03:00.000Z"}]}"#
        #expect(throws: JSONSyntaxError.self) { try decode(malformed) }
    }

    @Test func encodedNewDocumentReadsBack() throws {
        var document = DefaultsDocument()
        try document.addSensor(named: "Küche", topic: "t/ctl \"q\" \\", at: Timestamp(millisecondsSince1970: 5))
        // A status from an old file may hold what the hub refuses now: it is still written and read back exactly
        // (as \u escapes, astral ones as surrogate pairs).
        document.recordStatus(
            "line\nbreak\t\"quoted\" \\ \u{7f}\u{9B}\u{202E}\u{E0041}👨‍👩‍👧",
            lastUpdated: Timestamp(millisecondsSince1970: 6),
            onTopic: "t/ctl \"q\" \\")
        document.broker = BrokerSettings(host: "h", port: 1, username: "u")
        let encoded = document.encode()
        #expect(String(decoding: encoded, as: UTF8.self).contains(#"\u007f\u009b\u202e\udb40\udc41👨‍👩‍👧"#))
        let again = try DefaultsDocument.decode(encoded)
        #expect(again == document)
    }

    @Test func keysItDoesNotKnowAreKeptAsTheyWere() throws {
        let text = """
            {"schemaVersion": 1, "future": {"a": [1, 2.5e3, null, true, "x\\u00e9"]}, "broker": {"host": "h", "port": 1883, "clientId": "c", "color": "blue"},
             "sensors": [{"name": "a", "topic": "a", "status": "s", "added": "2026-11-22T10:03:00.000Z", "kind": "thermometer", "unit": "°C"}]}
            """
        var document = try decode(text)
        try document.addSensor(named: "b", at: Timestamp(millisecondsSince1970: 0))
        let written = String(decoding: document.encode(), as: UTF8.self)
        #expect(written.contains(#""future": {"a": [1, 2.5e3, null, true, "x\u00e9"]}"#))
        #expect(written.contains(#""color": "blue""#))
        #expect(written.contains(#""unit": "°C""#))
        #expect(written.contains(#""kind": "thermometer""#))
        // A changed sensor keeps its unknown keys too.
        document.recordStatus("on", lastUpdated: Timestamp(millisecondsSince1970: 0), onTopic: "a")
        #expect(String(decoding: document.encode(), as: UTF8.self).contains(#""unit": "°C""#))
    }

    @Test(arguments: [
        ("{\"schemaVersion\": 1, \"sensors\": [}", "line 1, column 34: expected an object, found '}'"),
        (
            "{\n  \"schemaVersion\": 1,\n  \"sensors\": [\n    {\"name\": \"a\" \"topic\": \"b\"}\n  ]\n}",
            "line 4, column 18: expected ',' or '}' in an object"
        ),
        ("{\"schemaVersion\": 1", "line 1, column 20: the document ends where ',' or '}' in an object should be"),
        ("", "line 1, column 1: expected an object, found the end of the file"),
        ("[]", "line 1, column 1: expected an object, found a list"),
        ("{\"schemaVersion\": 1} x", "line 1, column 22: unexpected text after the end of the document"),
        ("{\"sensors\": []}", "line 1, column 1: the document has no \"schemaVersion\""),
        (
            "{\"schemaVersion\": 2}",
            "line 1, column 19: schemaVersion 2 was written by a newer SensorHub; this one reads up to 1 — upgrade it, or restore an older copy of the file"
        ),
        ("{\"schemaVersion\": \"1\"}", "line 1, column 19: schemaVersion: expected a whole number, found a string"),
        ("{\"schemaVersion\": 1, \"schemaVersion\": 1}", "line 1, column 22: the key \"schemaVersion\" appears twice"),
        ("{\"schemaVersion\": 1, \"sensors\": {}}", "line 1, column 33: expected a list, found an object"),
        (
            "{\"schemaVersion\": 1, \"sensors\": [{\"name\": 7}]}",
            "line 1, column 43: sensors[0].name: expected a string, found a number"
        ),
        (
            "{\"schemaVersion\": 1, \"sensors\": [{\"name\": \"a\", \"topic\": \"a\"}]}",
            "line 1, column 34: sensors[0] has no \"added\" time"
        ),
        (
            "{\"schemaVersion\": 1, \"sensors\": [{\"name\": \"a/b\", \"topic\": \"a\", \"added\": \"2026-11-22T10:03:00Z\"}]}",
            "line 1, column 43: sensors[0].name: 'a/b' is not a valid sensor name: '/' separates MQTT topic levels and can't be part of a name"
        ),
        (
            "{\"schemaVersion\": 1, \"sensors\": [{\"name\": \"a\", \"topic\": \"a\", \"added\": \"noon\"}]}",
            "line 1, column 71: sensors[0].added: expected a time like 2026-11-22T10:03:00.000Z"
        ),
        (
            "{\"schemaVersion\": 1, \"broker\": {\"port\": 1.5}}",
            "line 1, column 41: broker.port: expected a whole number"
        ),
        ("{\"schemaVersion\": 1, \"x\": \"\\q\"}", "line 1, column 30: '\\q' is not a JSON escape"),
        (
            "{\"schemaVersion\": 1, \"x\": \"a\u{1}\"}",
            "line 1, column 29: a control character inside a string must be escaped"
        ),
        (
            "{\"schemaVersion\": 1, \"x\": tru}",
            "line 1, column 27: this is not true, false or null (JSON's words are lower case)"
        ),
    ])
    func errorsSayWhereAndWhat(text: String, message: String) {
        #expect(throws: JSONSyntaxError.self) { try decode(text) }
        do {
            _ = try decode(text)
        } catch let error as JSONSyntaxError {
            #expect(error.description == message)
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func duplicateNamesAndTopicsInTheFileAreRefused() {
        let sensor = #"{"name": "%@", "topic": "%@", "added": "2026-11-22T10:03:00Z"}"#
        func document(_ sensors: [(String, String)]) -> String {
            let list = sensors.map { String(format: sensor, $0.0, $0.1) }.joined(separator: ", ")
            return #"{"schemaVersion": 1, "sensors": ["# + list + "]}"
        }
        #expect(throws: JSONSyntaxError.self) { try decode(document([("a", "x"), ("A", "y")])) }
        #expect(throws: JSONSyntaxError.self) { try decode(document([("a", "x"), ("b", "x")])) }
    }

    @Test func invalidUTF8IsReportedWhereItIs() {
        var bytes = Array(#"{"schemaVersion": 1, "x": "ab"#.utf8)
        bytes += [0xC3, 0x28]
        bytes += Array(#""}"#.utf8)
        let error = #expect(throws: JSONSyntaxError.self) { try DefaultsDocument.decode(bytes) }
        #expect(error?.description == "line 1, column 30: this string is not valid UTF-8")
    }

    @Test func deepNestingIsRefusedNotACrash() {
        let deep = "{\"schemaVersion\": 1, \"x\": " + String(repeating: "[", count: 100_000) + "}"
        #expect(throws: JSONSyntaxError.self) { try decode(deep) }
    }

    @Test func agreesWithFoundationOnWhatIsJSON() throws {
        // Strings the store may meet in unknown keys: both parsers must accept them and agree on the value.
        let values = [#""\ud83d\ude00""#, #""\u00e9\n\t\"\\\/""#, "-0.5e-3", "1E+2", "[[],{}]", #"{"a":{"b":[null]}}"#]
        for value in values {
            let text = #"{"schemaVersion": 1, "v": "# + value + "}"
            let foundation = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
            #expect(foundation?["v"] != nil)
            let written = String(decoding: try decode(text).encode(), as: UTF8.self)
            #expect(written.contains(value))
        }
        for invalid in ["01", "1.", ".5", "-", #""\ud83d""#, "{\"a\"}", "nul"] {
            let text = #"{"schemaVersion": 1, "v": "# + invalid + "}"
            #expect((try? JSONSerialization.jsonObject(with: Data(text.utf8))) == nil)
            #expect(throws: JSONSyntaxError.self) { try decode(text) }
        }
        // Foundation accepts a trailing comma; JSON (RFC 8259) does not, and neither does the store.
        #expect(throws: JSONSyntaxError.self) { try decode(#"{"schemaVersion": 1, "v": [1,]}"#) }
    }
}
