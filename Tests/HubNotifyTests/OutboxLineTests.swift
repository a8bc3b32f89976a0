import Foundation
import HubCore
import Testing

@testable import HubNotify

/// The outbox line is written by hand (JSONWriter, for speed) and read back by Codable: both must agree on every
/// field, for every shape a notification can take.
@Suite struct OutboxLineTests {
    static let notifications: [HubNotify.Notification] = {
        let time = Timestamp(millisecondsSince1970: 1_795_000_000_123)
        var plain = HubNotify.Notification(
            id: "3f1c", backend: "hook", rule: "all",
            event: SensorEvent(
                id: SensorEvent.randomID(), kind: .changed, sensor: "kitchen", topic: "home/kitchen",
                oldStatus: "closed", newStatus: "open",
                time: time),
            title: "kitchen is open", body: "kitchen: closed → open", priority: 4, created: time)
        var full = plain
        full.target = "a1b2c3"
        full.event.kind = .airQuality
        full.event.value = "PM2.5 27.4 µg/m³ (24 h mean) is above 15"
        full.alert = .init(
            group: "power,room=garage", reason: .firing, alerts: ["power/shed/offline", "power/garage/offline"])
        var awkward = plain
        awkward.event.sensor = "Küche \"Nord\" \\ 🚪"
        awkward.event.newStatus = "tab\there, newline\nthere, nul\u{0}, bell\u{7}"
        awkward.title = "\u{202E}reversed"
        plain.priority = 3
        return [plain, full, awkward]
    }()

    @Test(arguments: notifications)
    func aLineReadsBackAsTheNotification(_ notification: HubNotify.Notification) throws {
        let line = Outbox.line(notification)
        #expect(!line.contains(UInt8(ascii: "\n")), "one line")
        let entry = try JSONDecoder().decode(Outbox.Entry.self, from: Data(line))
        #expect(entry.add == notification)
        #expect(entry.done == nil)
    }

    /// The same keys as Codable writes: a field added to `Notification` or `SensorEvent` and not to the line
    /// fails here, optional ones included.
    @Test(arguments: notifications)
    func aLineHasTheKeysCodableWrites(_ notification: HubNotify.Notification) throws {
        func keys(_ data: Data) throws -> Set<String> {
            let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            let add = try #require(object["add"] as? [String: Any])
            let event = try #require(add["event"] as? [String: Any])
            return Set(add.keys).union(event.keys.map { "event." + $0 })
        }
        let written = try keys(Data(Outbox.line(notification)))
        let codable = try keys(JSONEncoder().encode(Outbox.Entry(add: notification, done: nil)))
        #expect(written == codable)
    }
}
