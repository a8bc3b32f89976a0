import HubCore
import HubTestKit
import Testing

/// The value path language: what it parses, where it says a path goes wrong, and what it finds in real payloads.
@Suite struct ValuePathTests {
    typealias Segment = ValuePath.Segment

    func tree(_ json: String) throws -> JSONTree { try JSONTree.parse(Array(json.utf8)) }

    func find(_ path: String, in json: String) throws -> JSONTree? { try ValuePath(path).find(in: tree(json))?.value }

    // MARK: Parsing

    @Test(arguments: [
        ("contact", [Segment.key("contact")]),
        ("AM2301.Temperature", [.key("AM2301"), .key("Temperature")]),
        ("temperature:0.tC", [.key("temperature:0"), .key("tC")]),
        ("readings[1].value", [.key("readings"), .index(1), .key("value")]),
        ("matrix[0][2]", [.key("matrix"), .index(0), .index(2)]),
        ("[0].value", [.index(0), .key("value")]),
        ("[3]", [.index(3)]),
        ("ZbReceived.*.Contact", [.key("ZbReceived"), .any, .key("Contact")]),
        ("*", [.any]),
        ("readings.1.v", [.key("readings"), .index(1), .key("v")]),
        (#"a\.b"#, [.key("a.b")]),
        (#"a\.b.c"#, [.key("a.b"), .key("c")]),
        (#"x\[1\]"#, [.key("x[1]")]),
        (#"\*"#, [.key("*")]),
        (#"\0"#, [.key("0")]),
        (#"back\\slash"#, [.key(#"back\slash"#)]),
        ("a*b", [.key("a*b")]),
        ("Küche.°C", [.key("Küche"), .key("°C")]),
        // Only a plain decimal is an index: leading zeros, or more digits than an Int holds, make a key.
        ("a.007", [.key("a"), .key("007")]),
        ("a.99999999999999999999", [.key("a"), .key("99999999999999999999")]),
    ])
    func dottedPaths(text: String, segments: [Segment]) throws {
        let path = try ValuePath(text)
        #expect(path.segments == segments)
        #expect(path.description == text)
    }

    @Test(arguments: [
        ("/AM2301/Temperature", [Segment.key("AM2301"), .key("Temperature")]),
        ("/readings/0/value", [.key("readings"), .index(0), .key("value")]),
        ("/a~1b", [.key("a/b")]),
        ("/m~0n", [.key("m~n")]),
        ("/~01", [.key("~1")]),
        ("/a.b", [.key("a.b")]),
        ("/", [.key("")]),
        ("/a/", [.key("a"), .key("")]),
        ("/007", [.key("007")]),
        ("/99999999999999999999", [.key("99999999999999999999")]),
        ("/-", [.key("-")]),
    ])
    func jsonPointers(text: String, segments: [Segment]) throws {
        #expect(try ValuePath(text).segments == segments)
    }

    /// Every error names the character (1-based) where the path goes wrong.
    @Test(arguments: [
        ("", 1, "a value path can't be empty"),
        ("a..b", 3, "a key is missing here"),
        (".a", 1, "a key is missing here"),
        ("a.", 2, "a path can't end with '.'"),
        ("a[", 2, "this '[' is never closed"),
        ("a[1", 2, "this '[' is never closed"),
        ("a[x]", 3, "a list index is a whole number, like [0]"),
        ("a[1x]", 4, "a list index is a whole number, like [0]"),
        ("a[]", 2, "a list index is a whole number, like [0]"),
        ("a]", 2, "']' without a '[' before it"),
        ("a.[0]", 3, "a key is missing here"),
        ("a[0]b", 5, "expected '.' or '[' after ']'"),
        (#"a\"#, 2, "'\\' at the end escapes nothing"),
        ("/a~2", 3, "in a JSON Pointer '~' is written '~0' and '/' '~1'"),
        ("/a/b~", 5, "in a JSON Pointer '~' is written '~0' and '/' '~1'"),
        ("/ab/c~0d~x", 9, "in a JSON Pointer '~' is written '~0' and '/' '~1'"),
    ])
    func errorsNameThePosition(text: String, position: Int, reason: String) {
        let error = #expect(throws: ValuePathError.self) { try ValuePath(text) }
        #expect(error?.position == position)
        #expect(error?.reason == reason)
        #expect(error?.path == text)
        #expect(error?.description == "'\(text)', at character \(position): \(reason)")
    }

    // MARK: Evaluating

    @Test func zigbee2mqttContact() throws {
        let payload = #"{"battery":97,"contact":false,"linkquality":120,"voltage":3000}"#
        let found = try #require(try ValuePath("contact").find(in: tree(payload)))
        #expect(found.value == .bool(false))
        #expect(found.steps == [.key("contact")])
        #expect(try find("contact", in: DeviceFixtures.zigbee2mqttContactClosed) == .bool(true))
        #expect(try find("water_leak", in: DeviceFixtures.zigbee2mqttLeakWet) == .bool(true))
        #expect(try find("humidity", in: DeviceFixtures.zigbee2mqttClimateState) == .number(44.72))
    }

    @Test func tasmotaSensor() throws {
        let payload = #"{"Time":"2024-05-01T10:00:00","AM2301":{"Temperature":22.6,"Humidity":32.4},"TempUnit":"C"}"#
        #expect(try find("AM2301.Temperature", in: payload) == .number(22.6))
        #expect(try find("/AM2301/Temperature", in: payload) == .number(22.6))
        #expect(try find("TempUnit", in: payload) == .string("C"))
        guard case .object(let members)? = try find("AM2301", in: payload) else {
            Issue.record("expected an object")
            return
        }
        #expect(members.map(\.key) == ["Temperature", "Humidity"])
        #expect(try find("AM2301.Pressure", in: payload) == nil)
        #expect(try find("Time.Temperature", in: payload) == nil)
        #expect(try find("DS18B20-2.Temperature", in: DeviceFixtures.tasmotaDS18B20Multiple) == .number(1.2))
    }

    @Test func tasmotaZigbeeWithAnUnknownKey() throws {
        let payload = #"{"ZbReceived":{"0x662E":{"Device":"0x662E","Contact":0,"Endpoint":1}}}"#
        let found = try #require(try ValuePath("ZbReceived.*.Contact").find(in: tree(payload)))
        #expect(found.value == .number(0))
        #expect(found.steps == [.key("ZbReceived"), .key("0x662E"), .key("Contact")])
        #expect(try find("ZbReceived.*.Contact", in: DeviceFixtures.tasmotaZbReceivedByName) == .number(0))
        #expect(try find("ZbReceived.*.Contact", in: DeviceFixtures.tasmotaZbReceivedContactOpen) == .number(1))
        // `*` takes the first key that leads to a value, in the payload's order.
        let two = #"{"ZbReceived":{"0x1111":{"Battery":90},"0x662E":{"Contact":1},"0x7777":{"Contact":0}}}"#
        let second = try #require(try ValuePath("ZbReceived.*.Contact").find(in: tree(two)))
        #expect(second.value == .number(1))
        #expect(second.steps == [.key("ZbReceived"), .key("0x662E"), .key("Contact")])
        #expect(try find("ZbReceived.*.Pressure", in: two) == nil)
    }

    @Test func shellyComponent() throws {
        #expect(try find("tC", in: #"{"id":0,"tC":19.8,"tF":67.6}"#) == .number(19.8))
        #expect(try find("battery.percent", in: DeviceFixtures.shellyDevicePower) == .number(78))
        #expect(try find("params.temperature:0.tC", in: DeviceFixtures.shellyNotifyStatus) == .number(19.9))
        #expect(try find("aenergy.by_minute[2]", in: DeviceFixtures.shellySwitchOn) == .number(205.004))
    }

    @Test func lists() throws {
        let payload = #"{"readings":[{"v":1},{"v":2,"w":"x"}],"matrix":[[1,2],[3,4]]}"#
        #expect(try find("readings[1].v", in: payload) == .number(2))
        #expect(try find("readings.1.v", in: payload) == .number(2))
        #expect(try find("/readings/1/v", in: payload) == .number(2))
        #expect(try find("matrix[1][0]", in: payload) == .number(3))
        #expect(try find("readings[2].v", in: payload) == nil)
        #expect(try find("readings.*.w", in: payload) == .string("x"))
        #expect(try find("readings[0].v[0]", in: payload) == nil)
        #expect(try find("[1]", in: "[10, 20, 30]") == .number(20))
        #expect(try find("[0].v", in: #"[{"v":true}]"#) == .bool(true))
        #expect(try find("*", in: "[null, 5]") == .null)
        // A digit segment on an object is a key; one with a leading zero never reads a list.
        #expect(try find("a.0", in: #"{"a":{"0":"zero"}}"#) == .string("zero"))
        #expect(try find("/a/0", in: #"{"a":{"0":"zero"}}"#) == .string("zero"))
        #expect(try find("a.007", in: #"{"a":{"007":"bond","7":"no"}}"#) == .string("bond"))
        #expect(try find("a.01", in: #"{"a":[5, 6]}"#) == nil)
    }

    @Test func escapedKeysAndPointerEscapes() throws {
        let payload = #"{"a.b":1,"a":{"b":2},"x/y":3,"m~n":4,"*":5,"":6}"#
        #expect(try find(#"a\.b"#, in: payload) == .number(1))
        #expect(try find("a.b", in: payload) == .number(2))
        #expect(try find("/a.b", in: payload) == .number(1))
        #expect(try find("/x~1y", in: payload) == .number(3))
        #expect(try find("/m~0n", in: payload) == .number(4))
        #expect(try find(#"\*"#, in: payload) == .number(5))
        #expect(try find("/", in: payload) == .number(6))
    }

    // MARK: Naming

    @Test func textOfStepsReadsBackAsTheSameSteps() throws {
        let cases: [[Segment]] = [
            [.key("AM2301"), .key("Humidity")],
            [.key("a.b"), .key("c")],
            [.key("x[1]"), .index(2)],
            [.key(#"back\slash"#)],
            [.key("*"), .key("a*")],
            [.key("/dev/ttyUSB0"), .key("rx")],
            [.key("a"), .key(""), .key("b")],
            [.key("")],
            [.index(0), .key("v")],
            [.key("readings"), .index(1)],
        ]
        for steps in cases {
            let text = ValuePath.text(of: steps)
            let path = try ValuePath(text)
            #expect(path.segments == steps, "\(text)")
        }
        #expect(ValuePath.text(of: [.key("AM2301"), .key("Humidity")]) == "AM2301.Humidity")
        #expect(ValuePath.text(of: [.key("a.b"), .key("c")]) == #"a\.b.c"#)
        #expect(ValuePath.text(of: [.key("readings"), .index(1)]) == "readings[1]")
        #expect(ValuePath.text(of: [.key("x"), .any]) == "x.*")
    }

    /// A key the payload has under a name that looks like a path (`a.b`) is found again from its name.
    @Test func textOfStepsFindsTheSameValue() throws {
        let payload = try tree(#"{"a.b":{"c]":1,"/":{"0":2}},"7":[3,{"*":4}],"":{"":5}}"#)
        for steps: [Segment] in [
            [.key("a.b"), .key("c]")], [.key("a.b"), .key("/"), .key("0")], [.key("7"), .index(0)],
            [.key("7"), .index(1), .key("*")], [.key(""), .key("")],
        ] {
            let text = ValuePath.text(of: steps)
            #expect(try ValuePath(text).find(in: payload)?.steps == steps, "\(text)")
        }
    }
}
