import HubCore
import Testing

/// A document split into a header and one JSON object a sensor (how PostgreSQL keeps the registry) and put back
/// together: the same document, with only what a change touched to write.
@Suite struct DocumentRowsTests {
    static let file = """
        {"schemaVersion": 1, "future": {"a": [1, "x"]}, "broker": {"host": "h", "port": 1883, "clientId": "c"},
         "sensors": [
          {"id": "0000000000a1", "name": "Kitchen", "topic": "k", "status": "open", "added": "2026-11-22T10:00:00.000Z", "sequence": 3},
          {"id": "0000000000b2", "name": "hall", "topic": "h/s", "status": "Waiting", "added": "2026-11-22T10:01:00.000Z", "colour": "red"},
          {"id": "0000000000c3", "name": "shed", "topic": "s", "status": "closed", "added": "2026-11-22T10:02:00.000Z", "kind": "status"}
         ]}
        """

    @Test func aDocumentSplitAndJoinedIsTheSame() throws {
        let document = try DefaultsDocument.decode(Array(Self.file.utf8))
        // Read from a file, nothing is changed yet.
        #expect(document.changedSensorRows().isEmpty)
        // Split the way a database keeps it, every sensor written as it is now.
        var all = DefaultsDocument()
        for sensor in document.sensors { _ = try all.addSensor(named: sensor.name, topic: sensor.topic) }
        let rows = all.changedSensorRows()
        #expect(rows.map(\.topic) == ["k", "h/s", "s"] && rows.map(\.nameKey) == ["kitchen", "hall", "shed"])
        // Joined again from the original's own pieces.
        let original = try DefaultsDocument.decode(Array(Self.file.utf8))
        let pieces = try DefaultsDocument.decode(
            header: original.headerJSON(), sensors: Self.sensorObjects(of: original))
        #expect(pieces == original)
        #expect(pieces.sensor(named: "HALL")?.id == "0000000000b2")
        // The unknown keys (top level and a sensor's) came through.
        #expect(String(decoding: pieces.encode(), as: UTF8.self).contains(#""future": {"a": [1, "x"]}"#))
        #expect(String(decoding: pieces.encode(), as: UTF8.self).contains(#""colour": "red""#))
        #expect(pieces.changedSensorRows().isEmpty)
    }

    @Test func onlyWhatAChangeTouchedIsWritten() throws {
        let original = try DefaultsDocument.decode(Array(Self.file.utf8))
        var document = try DefaultsDocument.decode(
            header: original.headerJSON(), sensors: Self.sensorObjects(of: original))
        let before = document.sensorIDs
        document.recordStatus("closed", lastUpdated: .now, onTopic: "k", sequence: 4)
        try document.removeSensor(named: "shed")
        let added = try document.addSensor(named: "attic")
        let rows = document.changedSensorRows()
        #expect(rows.map(\.id) == ["0000000000a1", added.id])
        #expect(before.subtracting(document.sensorIDs) == ["0000000000c3"])
        // What is written reads back as the sensor it came from.
        let again = try DefaultsDocument.decode(header: document.headerJSON(), sensors: [rows[0].json])
        #expect(again.sensor(named: "kitchen")?.status == "closed" && again.sensor(named: "kitchen")?.sequence == 4)
    }

    @Test func aDamagedRowIsAnError() throws {
        let header = DefaultsDocument().headerJSON()
        #expect(throws: JSONSyntaxError.self) {
            try DefaultsDocument.decode(header: header, sensors: [Array(#"{"name": "x"}"#.utf8)])
        }
        #expect(throws: JSONSyntaxError.self) {
            let row = Array(
                #"{"id": "00000000000a", "name": "x", "topic": "t", "added": "2026-11-22T10:00:00.000Z"}"#.utf8)
            try DefaultsDocument.decode(header: header, sensors: [row, row])
        }
    }

    static func sensorObjects(of document: DefaultsDocument) -> [[UInt8]] { document.sensorRows().map(\.json) }
}
