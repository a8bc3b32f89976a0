import HubCore
import HubTestKit
import Testing

/// Value maps, number formatting, and how a device's payload becomes a status, a number and attributes.
@Suite struct ValueFormatTests {
    func format(
        _ path: String? = nil, map: String? = nil, unit: String? = nil, decimals: Int? = nil,
        range: ClosedRange<Double>? = nil
    ) throws -> ValueFormat {
        ValueFormat(
            path: try path.map { try ValuePath($0) }, map: try map.map { try ValueMap($0) }, unit: unit,
            decimals: decimals, range: range)
    }

    func decoded(_ result: Result<ValueFormat.Decoded, ValueFormat.Problem>) -> ValueFormat.Decoded? {
        if case .success(let decoded) = result { return decoded }
        Issue.record("expected a value, got \(result)")
        return nil
    }

    func problem(_ result: Result<ValueFormat.Decoded, ValueFormat.Problem>) -> ValueFormat.Problem? {
        if case .failure(let problem) = result { return problem }
        return nil
    }

    // MARK: Value maps

    @Test func mapsMatchIgnoringCaseAndLetOtherValuesThrough() throws {
        let map = try ValueMap("true=closed,false=open")
        #expect(map.entries.map(\.from) == ["true", "false"])
        #expect(map.statuses == ["closed", "open"])
        #expect(map.status(for: "true") == "closed")
        #expect(map.status(for: "FALSE") == "open")
        #expect(map.status(for: "maybe") == nil)
        #expect(map.status(for: "tru") == nil)
        #expect(map.description == "true=closed,false=open")
        let spaced = try ValueMap(" ON = motion , OFF=clear ")
        #expect(spaced.statuses == ["motion", "clear"])
        #expect(spaced.status(for: "on") == "motion")
        #expect(spaced.description == "ON=motion,OFF=clear")
        #expect(try ValueMap("Straße=street").status(for: "STRASSE") == nil)
        #expect(try ValueMap("1=open,0=closed").status(for: "0") == "closed")
    }

    @Test(arguments: [
        ("", 1, "an entry is missing here"),
        ("true", 1, "expected 'value=status', like true=closed"),
        ("true=closed,false", 13, "expected 'value=status', like true=closed"),
        ("true=closed,,false=open", 13, "an entry is missing here"),
        ("true=closed,", 13, "an entry is missing here"),
        ("=closed", 1, "the value before '=' is missing"),
        ("true=", 5, "the status after '=' is missing"),
        ("on=motion,off= ", 14, "the status after '=' is missing"),
        ("true=closed,TRUE=open", 13, "'TRUE' is mapped twice"),
        ("ON=motion,OFF=clear,on=x", 21, "'on' is mapped twice"),
    ])
    func mapErrorsNameThePosition(text: String, position: Int, reason: String) {
        let error = #expect(throws: ValuePathError.self) { try ValueMap(text) }
        #expect(error?.position == position)
        #expect(error?.reason == reason)
    }

    @Test func aMappedStatusWithControlCharactersIsRefused() {
        let error = #expect(throws: ValuePathError.self) { try ValueMap("on=a\u{1B}[2J") }
        #expect(error?.position == 1)
        #expect(error?.reason.hasPrefix("the status contains a control character") == true)
    }

    // MARK: Numbers

    @Test(arguments: [
        (22.6, "22.6"), (3000, "3000"), (27.34, "27.34"), (0.05, "0.05"), (-0.001, "0"), (21.344, "21.34"),
        (-5.5, "-5.5"), (100, "100"), (0, "0"), (1004.2, "1004.2"), (1e12, "1000000000000"),
    ])
    func numbersShowAsPublishedWithAtMostTwoDecimals(number: Double, text: String) {
        #expect(ValueFormat().format(number) == text)
    }

    /// A number is shown with the decimals it was published with (at most two): Tasmota's `22.0` and ESPHome's
    /// `22.0` stay `22.0`, Zigbee2MQTT's `22` stays `22`; `--decimals` still decides when set.
    @Test(arguments: [
        (#"{"t":22.0}"#, "22.0"), (#"{"t":22}"#, "22"), (#"{"t":22.50}"#, "22.50"), (#"{"t":21.456}"#, "21.46"),
        (#"{"t":2.2e1}"#, "22"), (#"{"t":-0.0}"#, "0.0"),
    ])
    func jsonNumbersKeepTheirPublishedDecimals(payload: String, shown: String) throws {
        #expect(decoded(try format("t").decode(payload, numeric: true))?.status == shown)
    }

    @Test func plainNumbersKeepTheirPublishedDecimals() throws {
        #expect(decoded(ValueFormat().decode("22.0", numeric: true))?.status == "22.0")
        #expect(decoded(ValueFormat().decode(" 7 ", numeric: true))?.status == "7")
        #expect(decoded(ValueFormat(decimals: 0).decode("22.0", numeric: true))?.status == "22")
        // A map looks the number up as written without its zeros: `1.0` is `1`.
        #expect(decoded(try format("s", map: "1=on,0=off").decode(#"{"s":1.0}"#, numeric: false))?.status == "on")
        #expect(ValueFormat.places(writtenIn: "22.0") == 1 && ValueFormat.places(writtenIn: "1e3") == nil)
    }

    @Test func decimalsFixThePrecision() {
        let one = ValueFormat(decimals: 1)
        #expect(one.format(22.6) == "22.6")
        #expect(one.format(3) == "3.0")
        #expect(one.format(21.34) == "21.3")
        #expect(one.format(-0.04) == "0.0")
        #expect(ValueFormat(decimals: 0).format(22.6) == "23")
        #expect(ValueFormat(decimals: 0).format(-0.4) == "0")
        #expect(ValueFormat(decimals: 3).format(2.995) == "2.995")
    }

    @Test func unitsAreShownAfterTheStatus() {
        #expect(ValueFormat(unit: "°C").withUnit("22.6") == "22.6 °C")
        #expect(ValueFormat(unit: "%").withUnit("44") == "44%")
        #expect(ValueFormat(unit: "").withUnit("1") == "1")
        #expect(ValueFormat().withUnit("open") == "open")
    }

    // MARK: Decoding, by device family

    @Test func zigbee2mqttContactWithAMap() throws {
        let contact = try format("contact", map: "true=closed,false=open")
        let open = try #require(decoded(contact.decode(DeviceFixtures.zigbee2mqttContactOpen, numeric: false)))
        #expect(open.status == "open" && open.number == nil)
        #expect(open.attributes.map(\.name) == ["battery", "linkquality", "voltage"])
        #expect(open.attributes["battery"] == .number(97))
        #expect(open.attributes["voltage"]?.description == "3000")
        let closed = try #require(decoded(contact.decode(DeviceFixtures.zigbee2mqttContactClosed, numeric: false)))
        #expect(closed.status == "closed")
        #expect(closed.attributes["linkquality"] == .number(117))
        // Without a map, the value as it is.
        let raw = try #require(decoded(format("contact").decode(DeviceFixtures.zigbee2mqttContactOpen, numeric: false)))
        #expect(raw.status == "false")
    }

    @Test func tasmotaTemperatureIsNumeric() throws {
        let payload = #"{"Time":"2024-05-01T10:00:00","AM2301":{"Temperature":22.6,"Humidity":32.4},"TempUnit":"C"}"#
        let temperature = try format("AM2301.Temperature", unit: "°C")
        let value = try #require(decoded(temperature.decode(payload, numeric: true)))
        #expect(value.status == "22.6" && value.number == 22.6)
        #expect(value.attributes.map(\.name) == ["Time", "AM2301.Humidity", "TempUnit"])
        #expect(value.attributes["AM2301.Humidity"] == .number(32.4))
        #expect(value.attributes["Time"] == .string("2024-05-01T10:00:00"))
        let pointer = try #require(decoded(format("/AM2301/Temperature").decode(payload, numeric: true)))
        #expect(pointer == value)
    }

    @Test func tasmotaZigbeeContactThroughAnUnknownKey() throws {
        let contact = try format("ZbReceived.*.Contact", map: "0=closed,1=open")
        let closed = try #require(
            decoded(contact.decode(DeviceFixtures.tasmotaZbReceivedContactClosed, numeric: false)))
        #expect(closed.status == "closed" && closed.number == 0)
        #expect(
            closed.attributes.map(\.name) == [
                "ZbReceived.0x662E.Device", "ZbReceived.0x662E.Name", "ZbReceived.0x662E.Endpoint",
                "ZbReceived.0x662E.LinkQuality",
            ])
        let open = try #require(decoded(contact.decode(DeviceFixtures.tasmotaZbReceivedContactOpen, numeric: false)))
        #expect(open.status == "open")
    }

    @Test func shellyTemperature() throws {
        let value = try #require(
            decoded(format("tC", unit: "°C").decode(#"{"id":0,"tC":19.8,"tF":67.6}"#, numeric: true)))
        #expect(value.status == "19.8" && value.number == 19.8)
        #expect(value.attributes.map(\.name) == ["id", "tF"])
        let one = try #require(decoded(format("tC", decimals: 1).decode(#"{"tC":20}"#, numeric: true)))
        #expect(one.status == "20.0")
        let relay = try #require(
            decoded(format("output", map: "true=on,false=off").decode(DeviceFixtures.shellySwitchOff, numeric: false)))
        #expect(relay.status == "off")
        #expect(relay.attributes["aenergy.by_minute[1]"] == .number(104.5))
        #expect(relay.attributes["temperature.tC"] == .number(42.9))
    }

    @Test func esphomePlainPayloads() throws {
        let temperature = try #require(decoded(ValueFormat().decode(DeviceFixtures.esphomeTemperature, numeric: true)))
        #expect(temperature.status == "22.5" && temperature.number == 22.5 && temperature.attributes.isEmpty)
        let motion = try format(map: "ON=motion,OFF=clear")
        #expect(decoded(motion.decode("ON", numeric: false))?.status == "motion")
        #expect(decoded(motion.decode("off", numeric: false))?.status == "clear")
        #expect(decoded(motion.decode("unavailable", numeric: false))?.status == "unavailable")
        // A string value that is a number, for a numeric sensor.
        #expect(decoded(try format("t").decode(#"{"t":"21.5"}"#, numeric: true))?.number == 21.5)
    }

    // MARK: Attributes

    @Test func attributesKeepThePayloadsOrderAndLeaveTheValueOut() throws {
        let payload = #"{"z":1,"value":2,"a":{"b":[true,"x",null],"value":3},"m":null}"#
        let value = try #require(decoded(format("value").decode(payload, numeric: true)))
        #expect(value.attributes.map(\.name) == ["z", "a.b[0]", "a.b[1]", "a.value"])
        #expect(value.attributes.map(\.value) == [.number(1), .bool(true), .string("x"), .number(3)])
        // Only the leaf the value came from is left out, not another leaf of the same name.
        let nested = try #require(decoded(format("a.value").decode(payload, numeric: true)))
        #expect(nested.attributes.map(\.name) == ["z", "value", "a.b[0]", "a.b[1]"])
        // A key with a dot is named so it reads back.
        let dotted = try #require(decoded(format("v").decode(#"{"v":1,"a.b":2}"#, numeric: true)))
        #expect(dotted.attributes.map(\.name) == [#"a\.b"#])
    }

    @Test func atMost64Attributes() throws {
        let members = (0..<100).map { "\"k\($0)\":\($0)" }.joined(separator: ",")
        let first = try #require(decoded(format("k0").decode("{\(members)}", numeric: true)))
        #expect(first.attributes.count == ValueFormat.maximumAttributes)
        #expect(first.attributes.first?.name == "k1" && first.attributes.last?.name == "k64")
        let last = try #require(decoded(format("k99").decode("{\(members)}", numeric: true)))
        #expect(last.attributes.count == 64 && last.attributes.last?.name == "k63")
    }

    @Test func controlCharactersInAttributesAreEscaped() throws {
        let payload = #"{"v":1,"name":"a\u001b[2Jb","k\u0007":"x","bidi":"\u202eevil"}"#
        let value = try #require(decoded(format("v").decode(payload, numeric: true)))
        #expect(value.attributes.map(\.name) == ["name", #"k\u{7}"#, "bidi"])
        #expect(value.attributes["name"] == .string(#"a\u{1B}[2Jb"#))
        #expect(value.attributes["bidi"] == .string(#"\u{202E}evil"#))
    }

    // MARK: Problems

    @Test(arguments: [
        ("contact", false, "open", ValueFormat.Problem.notJSON),
        ("contact", false, #"{"contact":"#, .notJSON),
        ("contact", false, "[1,]", .notJSON),
        ("contact", false, #"{"battery":97}"#, .missingValue),
        ("contact", false, #"{"contact":null}"#, .missingValue),
        ("contact", false, "[true]", .missingValue),
        ("contact", false, #"{"contact":{"state":true}}"#, .wrongType),
        ("contact", false, #"{"contact":[true]}"#, .wrongType),
        ("contact", false, #"{"contact":"a\u001bb"}"#, .controlCharacters),
        ("contact", false, #"{"contact":"line\nbreak"}"#, .controlCharacters),
        ("t", true, #"{"t":true}"#, .wrongType),
        ("t", true, #"{"t":"nan"}"#, .notANumber),
        ("t", true, #"{"t":"inf"}"#, .notANumber),
        ("t", true, #"{"t":"-Infinity"}"#, .notANumber),
        ("t", true, #"{"t":"warm"}"#, .notANumber),
        ("t", true, #"{"t":""}"#, .notANumber),
        ("t", true, #"{"t":1e13}"#, .outOfRange),
        ("t", true, #"{"t":-1e13}"#, .outOfRange),
        ("t", true, #"{"t":"2e13"}"#, .outOfRange),
        ("t", false, #"{"t":1e13}"#, .outOfRange),
    ])
    func badPayloadsAreProblems(path: String, numeric: Bool, payload: String, expected: ValueFormat.Problem) throws {
        #expect(problem(try format(path).decode(payload, numeric: numeric)) == expected)
    }

    @Test func plainPayloadProblems() {
        #expect(problem(ValueFormat().decode(DeviceFixtures.esphomeSensorNaN, numeric: true)) == .notANumber)
        #expect(problem(ValueFormat().decode(DeviceFixtures.esphomeSensorNone, numeric: true)) == .notANumber)
        #expect(problem(ValueFormat().decode("inf", numeric: true)) == .notANumber)
        #expect(problem(ValueFormat().decode("22.5 °C", numeric: true)) == .notANumber)
        #expect(problem(ValueFormat().decode("1e13", numeric: true)) == .outOfRange)
        #expect(problem(ValueFormat().decode("a\u{7}", numeric: false)) == .controlCharacters)
    }

    @Test func aRangeRefusesImplausibleNumbers() throws {
        let humidity = try format("rh", range: 0...100)
        #expect(problem(humidity.decode(#"{"rh":300}"#, numeric: true)) == .outOfRange)
        #expect(problem(humidity.decode(#"{"rh":-0.5}"#, numeric: true)) == .outOfRange)
        #expect(decoded(humidity.decode(#"{"rh":100}"#, numeric: true))?.status == "100")
        #expect(decoded(humidity.decode(#"{"rh":0}"#, numeric: true))?.status == "0")
        #expect(problem(try format(range: -40...80).decode("85", numeric: true)) == .outOfRange)
    }

    /// Valid JSON over the limit is refused for its size, not called "not JSON"; at the limit it is read.
    @Test func aPayloadTooLongForAJSONSensorIsRefusedForItsSize() throws {
        let frame = #"{"v":1,"pad":""}"#
        let long = #"{"v":1,"pad":""# + String(repeating: "x", count: ValueFormat.maximumPayload) + #""}"#
        #expect(problem(try format("v").decode(long, numeric: true)) == .payloadTooLong)
        #expect(ValueFormat.Problem.payloadTooLong.rawValue.contains("16 KiB"))
        #expect(ValueFormat.maximumPayload == 16 * 1024)
        let fits =
            #"{"v":1,"pad":""# + String(repeating: "x", count: ValueFormat.maximumPayload - frame.utf8.count)
            + #""}"#
        #expect(fits.utf8.count == ValueFormat.maximumPayload)
        #expect((try format("v").decode(fits, numeric: true)).map(\.status) == .success("1"))
    }

    @Test func everyProblemSaysWhatIsWrong() {
        #expect(Set(ValueFormat.Problem.allCases.map(\.rawValue)).count == ValueFormat.Problem.allCases.count)
        #expect(ValueFormat.Problem.allCases.allSatisfy { !$0.rawValue.isEmpty })
    }
}
