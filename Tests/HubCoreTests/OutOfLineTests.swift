@testable import HubCore
import HubSupport
import Testing

/// The boxed fields of a sensor: shared until changed, changed in place when not shared, compared by value.
@Suite struct OutOfLineTests {
    @Test func aCopyIsIndependentOfTheOriginal() {
        var a = OutOfLine([1, 2])
        let b = a
        #expect(a.isSame(as: b))
        a.value.append(3)
        #expect(!a.isSame(as: b))
        #expect(a.value == [1, 2, 3] && b.value == [1, 2])
        // Equal by value, whether or not the box is shared.
        #expect(OutOfLine([1]) == OutOfLine([1]) && OutOfLine([1]) != OutOfLine([2]))
        #expect(OutOfLine([1]).hashValue == OutOfLine([1]).hashValue)
    }

    /// A box nobody else holds is changed where it is: the array inside it is not copied either.
    @Test func anUnsharedBoxChangesInPlace() {
        var a = OutOfLine([Int](repeating: 0, count: 1000))
        let before = a.value.withUnsafeBufferPointer { $0.baseAddress }
        a.value[5] = 1
        let after = a.value.withUnsafeBufferPointer { $0.baseAddress }
        #expect(before == after)
    }

    /// A sensor's device fields live in the box: setting them, equality and a sensor that never had them.
    @Test func sensorsCompareByTheirFieldsWhereverTheyAre() {
        let added = Timestamp(millisecondsSince1970: 0)
        var plain = Sensor(name: "kitchen", topic: "kitchen", added: added)
        let copy = plain
        plain.attributes = [.init(name: "battery", value: .number(90))]
        #expect(plain != copy && copy.attributes.isEmpty)
        plain.attributes = []
        #expect(plain == copy)
        plain.alerts.append("hot")
        #expect(plain.alerts == ["hot"] && copy.alerts.isEmpty)
    }

    /// What the box is for: a plain sensor, read from the registry or given its defaults again, holds the one shared
    /// box, not one of its own; a sensor with device fields has its own.
    @Test func plainSensorsShareOneBox() throws {
        let json = """
            {"schemaVersion": 1, "sensors": [
              {"name": "door", "topic": "door", "status": "open", "added": "2026-11-22T10:00:00.000Z"},
              {"name": "plug", "topic": "plug", "status": "on", "added": "2026-11-22T10:00:00.000Z",
               "attributes": {"battery": 90}}
            ]}
            """
        let document = try DefaultsDocument.decode(Array(json.utf8))
        var door = try #require(document.sensor(named: "door"))
        let plug = try #require(document.sensor(named: "plug"))
        #expect(door.extras.isSame(as: Sensor.Extras.none) && !plug.extras.isSame(as: Sensor.Extras.none))
        door.attributes = []
        door.format = ValueFormat()
        #expect(door.extras.isSame(as: Sensor.Extras.none))
    }
}
