import HubCore
import Testing

/// A registry's device fields (`value`, `map`, `unit`, `decimals`, `range`, `availability`, `attributes`): read,
/// written back as they were, refused where they are wrong, absent from registries that never had them.
@Suite struct DeviceRegistryTests {
    static let sample = """
        {
          "schemaVersion": 1,
          "broker": {"host": "broker.lan", "port": 1883, "clientId": "hub"},
          "sensors": [
            {"id": "0a1b2c3d4e5f", "name": "shed door", "topic": "zigbee2mqtt/garden/shed door", "status": "closed", "lastUpdated": "2026-11-22T10:03:00.000Z", "added": "2026-11-20T08:00:00.000Z", "kind": "status", "sequence": 3, "value": "contact", "map": "true=closed,false=open", "availability": "zigbee2mqtt/garden/shed door/availability", "attributes": {"battery": 97, "linkquality": 117, "voltage": 3000}},
            {"id": "00000000abcd", "name": "living room", "topic": "tele/tasmota_A1B2C3/SENSOR", "status": "22.6", "lastUpdated": "2026-11-22T10:04:00.000Z", "added": "2026-11-21T08:00:00.000Z", "kind": "numeric", "silenceTimeout": 600, "value": "AM2301.Temperature", "unit": "°C", "decimals": 1, "range": [-40,80.5], "availability": "tele/tasmota_A1B2C3/LWT", "attributes": {"Time": "2024-05-01T10:00:00", "AM2301.Humidity": 32.4, "TempUnit": "C", "ok": true}, "future": {"x": [1, 2.5e3]}},
            {"id": "00000000abce", "name": "balcony door", "topic": "livingroom/binary_sensor/balcony_door/state", "status": "Waiting", "added": "2026-11-21T08:00:00.000Z", "kind": "status", "value": "/state~1now", "map": "ON=open,OFF=closed", "availability": "livingroom/status"}
          ]
        }

        """

    func decode(_ text: String) throws -> DefaultsDocument { try DefaultsDocument.decode(Array(text.utf8)) }

    /// Attributes as a device's payload gives them.
    func attributes(_ json: String) throws -> SensorAttributes {
        guard case .success(let decoded) = ValueFormat(path: try ValuePath("v")).decode(json, numeric: true) else {
            Issue.record("no value in \(json)")
            return []
        }
        return decoded.attributes
    }

    @Test func readsTheDeviceFields() throws {
        let document = try decode(Self.sample)
        let door = try #require(document.sensor(named: "shed door"))
        #expect(door.format.path == (try ValuePath("contact")))
        #expect(door.format.map?.status(for: "true") == "closed")
        #expect(door.format.unit == nil && door.format.decimals == nil && door.format.range == nil)
        #expect(door.availability == "zigbee2mqtt/garden/shed door/availability")
        #expect(door.attributes.map(\.name) == ["battery", "linkquality", "voltage"])
        #expect(door.attributes["battery"] == .number(97))
        let room = try #require(document.sensor(named: "living room"))
        #expect(room.kind == .numeric)
        #expect(room.format.path?.segments == [.key("AM2301"), .key("Temperature")])
        #expect(room.format.unit == "°C" && room.format.decimals == 1 && room.format.range == -40...80.5)
        #expect(room.attributes["AM2301.Humidity"] == .number(32.4))
        #expect(room.attributes["ok"] == .bool(true))
        #expect(room.attributes["Time"] == .string("2024-05-01T10:00:00"))
        let balcony = try #require(document.sensor(named: "balcony door"))
        #expect(balcony.format.path?.segments == [.key("state/now")])
        #expect(balcony.attributes.isEmpty)
    }

    @Test func writesTheDeviceFieldsBackByteForByte() throws {
        var document = try decode(Self.sample)
        #expect(String(decoding: document.encode(), as: UTF8.self) == Self.sample)
        // Encoded again from the fields (not copied from the file): the same bytes.
        for sensor in document.sensors {
            document.recordStatus(
                sensor.status, lastUpdated: sensor.lastUpdated, onTopic: sensor.topic,
                attributes: try attributes(#"{"v":1,"other":2}"#))
            document.recordStatus(
                sensor.status, lastUpdated: sensor.lastUpdated, onTopic: sensor.topic, attributes: sensor.attributes)
        }
        #expect(String(decoding: document.encode(), as: UTF8.self) == Self.sample)
        #expect(try DefaultsDocument.decode(document.encode()) == document)
    }

    @Test(arguments: [
        ("\"value\": \"a..b\"", "sensors[0].value: 'a..b', at character 3: a key is missing here"),
        ("\"value\": \"\"", "sensors[0].value: '', at character 1: a value path can't be empty"),
        ("\"value\": \"/a~2\"", "sensors[0].value: '/a~2', at character 3: in a JSON Pointer"),
        ("\"value\": 5", "sensors[0].value: expected a string, found a number"),
        ("\"map\": \"true=closed,true=open\"", "sensors[0].map: 'true=closed,true=open', at character 13: 'true'"),
        ("\"decimals\": 7", "sensors[0].decimals: expected 0 to 6"),
        ("\"decimals\": 1.5", "sensors[0].decimals: expected a whole number"),
        ("\"range\": [5, 1]", "sensors[0].range: expected [lowest, highest]"),
        ("\"range\": [1]", "sensors[0].range: expected [lowest, highest]"),
        ("\"range\": [null, 1]", "sensors[0].range: expected [lowest, highest]"),
        ("\"range\": 5", "sensors[0].range: expected [lowest, highest]"),
        ("\"availability\": \"zigbee2mqtt/+/availability\"", "sensors[0].availability: "),
        ("\"availability\": \"\"", "sensors[0].availability: "),
        ("\"attributes\": [1]", "sensors[0].attributes: expected an object, found a list"),
        ("\"attributes\": {\"a\": [1]}", "sensors[0].attributes.a: expected true or false"),
    ])
    func invalidDeviceFieldsAreRefusedNamingTheField(member: String, message: String) {
        let text = """
            {"schemaVersion": 1, "sensors": [{"name": "a", "topic": "a", "added": "2026-11-22T10:03:00Z", \(member)}]}
            """
        let error = #expect(throws: JSONSyntaxError.self) { try decode(text) }
        #expect(error?.message.hasPrefix(message) == true, "\(error?.message ?? "")")
    }

    @Test func anOldRegistryIsUnchanged() throws {
        var document = try decode(DefaultsDocumentTests.sample)
        for sensor in document.sensors {
            #expect(sensor.format.isEmpty && sensor.format == ValueFormat())
            #expect(sensor.availability == nil && sensor.attributes.isEmpty)
        }
        #expect(String(decoding: document.encode(), as: UTF8.self) == DefaultsDocumentTests.sample)
        // Written again after a change: no device keys appear.
        document.recordStatus("closed", lastUpdated: Timestamp(millisecondsSince1970: 0), onTopic: "kitchen")
        let written = String(decoding: document.encode(), as: UTF8.self)
        for key in ["value", "map", "unit", "decimals", "range", "availability", "attributes"] {
            #expect(!written.contains("\"\(key)\""))
        }
        #expect(try DefaultsDocument.decode(document.encode()) == document)
    }

    @Test func keysANewerHubWroteSurviveNextToTheDeviceFields() throws {
        var document = try decode(Self.sample)
        document.recordStatus("23.0", lastUpdated: nil, onTopic: "tele/tasmota_A1B2C3/SENSOR")
        let written = String(decoding: document.encode(), as: UTF8.self)
        #expect(written.contains(#""attributes": {"Time": "2024-05-01T10:00:00", "AM2301.Humidity": 32.4"#))
        #expect(written.contains(#""ok": true}, "future": {"x": [1, 2.5e3]}}"#))
    }

    @Test func recordStatusStoresAttributes() throws {
        var document = try decode(Self.sample)
        let topic = "zigbee2mqtt/garden/shed door"
        let door = try #require(document.sensor(onTopic: topic))
        let fresh = try attributes(#"{"v":1,"battery":96,"linkquality":99,"voltage":2990}"#)
        // The same status, newer attributes: a change to store.
        let revision = document.revision
        let recorded = document.recordStatus(
            door.status, lastUpdated: door.lastUpdated, onTopic: topic, attributes: fresh)
        #expect(recorded)
        #expect(document.revision != revision)
        #expect(document.sensor(onTopic: topic)?.attributes == fresh)
        #expect(document.sensor(onTopic: topic)?.attributes["battery"] == .number(96))
        // The same again: nothing to store.
        let unchanged = document.revision
        document.recordStatus(door.status, lastUpdated: door.lastUpdated, onTopic: topic, attributes: fresh)
        #expect(document.revision == unchanged)
        // No attributes given: those stored stay.
        document.recordStatus("open", lastUpdated: door.lastUpdated, onTopic: topic)
        #expect(document.sensor(onTopic: topic)?.attributes == fresh)
        let again = try DefaultsDocument.decode(document.encode())
        #expect(again.sensor(onTopic: topic)?.attributes == fresh)
        #expect(again.sensor(onTopic: topic)?.status == "open")
    }

    /// The journal keeps attributes as compact JSON text and reads them back the same.
    @Test func attributesAsJSONTextReadBack() throws {
        let kept = try attributes(#"{"v":1,"a.b":"x\u001by","n":-2.5,"t":false,"big":1e300}"#)
        #expect(kept.jsonText == #"{"a\\.b":"x\\u{1B}y","n":-2.5,"t":false,"big":1e+300}"#)
        #expect(SensorAttributes(jsonText: kept.jsonText) == kept)
        #expect(SensorAttributes(jsonText: "{}") == [])
        #expect(SensorAttributes(jsonText: "[1]") == nil)
        #expect(SensorAttributes(jsonText: #"{"a":1} x"#) == nil)
    }
}
