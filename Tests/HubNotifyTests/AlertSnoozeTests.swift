import Foundation
import HubCore
import Testing

@testable import HubNotify

/// One alert snoozed from the dashboard (issue 53): the same silence a notification's snooze button makes, announced,
/// and ended by expiring it; what the page reads of an alert (its spoken name, the rule's priority, what holds it);
/// whether a status is one a rule fires on.
@Suite struct AlertSnoozeTests {
    let start = Timestamp(millisecondsSince1970: 1_798_000_000_000)

    func setup() throws -> AlertBook.Setup {
        try NotifierConfiguration.parse(
            """
            alerts:
              sensors:
                "front door": { labels: { room: hall } }
            notifiers:
              backends:
                phone: { type: file, path: /dev/null }
              rules:
                doors: { sensors: ["* door"], events: [changed], statuses: [open], backends: [phone], group_wait: 0s, priority: 4 }
                leaks: { events: [changed], statuses: [leak], backends: [phone], group_wait: 0s }
                anything: { events: [changed], backends: [phone], group_wait: 0s }
            """
        ).alertSetup
    }

    func open(_ sensor: String, _ status: String, _ book: inout AlertBook, _ setup: AlertBook.Setup) {
        book.apply(
            [
                SensorEvent(
                    id: "\(sensor)-1", kind: .changed, sensor: sensor, topic: sensor, oldStatus: "closed",
                    newStatus: status, time: start)
            ], setup, now: start)
    }

    @Test func aSnoozeIsASilenceOnTheAlertAnnouncedAndEndedEarly() throws {
        let setup = try setup()
        var book = AlertBook()
        open("front door", "open", &book, setup)
        let id = "doors/front door/status"
        #expect(book.alerts[id]?.firing == true)
        let said = book.apply(
            .snooze(alert: id, silence: "snooze-1", milliseconds: 1_800_000, by: "ana", via: "web", at: start),
            now: start)
        #expect(said == "snoozed for 30 min")
        let silence = try #require(book.silences.first { $0.id == "snooze-1" })
        #expect(silence.matchers.map(\.description) == ["rule=doors", "sensor=front door", "kind=status"])
        #expect(silence.endsAt == start.adding(milliseconds: 1_800_000) && silence.createdBy == "ana")
        #expect(book.why(book.alerts[id]!, setup, now: start.adding(milliseconds: 1000)).hasPrefix("silenced by snooze-1 (rule=doors front door kind=status) until "))
        // The page reads what holds it, to offer Unsnooze.
        let json = try #require(
            try JSONSerialization.jsonObject(with: book.json([book.alerts[id]!], setup, now: start.adding(milliseconds: 1000)))
                as? [[String: Any]])
        #expect(json[0]["silencedBy"] as? [String] == ["snooze-1"])
        #expect(json[0]["priority"] as? Int == 4)
        #expect((json[0]["spoken"] as? String)?.hasPrefix("front door open · hall, since ") == true)
        // Taken once: the same request again changes nothing.
        #expect(
            book.apply(
                .snooze(alert: id, silence: "snooze-1", milliseconds: 1_800_000, by: "ana", via: "web", at: start),
                now: start) == "already there")
        // Ended early, as the page's Unsnooze does.
        #expect(book.apply(.expire(silence: "snooze-1", at: start.adding(milliseconds: 5000), by: "ana"), now: start.adding(milliseconds: 5000)) == "silence expired")
        // An alert that does not fire is not snoozed.
        #expect(
            book.apply(
                .snooze(alert: "doors/nowhere/status", silence: "snooze-2", milliseconds: 60_000, by: "ana", via: "web", at: start),
                now: start) == "not firing: not snoozed")
    }

    @Test func aNameEndingInItsStatusIsNotSaidTwice() throws {
        let setup = try setup()
        var book = AlertBook()
        open("kitchen leak", "leak", &book, setup)
        let alert = try #require(book.alerts["leaks/kitchen leak/status"])
        #expect(alert.spoken(now: start).hasPrefix("kitchen leak: leak, since "))
    }

    @Test func aStatusARuleFiresOn() throws {
        let setup = try setup()
        #expect(setup.alarms(sensor: "front door", status: "open"))
        #expect(!setup.alarms(sensor: "front door", status: "closed"))
        #expect(!setup.alarms(sensor: "cellar", status: "open"), "the doors rule covers only '* door'")
        #expect(setup.alarms(sensor: "cellar", status: "leak"))
        // A rule naming no status fires on every change, and says nothing of one.
        #expect(!setup.alarms(sensor: "cellar", status: "dry"))
    }
}
