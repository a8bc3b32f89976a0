import Foundation
import HubCore
import Testing

/// The import and export shapes on their own: CSV quoting and line numbers, YAML lines, JSON indices, sniffing.
@Suite struct SensorListTests {
    @Test func csvReadsQuotedFieldsAndCountsLinesFromTheRecordsStart() {
        let text = "\u{FEFF}topic,name\r\n\"a,\"\"b\"\"\",one\r\n\"x\ny\",two\n\nz,\"th\"\"ree\"\n"
        let (entries, problems) = SensorList.parse(text, as: .csv)
        #expect(problems.isEmpty)
        #expect(entries.map(\.name) == ["one", "two", "th\"ree"])
        #expect(entries.map(\.topic) == ["a,\"b\"", "x\ny", "z"])
        #expect(entries.map(\.location) == ["line 2", "line 3", "line 6"])
        #expect(SensorList.parse("name\n\"open", as: .csv).problems == ["line 2: a quoted field is not closed"])
    }

    @Test func yamlItemsAreLocatedByLineAndJSONByIndex() {
        let yaml = SensorList.parse(
            "# sensors\n- name: a\n  kind: particulate\n- name: b\n  silenceTimeout: 90\n", as: .yaml)
        #expect(yaml.entries.map(\.location) == ["line 2", "line 4"])
        #expect(yaml.entries.map(\.kind) == [.particulate, nil])
        #expect(yaml.entries.last?.silenceTimeout == .seconds(90))
        let json = SensorList.parse(#"[{"name": "a", "silenceTimeout": 30}, {"name": "b", "topic": null}]"#, as: .json)
        #expect(json.entries.map(\.location) == ["[0]", "[1]"])
        #expect(json.entries.first?.silenceTimeout == .seconds(30) && json.entries.last?.topic == nil)
    }

    @Test(arguments: [
        ("name,topic\na,b\n", SensorList.Format.csv), ("name\na\n", .csv), ("  [{\"name\": \"a\"}]", .json),
        ("- name: a\n", .yaml), ("name: a\n", .yaml),
    ])
    func theFormatIsToldByTheText(text: String, format: SensorList.Format) {
        #expect(SensorList.Format(sniffing: text) == format)
    }

    @Test func aFileNamesItsFormat() {
        #expect(SensorList.Format(fileName: "/x/all.YML") == .yaml)
        #expect(SensorList.Format(fileName: "s.csv") == .csv && SensorList.Format(fileName: "s.txt") == nil)
    }

    /// A device's fields: a JSON number for decimals, a range kept exactly (not rounded to the decimals), no known
    /// field's defaults added to what the file says, and every bad field named with its place.
    @Test func deviceFieldsAreReadAsWrittenAndCheckedLikeHubctlsOptions() throws {
        let json = #"[{"name":"x","value":"temperature","decimals":0,"range":"-40.5..85.25","map":""}]"#
        let (entries, problems) = SensorList.parse(json, as: .json)
        #expect(problems.isEmpty && entries.first?.problem == nil, "\(entries)")
        let format = try #require(entries.first?.format)
        #expect(format.decimals == 0 && format.rangeText == "-40.5..85.25" && format.map == nil && format.unit == nil)
        let bad = SensorList.parse("name,value,decimals\na,x..y,\nb,x,1.5\n", as: .csv).entries.map(\.problem)
        #expect(
            bad == [
                "line 2: value 'x..y', at character 3: a key is missing here",
                "line 3: decimals '1.5' is not a whole number from 0 to 6",
            ])
    }
}
