import HubAgent
import HubCore
import HubTestKit
import Testing

/// The tracker with devices that publish JSON or numbers: values, attributes, rejections, availability topics.
@Suite struct SensorTrackerDeviceTests {
    let start = ContinuousClock.now
    let time = Timestamp(millisecondsSince1970: 1_795_341_780_000)

    static let door = DeviceFixtures.zigbee2mqttContactTopic
    static let doorAvailability = DeviceFixtures.zigbee2mqttContactAvailabilityTopic
    static let room = DeviceFixtures.tasmotaSensorTopic
    static let lwt = DeviceFixtures.tasmotaLWTTopic
    static let balcony = DeviceFixtures.esphomeDoorTopic
    static let esphomeTemperature = DeviceFixtures.esphomeTemperatureTopic
    static let esphomeStatus = DeviceFixtures.esphomeStatusTopic
    static let shelly = DeviceFixtures.shellyTemperatureTopic
    static let shellyOnline = "shellyplusht-b8d61a8b17cc/online"

    /// One sensor's object in a registry: `id` and `name`, then its other members as JSON text.
    static func sensor(_ id: Int, _ name: String, _ topic: String, _ members: String = "") -> String {
        let hex = String(id, radix: 16)
        return #"{"id": "\#(String(repeating: "0", count: 12 - hex.count) + hex)", "name": "\#(name)", "#
            + #""topic": "\#(topic)", "added": "2026-11-20T08:00:00.000Z""#
            + (members.isEmpty ? "" : ", " + members) + "}"
    }

    static let sensors = [
        sensor(
            1, "shed door", door,
            #""value": "contact", "map": "true=closed,false=open", "availability": "\#(doorAvailability)""#),
        sensor(
            2, "living room", room,
            #""kind": "numeric", "value": "AM2301.Temperature", "unit": "°C", "range": [-40, 80], "availability": "\#(lwt)""#
        ),
        sensor(3, "balcony door", balcony, #""map": "ON=open,OFF=closed", "availability": "\#(esphomeStatus)""#),
        sensor(
            4, "esphome temperature", esphomeTemperature, #""kind": "numeric", "availability": "\#(esphomeStatus)""#),
        sensor(
            5, "shelly temperature", shelly, #""kind": "numeric", "value": "tC", "availability": "\#(shellyOnline)""#),
        sensor(6, "kitchen", "kitchen"),
    ]

    static func registry(_ sensors: [String] = sensors) throws -> DefaultsDocument {
        try DefaultsDocument.decode(
            Array(#"{"schemaVersion": 1, "sensors": [\#(sensors.joined(separator: ", "))]}"#.utf8))
    }

    func tracker(silence: Duration? = nil, _ sensors: [String] = sensors) throws -> SensorTracker {
        var tracker = SensorTracker(defaultSilenceTimeout: silence, maximumStatusLength: 32)
        _ = tracker.follow(try Self.registry(sensors), now: start)
        return tracker
    }

    func ingest(
        _ tracker: inout SensorTracker, _ topic: String, _ payload: String, retained: Bool = false,
        after seconds: Int = 0
    ) -> SensorTracker.Outcome {
        tracker.ingest(
            topic: topic, payload: Array(payload.utf8), retained: retained, time: time, now: start + .seconds(seconds))
    }

    // MARK: Values

    @Test func aContactSensorChangesThroughItsMap() throws {
        var tracker = try tracker()
        guard case .event(let closed) = ingest(&tracker, Self.door, DeviceFixtures.zigbee2mqttContactClosed) else {
            Issue.record("expected an event")
            return
        }
        #expect(closed.kind == .changed && closed.oldStatus == "Waiting" && closed.newStatus == "closed")
        guard case .event(let opened) = ingest(&tracker, Self.door, DeviceFixtures.zigbee2mqttContactOpen) else {
            Issue.record("expected an event")
            return
        }
        #expect(opened.kind == .changed && opened.oldStatus == "closed" && opened.newStatus == "open")
        #expect(opened.sensor == "shed door" && opened.topic == Self.door)
        #expect(tracker.status(onTopic: Self.door)?.status == "open")
        let records = tracker.takeRecords(events: [opened])
        #expect(records.count == 1)
        #expect(records.first?.status == "open" && records.first?.events == [opened])
        #expect(records.first?.attributes["linkquality"] == .number(120))
    }

    @Test func otherFieldsAloneAreNoEventButAreRecorded() throws {
        var tracker = try tracker()
        _ = ingest(&tracker, Self.door, DeviceFixtures.zigbee2mqttContactClosed)
        _ = tracker.takeRecords(events: [])
        let lowBattery = #"{"battery":12,"contact":true,"linkquality":80,"voltage":2700}"#
        #expect(ingest(&tracker, Self.door, lowBattery) == .unchanged)
        let records = tracker.takeRecords(events: [])
        #expect(records.count == 1)
        #expect(records.first?.status == "closed" && records.first?.events == [])
        #expect(records.first?.attributes["battery"] == .number(12))
        #expect(records.first?.attributes.map(\.name) == ["battery", "linkquality", "voltage"])
    }

    @Test func aRetainedReplayOfTheSamePayloadIsNoNews() throws {
        var tracker = try tracker(silence: .seconds(60))
        _ = ingest(&tracker, Self.door, DeviceFixtures.zigbee2mqttContactClosed)
        _ = tracker.takeRecords(events: [])
        #expect(
            ingest(&tracker, Self.door, DeviceFixtures.zigbee2mqttContactClosed, retained: true, after: 50)
                == .unchanged)
        #expect(tracker.takeRecords(events: []).isEmpty)
        // …and does not prove the sensor alive.
        #expect(tracker.checkSilence(now: start + .seconds(61), time: time).map(\.kind) == [.silent])
    }

    /// A reading that says its instant (a feed's hour) is one reading, however often it comes: published again live
    /// (a source that crashed before remembering it had) it makes no second point; the next instant does, and so
    /// does a payload without a time.
    @Test func aReadingOfAnInstantTheHubHasIsARepeat() throws {
        var tracker = try tracker([Self.sensor(1, "sg-west", "feeds/west", #""kind": "numeric", "value": "value""#)])
        let hour = #"{"value":54,"time":"2020-12-15T00:00:00.000Z","pm25_sub_index":40}"#
        #expect(
            ingest(&tracker, "feeds/west", hour)
                == .reading(.numeric(54, unit: nil, time: time), sensor: "sg-west", events: []))
        #expect(ingest(&tracker, "feeds/west", hour, after: 5) == .unchanged)
        // The same instant written in another zone is the same instant.
        #expect(ingest(&tracker, "feeds/west", #"{"value":54,"time":"2020-12-15T08:00:00+08:00"}"#) == .unchanged)
        // Received in the same millisecond as the last reading, each takes the next one: the store's history keeps
        // one reading a sensor and millisecond.
        let next = #"{"value":60,"time":"2020-12-15T01:00:00.000Z"}"#
        #expect(
            ingest(&tracker, "feeds/west", next)
                == .reading(.numeric(60, unit: nil, time: time.adding(milliseconds: 1)), sensor: "sg-west", events: []))
        #expect(
            ingest(&tracker, "feeds/west", #"{"value":60}"#)
                == .reading(.numeric(60, unit: nil, time: time.adding(milliseconds: 2)), sensor: "sg-west", events: []))
        // A clock set back by more than a second is followed as it is.
        #expect(
            tracker.ingest(
                topic: "feeds/west", payload: Array(#"{"value":61}"#.utf8), retained: false,
                time: time.adding(milliseconds: -1001), now: start)
                == .reading(
                    .numeric(61, unit: nil, time: time.adding(milliseconds: -1001)), sensor: "sg-west", events: []))
    }

    @Test func aNumericSensorReadsWithoutEventsAndRecoversAfterOffline() throws {
        var tracker = try tracker(silence: .seconds(60))
        let payload = #"{"Time":"2024-05-01T10:00:00","AM2301":{"Temperature":22.6,"Humidity":32.4},"TempUnit":"C"}"#
        #expect(
            ingest(&tracker, Self.room, payload)
                == .reading(.numeric(22.6, unit: "°C", time: time), sensor: "living room", events: []))
        let warmer = #"{"Time":"2024-05-01T10:05:00","AM2301":{"Temperature":23.1,"Humidity":32.0},"TempUnit":"C"}"#
        #expect(
            ingest(&tracker, Self.room, warmer, after: 10)
                == .reading(
                    .numeric(23.1, unit: "°C", time: time.adding(milliseconds: 1)), sensor: "living room", events: []))
        #expect(tracker.status(onTopic: Self.room)?.status == "23.1")
        let records = tracker.takeRecords(events: [])
        #expect(records.first?.attributes["AM2301.Humidity"] == .number(32))
        #expect(records.first?.attributes["Time"] == .string("2024-05-01T10:05:00"))
        // Silent, then back: the reading and a recovered event.
        #expect(tracker.checkSilence(now: start + .seconds(71), time: time).map(\.kind) == [.silent])
        guard
            case .reading(.numeric(let value, _, _, _), _, let events) = ingest(&tracker, Self.room, payload, after: 80)
        else {
            Issue.record("expected a reading")
            return
        }
        #expect(value == 22.6)
        #expect(events.map(\.kind) == [.recovered])
        #expect(events.first?.oldStatus == "offline" && events.first?.newStatus == "22.6")
        // ESPHome: a plain number.
        #expect(
            ingest(&tracker, Self.esphomeTemperature, DeviceFixtures.esphomeTemperature)
                == .reading(.numeric(22.5, unit: nil, time: time), sensor: "esphome temperature", events: []))
        #expect(
            ingest(&tracker, Self.shelly, DeviceFixtures.shellyTemperature)
                == .reading(.numeric(19.8, unit: nil, time: time), sensor: "shelly temperature", events: []))
    }

    @Test func plainPayloadsThroughAMap() throws {
        var tracker = try tracker()
        #expect(ingest(&tracker, Self.balcony, DeviceFixtures.esphomeBinaryOn).events.map(\.newStatus) == ["open"])
        #expect(ingest(&tracker, Self.balcony, "OFF").events.map(\.newStatus) == ["closed"])
        #expect(ingest(&tracker, Self.balcony, "off") == .unchanged)
    }

    @Test func badPayloadsAreRejectedByReasonAndNeverStored() throws {
        var tracker = try tracker()
        _ = ingest(&tracker, Self.door, DeviceFixtures.zigbee2mqttContactClosed)
        _ = ingest(&tracker, Self.room, #"{"AM2301":{"Temperature":20}}"#)
        _ = tracker.takeRecords(events: [])
        let cases: [(String, String, Rejection)] = [
            (Self.door, "open", .value(.notJSON)),
            (Self.door, #"{"battery":97"#, .value(.notJSON)),
            (Self.door, #"{"battery":97}"#, .value(.missingValue)),
            (Self.door, #"{"contact":null}"#, .value(.missingValue)),
            (Self.door, #"{"contact":{"x":1}}"#, .value(.wrongType)),
            (Self.door, #"{"contact":"a\u001b[2J"}"#, .controlCharacters),
            (Self.door, #"{"contact":"\#(String(repeating: "x", count: 33))"}"#, .tooLong),
            (Self.door, #"{"contact":""}"#, .empty),
            (Self.door, #"{"contact":"  "}"#, .empty),
            (Self.room, #"{"AM2301":{"Temperature":true}}"#, .value(.wrongType)),
            (Self.room, #"{"AM2301":{"Temperature":"nan"}}"#, .value(.notANumber)),
            (Self.room, #"{"AM2301":{"Temperature":1e13}}"#, .value(.outOfRange)),
            (Self.room, #"{"AM2301":{"Temperature":85}}"#, .value(.outOfRange)),
            (Self.esphomeTemperature, DeviceFixtures.esphomeSensorNaN, .value(.notANumber)),
            (Self.esphomeTemperature, DeviceFixtures.esphomeSensorNone, .value(.notANumber)),
            (Self.door, "", .empty),
        ]
        for (topic, payload, reason) in cases {
            #expect(ingest(&tracker, topic, payload) == .rejected(reason), "\(payload)")
        }
        #expect(tracker.status(onTopic: Self.door)?.status == "closed")
        #expect(tracker.status(onTopic: Self.room)?.status == "20")
        #expect(tracker.takeRecords(events: []).isEmpty)
    }

    // MARK: Availability

    @Test func anAvailabilityTopicSpeaksForEverySensorOnIt() throws {
        var tracker = try tracker()
        _ = ingest(&tracker, Self.balcony, "ON")
        _ = ingest(&tracker, Self.esphomeTemperature, "22.5")
        _ = tracker.takeRecords(events: [])
        let offline = ingest(&tracker, Self.esphomeStatus, DeviceFixtures.esphomeStatusOffline)
        guard case .events(let gone) = offline else {
            Issue.record("expected events, got \(offline)")
            return
        }
        #expect(gone.map(\.kind) == [.offline, .offline])
        #expect(gone.map(\.sensor) == ["balcony door", "esphome temperature"])
        #expect(gone.map(\.oldStatus) == ["open", "22.5"] && gone.allSatisfy { $0.newStatus == "offline" })
        #expect(tracker.status(onTopic: Self.balcony)?.status == "offline")
        #expect(Set(tracker.takeRecords(events: gone).map(\.topic)) == [Self.balcony, Self.esphomeTemperature])
        #expect(ingest(&tracker, Self.esphomeStatus, "offline") == .unchanged)
        guard case .events(let back) = ingest(&tracker, Self.esphomeStatus, DeviceFixtures.esphomeStatusOnline) else {
            Issue.record("expected events")
            return
        }
        #expect(back.map(\.kind) == [.recovered, .recovered])
        #expect(back.map(\.newStatus) == ["open", "22.5"])
        #expect(tracker.status(onTopic: Self.esphomeTemperature)?.status == "22.5")
        #expect(ingest(&tracker, Self.esphomeStatus, "online") == .unchanged)
    }

    @Test(arguments: [
        (
            DeviceFixtures.zigbee2mqttContactTopic, DeviceFixtures.zigbee2mqttContactAvailabilityTopic,
            DeviceFixtures.zigbee2mqttAvailabilityOffline, DeviceFixtures.zigbee2mqttAvailabilityOnline
        ),
        (
            DeviceFixtures.zigbee2mqttContactTopic, DeviceFixtures.zigbee2mqttContactAvailabilityTopic,
            DeviceFixtures.zigbee2mqttLegacyAvailabilityOffline, DeviceFixtures.zigbee2mqttLegacyAvailabilityOnline
        ),
        (
            DeviceFixtures.tasmotaSensorTopic, DeviceFixtures.tasmotaLWTTopic, DeviceFixtures.tasmotaLWTOffline,
            DeviceFixtures.tasmotaLWTOnline
        ),
        (
            DeviceFixtures.shellyTemperatureTopic, "shellyplusht-b8d61a8b17cc/online", DeviceFixtures.shellyOffline,
            DeviceFixtures.shellyOnline
        ),
        (DeviceFixtures.shellyTemperatureTopic, "shellyplusht-b8d61a8b17cc/online", " FALSE\n", "True"),
    ])
    func everyFamilysAvailability(sensor: String, topic: String, offline: String, online: String) throws {
        var tracker = try tracker()
        #expect(ingest(&tracker, topic, offline).events.map(\.kind) == [.offline])
        #expect(tracker.status(onTopic: sensor)?.status == "offline")
        #expect(ingest(&tracker, topic, online).events.map(\.kind) == [.recovered])
        #expect(tracker.status(onTopic: sensor)?.status == "Waiting")
    }

    @Test(arguments: ["maybe", #"{"state":"sleeping"}"#, #"{"status":"online"}"#, "", "[1]", #""online""#])
    func anythingElseOnAnAvailabilityTopicIsRejected(payload: String) throws {
        var tracker = try tracker()
        #expect(ingest(&tracker, Self.doorAvailability, payload) == .rejected(.invalidAvailability))
        #expect(
            tracker.ingest(topic: Self.lwt, payload: [0xC3, 0x28], retained: false, time: time, now: start)
                == .rejected(.invalidAvailability))
    }

    /// An offline device's retained state (replayed on subscribing) is not a sign of life: the sensor stays
    /// offline, and the device's `online` brings it back with that state.
    @Test func aRetainedStateWhileTheDeviceIsOfflineWaitsForItsAvailability() throws {
        var tracker = try tracker()
        _ = ingest(&tracker, Self.door, DeviceFixtures.zigbee2mqttContactClosed)
        _ = ingest(&tracker, Self.doorAvailability, DeviceFixtures.zigbee2mqttAvailabilityOffline)
        #expect(ingest(&tracker, Self.door, DeviceFixtures.zigbee2mqttContactOpen, retained: true) == .unchanged)
        #expect(tracker.status(onTopic: Self.door)?.status == "offline")
        let back = ingest(&tracker, Self.doorAvailability, DeviceFixtures.zigbee2mqttAvailabilityOnline).events
        #expect(back.map(\.kind) == [.recovered] && back.first?.newStatus == "open")
        // A live message while offline is a sign of life.
        _ = ingest(&tracker, Self.doorAvailability, "offline")
        #expect(ingest(&tracker, Self.door, DeviceFixtures.zigbee2mqttContactClosed).events.map(\.kind) == [.recovered])
    }

    // MARK: Subscriptions

    @Test func topicsIncludeAvailabilityTopicsOnce() throws {
        let tracker = try tracker()
        #expect(tracker.topics.count == Set(tracker.topics).count)
        #expect(
            Set(tracker.topics) == [
                Self.door, Self.doorAvailability, Self.room, Self.lwt, Self.balcony, Self.esphomeTemperature,
                Self.esphomeStatus, Self.shelly, Self.shellyOnline, "kitchen",
            ])
        var fresh = SensorTracker()
        let delta = fresh.follow(try Self.registry(), now: start)
        #expect(Set(delta.subscribe) == Set(tracker.topics) && delta.subscribe.count == tracker.topics.count)
        #expect(delta.unsubscribe.isEmpty)
    }

    @Test func followingSubscribesAndLeavesAvailabilityTopics() throws {
        var tracker = try tracker()
        var sensors = Self.sensors
        // The balcony door goes; the ESPHome status topic still speaks for the temperature.
        sensors.remove(at: 2)
        var delta = tracker.follow(try Self.registry(sensors), now: start)
        #expect(delta.subscribe.isEmpty && delta.unsubscribe == [Self.balcony])
        // The temperature goes too: nothing left on the status topic.
        sensors.remove(at: 2)
        delta = tracker.follow(try Self.registry(sensors), now: start)
        #expect(delta.subscribe.isEmpty && Set(delta.unsubscribe) == [Self.esphomeTemperature, Self.esphomeStatus])
        #expect(delta.unsubscribe.count == 2)
        // The kitchen gains an availability topic, the shed door another one.
        sensors[3] = Self.sensor(6, "kitchen", "kitchen", #""availability": "kitchen/status""#)
        sensors[0] = Self.sensor(1, "shed door", Self.door, #""value": "contact", "availability": "garden/status""#)
        delta = tracker.follow(try Self.registry(sensors), now: start)
        #expect(Set(delta.subscribe) == ["kitchen/status", "garden/status"] && delta.subscribe.count == 2)
        #expect(delta.unsubscribe == [Self.doorAvailability])
        #expect(ingest(&tracker, "kitchen/status", "offline").events.map(\.sensor) == ["kitchen"])
        #expect(ingest(&tracker, Self.doorAvailability, "offline") == .rejected(.unknownTopic))
        // Following the same registry again changes nothing.
        #expect(tracker.follow(try Self.registry(sensors), now: start).isEmpty)
    }

    /// A topic that is a sensor's and another device's availability: subscribed once, left only when neither
    /// needs it.
    @Test func aTopicThatIsBothASensorsAndAnAvailability() throws {
        let status = Self.sensor(7, "node status", Self.esphomeStatus)
        var tracker = try tracker(Self.sensors + [status])
        #expect(tracker.topics.count == Set(tracker.topics).count)
        // A message there is the sensor's status and its devices' availability.
        let offline = ingest(&tracker, Self.esphomeStatus, "offline").events
        #expect(offline.map(\.sensor) == ["node status", "balcony door", "esphome temperature"])
        #expect(offline.allSatisfy { $0.kind == .offline })
        let online = ingest(&tracker, Self.esphomeStatus, "online").events
        #expect(online.count == 3 && online.allSatisfy { $0.kind == .recovered })
        #expect(ingest(&tracker, Self.esphomeStatus, "maybe").events.map(\.newStatus) == ["maybe"])
        // The sensor on it goes: the temperature and balcony door still need it.
        var delta = tracker.follow(try Self.registry(Self.sensors), now: start)
        #expect(delta.isEmpty)
        // It comes back: already subscribed.
        delta = tracker.follow(try Self.registry(Self.sensors + [status]), now: start)
        #expect(delta.isEmpty)
        // Both of its devices' sensors and the sensor on it go: left once.
        var sensors = Self.sensors
        sensors.removeSubrange(2...3)
        delta = tracker.follow(try Self.registry(sensors), now: start)
        #expect(delta.subscribe.isEmpty)
        #expect(delta.unsubscribe.sorted() == [Self.esphomeStatus, Self.balcony, Self.esphomeTemperature].sorted())
    }
}
