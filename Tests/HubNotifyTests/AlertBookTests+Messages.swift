import Foundation
import HubCore
import Testing

@testable import HubNotify

/// The alert stage as a value, continued: what a group's later messages say, taking copies back, a backend's quiet
/// hours, and returns gathered.
extension AlertBookTests {
    /// Quiet hours on a backend: the partner's phone is quiet 22:00–07:00, the house's tablet is not. A leak at 23:00
    /// (below urgent) reaches the tablet at once and the phone in its 07:00 digest, with what ended meanwhile; an
    /// urgent alert reaches both at once.
    @Test func aBackendsQuietHoursKeepWhatItMissedForItsDigest() throws {
        let zone = try #require(TimeZone(identifier: "Europe/Berlin"))
        let night = QuietHours(name: "night", from: 22 * 60, to: 7 * 60, zone: zone)
        let leak = Self.rule("leak", events: [.changed], statuses: ["wet"], backends: ["tablet", "partner"])
        let smoke = Self.rule(
            "smoke", events: [.changed], sensors: ["smoke"], statuses: ["alarm"], backends: ["partner"], priority: 5)
        var setup = AlertBook.Setup(rules: [leak, smoke], quietHours: [night])
        setup.backendQuietHours = ["partner": ["night"]]
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        now = Timestamp(calendar.date(from: DateComponents(year: 2026, month: 11, day: 27, hour: 23))!)
        book.apply(
            [event("cellar", .changed, "wet", old: "dry"), event("bath", .changed, "wet", old: "dry")], setup, now: now)
        let sent = advance(30, setup)
        #expect(sent.map(\.backends) == [["tablet"]], "the tablet at once, the partner's phone not")
        book.apply([event("bath", .changed, "dry", old: "wet")], setup, now: now)
        #expect(advance(300, setup).map(\.backends) == [["tablet"]])
        book.apply([event("smoke", .changed, "alarm", old: "clear")], setup, now: now)
        #expect(advance(30, setup).map(\.backends) == [["partner"]], "urgent passes quiet hours")

        let seven = Timestamp(calendar.date(from: DateComponents(year: 2026, month: 11, day: 28, hour: 7))!)
        #expect(book.nextDeadline(setup, now: now).map { $0 <= seven } == true)
        now = seven
        let morning = book.tick(setup, now: now)
        let digest = try #require(morning.first { $0.backends == ["partner"] })
        #expect(digest.reason == .digest && digest.title == "While quiet: 1 sensor wet")
        #expect(digest.body == "Still open: cellar\nEnded: bath")
        #expect(advance(3600, setup).allSatisfy { $0.backends != ["partner"] || $0.reason != .digest })

        // The book, saved and read back during the night, still knows what the phone missed.
        var copy = AlertBook()
        copy.apply(
            [event("attic", .changed, "wet", old: "dry")], setup,
            now: Timestamp(
                calendar.date(
                    from: DateComponents(year: 2026, month: 11, day: 28, hour: 23))!))
        _ = copy.tick(
            setup,
            now: Timestamp(calendar.date(from: DateComponents(year: 2026, month: 11, day: 28, hour: 23, minute: 1))!))
        let read = try JSONDecoder().decode(AlertBook.self, from: JSONEncoder().encode(copy))
        #expect(read.quietBackends["partner"]?.alerts == ["leak/attic/status": "attic"])
    }

    /// Long after the outage's message (group_interval long past), the sensors come back over 20 s: one message,
    /// gathered for group_wait (30 s) from the first return, not the first alone and then the rest.
    @Test func aReturnLongAfterTheMessageIsGatheredForGroupWait() {
        let setup = AlertBook.Setup(rules: [Self.rule()])
        let sensors = (1...40).map { "s\($0)" }
        offline(sensors, setup)
        #expect(advance(30, setup).map(\.title) == ["40 sensors offline"])
        _ = advance(3600, setup)
        var sent: [AlertMessage] = []
        for (index, sensor) in sensors.enumerated() {
            back([sensor], setup)
            if index % 2 == 1 { sent += advance(1, setup) }
        }
        sent += advance(60, setup)
        #expect(sent.map(\.title) == ["40 sensors back"])
    }

    /// A group's later message says everything firing in it (it replaces the earlier one on the phone), but only the
    /// new alert is marked told now: the first one's escalation clock keeps running from its own message.
    @Test func aGroupsLaterMessageNamesEverythingFiring() {
        let rule = Self.rule("leak", events: [.changed], statuses: ["wet"]) {
            $0.groupInterval = .seconds(60)
            $0.escalate = [.init(after: .seconds(600), backends: ["partner"])]
        }
        let setup = AlertBook.Setup(rules: [rule])
        book.apply([event("kitchen", .changed, "wet", old: "dry")], setup, now: now)
        #expect(advance(30, setup).map(\.alerts) == [["leak/kitchen/status"]])
        let firstNotified = book.alerts["leak/kitchen/status"]?.notified
        book.apply([event("bath", .changed, "wet", old: "dry")], setup, now: now)
        let update = advance(60, setup)
        #expect(update.map(\.reason) == [.firing])
        #expect(update.first?.title == "2 sensors wet" && update.first?.body == "kitchen, bath")
        #expect(update.first?.alerts == ["leak/kitchen/status", "leak/bath/status"])
        #expect(book.alerts["leak/kitchen/status"]?.notified == firstNotified)
        // Acknowledged alerts are known to someone: a third joining names it and the unacknowledged bath.
        book.acknowledge("leak/kitchen/status", by: "ana", via: "test", now: now)
        book.apply([event("cellar", .changed, "wet", old: "dry")], setup, now: now)
        let third = advance(60, setup).filter { $0.reason == .firing }
        #expect(third.first?.alerts == ["leak/bath/status", "leak/cellar/status"])
    }

    /// A group's notification is taken back only once nothing in it waits for anyone: acknowledging one of two
    /// alerts takes nothing back, the second does; an alert acknowledged before its first message is not sent.
    @Test func aGroupIsTakenBackWhenAllItsAlertsAreAcknowledged() {
        let setup = AlertBook.Setup(rules: [Self.rule()])
        offline(["shed", "garage"], setup)
        #expect(advance(30, setup).map(\.title) == ["2 sensors offline"])
        var acknowledged = book.acknowledge("power/shed/offline", by: "ana", via: "test", now: now)
        #expect(acknowledged)
        #expect(advance(1, setup).isEmpty, "garage still waits for someone")
        acknowledged = book.acknowledge("power/garage/offline", by: "bo", via: "test", now: now)
        #expect(acknowledged)
        let takenBack = advance(1, setup)
        #expect(takenBack.map(\.reason) == [.acknowledged])
        #expect(takenBack.first?.title == "Acknowledged: 2 sensors offline")
        #expect(takenBack.first?.alerts == ["power/shed/offline", "power/garage/offline"])
        #expect(advance(600, setup).isEmpty)

        // Acknowledged before its first message (inside group_wait): there is nothing to take back.
        offline(["attic"], setup)
        acknowledged = book.acknowledge("power/attic/offline", by: "ana", via: "test", now: now)
        #expect(acknowledged)
        #expect(advance(30, setup).isEmpty, "whoever acknowledged it knows")
        #expect(book.alerts["power/attic/offline"]?.stateText == "acknowledged by ana via test")
        let revision = book.revision
        #expect(advance(600, setup).isEmpty)
        #expect(book.revision == revision, "an acknowledged alert waiting for nothing changes nothing at each tick")
    }
}
