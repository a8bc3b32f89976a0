import Foundation
import HubCore
import Testing

/// Names and topics: what is allowed, and what the user is told when it is not.
@Suite struct SensorRulesTests {
    @Test(arguments: [
        ("kitchen", "kitchen"),
        ("front door", "front door"),
        ("  garage  ", "garage"),
        ("sensor-1_a.b", "sensor-1_a.b"),
        ("Küche", "Küche"),
        ("厨房", "厨房"),
        ("रसोई", "रसोई"),  // Devanagari: letters with vowel signs (marks)
        ("Ελληνικά 2", "Ελληνικά 2"),
        (String(repeating: "x", count: 64), String(repeating: "x", count: 64)),
        ("Ku\u{0308}che", "K\u{00FC}che"),  // decomposed ü is stored composed
    ])
    func goodNames(typed: String, stored: String) throws {
        #expect(try SensorRules.name(typed) == stored)
    }

    @Test(arguments: [
        ("", "a sensor name can't be empty"),
        ("   ", "a sensor name can't be empty"),
        (String(repeating: "x", count: 65), "it is 65 characters long; names have at most 64"),
        ("home/kitchen", "'/' separates MQTT topic levels and can't be part of a name"),
        ("a+b", "'+' is an MQTT wildcard and can't be part of a name"),
        ("all#", "'#' is an MQTT wildcard and can't be part of a name"),
        ("$SYS", "names can't start with '$', which MQTT reserves for the broker's own topics"),
        ("tab\there", "it " + controlCharacter("U+0009")),
        ("bell\u{07}", "it " + controlCharacter("U+0007")),
        ("evil\u{202E}txt.exe", "it " + formattingCharacter("U+202E")),
        ("\u{FEFF}kitchen", "it " + formattingCharacter("U+FEFF")),
        ("a\u{2066}b", "it " + formattingCharacter("U+2066")),
        ("smile😀", "'😀' can't be part of a name; use letters, digits, spaces, '-', '_' and '.'"),
        ("a:b", "':' can't be part of a name; use letters, digits, spaces, '-', '_' and '.'"),
    ])
    func badNames(typed: String, reason: String) {
        #expect(throws: RegistryError.self) { try SensorRules.name(typed) }
        do {
            _ = try SensorRules.name(typed)
        } catch {
            guard case .invalidName(_, let actual) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(actual == reason)
        }
    }

    @Test func namesDifferingOnlyInCaseOrNormalisationAreOneSensor() throws {
        var document = DefaultsDocument()
        try document.addSensor(named: "Kitchen", at: Timestamp(millisecondsSince1970: 0))
        for other in ["kitchen", "KITCHEN", " kitchen "] {
            #expect(
                throws: RegistryError.duplicateName(
                    new: other.trimmingCharacters(in: .whitespaces), existing: "Kitchen")
            ) {
                try document.addSensor(named: other)
            }
        }
        try document.addSensor(named: "K\u{00FC}che", at: Timestamp(millisecondsSince1970: 0))
        #expect(throws: RegistryError.duplicateName(new: "Küche", existing: "Küche")) {
            try document.addSensor(named: "Ku\u{0308}che")
        }
        #expect(document.sensor(named: "KÜCHE")?.name == "Küche")
    }

    @Test func duplicateNameMessageSaysNamesAreCaseInsensitive() {
        let error = RegistryError.duplicateName(new: "kitchen", existing: "Kitchen")
        #expect(error.description == "a sensor named 'Kitchen' already exists — names are case-insensitive")
    }

    @Test func topicsComeFromTheTemplateOrAreGiven() throws {
        var document = DefaultsDocument()
        #expect(try document.addSensor(named: "kitchen").topic == "kitchen")
        let template = try TopicTemplate("home/{name}/status")
        #expect(try document.addSensor(named: "garage", template: template).topic == "home/garage/status")
        #expect(try document.addSensor(named: "door", topic: "zigbee/0x1234").topic == "zigbee/0x1234")
        #expect(throws: RegistryError.duplicateTopic(topic: "kitchen", sensor: "kitchen")) {
            try document.addSensor(named: "pantry", topic: "kitchen")
        }
        #expect(
            throws: RegistryError.invalidTopic(
                "a/+/b", "topic 'a/+/b' contains a wildcard (+ or #), which only subscriptions may use")
        ) {
            try document.addSensor(named: "x", topic: "a/+/b")
        }
        #expect(throws: RegistryError.invalidTopic("$SYS/x", "topics starting with '$' are reserved for the broker")) {
            try document.addSensor(named: "y", topic: "$SYS/x")
        }
        let long = String(repeating: "t", count: 65_536)
        #expect(throws: RegistryError.invalidTopic(long, "topic is longer than 65535 bytes")) {
            try document.addSensor(named: "z", topic: long)
        }
    }

    @Test(arguments: ["home/status", "{name}/{name}", "home/+/{name}", "{name}/#"])
    func badTemplatesAreRefused(pattern: String) {
        #expect(throws: RegistryError.self) { try TopicTemplate(pattern) }
    }

    @Test func renameKeepsTheTopicUnlessAskedAndChecksDuplicates() throws {
        var document = DefaultsDocument()
        try document.addSensor(named: "kitchen")
        try document.addSensor(named: "garage")
        #expect(try document.renameSensor("KITCHEN", to: "kitchen window").topic == "kitchen")
        #expect(try document.renameSensor("kitchen window", to: "Kitchen Window").name == "Kitchen Window")
        #expect(throws: RegistryError.duplicateName(new: "Garage", existing: "garage")) {
            try document.renameSensor("Kitchen Window", to: "Garage")
        }
        #expect(try document.renameSensor("garage", to: "shed", retopic: .default).topic == "shed")
        #expect(document.sensors.map(\.name) == ["Kitchen Window", "shed"])
    }

    @Test func unknownSensorsGetASuggestion() throws {
        var document = DefaultsDocument()
        try document.addSensor(named: "kitchen")
        #expect(throws: RegistryError.unknownSensor("kitchn", suggestion: "kitchen")) {
            try document.removeSensor(named: "kitchn")
        }
        #expect(throws: RegistryError.unknownSensor("garage", suggestion: nil)) {
            try document.removeSensor(named: "garage")
        }
    }

    /// Lists read as people read names: case-insensitively, numbers by value, and always in the same order.
    @Test func sensorsSortByNameNaturally() {
        let names = ["room 10", "s1", "Room 2", "Zoë", "room 1", "s01", "attic", "b", "room 02b", "room 2a"]
        let sorted = names.shuffled().map { Sensor(name: $0, topic: $0, added: Timestamp(millisecondsSince1970: 0)) }
            .sortedByName().map(\.name)
        #expect(sorted == ["attic", "b", "room 1", "Room 2", "room 2a", "room 02b", "room 10", "s01", "s1", "Zoë"])
    }

    @Test func durations() {
        #expect(DurationText.parse("90s") == .seconds(90))
        #expect(DurationText.parse("10m") == .seconds(600))
        #expect(DurationText.parse("1h30m") == .seconds(5400))
        #expect(DurationText.parse("2d") == .seconds(172_800))
        #expect(DurationText.parse("500ms") == .milliseconds(500))
        #expect(DurationText.parse("0s") == nil)
        #expect(DurationText.parse("ten minutes") == nil)
        #expect(DurationText.format(.seconds(5400)) == "1h30m")
    }
}
