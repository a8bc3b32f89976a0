import Foundation
import Crypto
import HubCore
import Testing

@testable import HubNotify

/// What the alert stage is doing, in words, for each alert (issue 52): `hubctl alerts`, the alerts page and
/// `/api/v1/alerts` say why an alert waits.
@Suite struct AlertWhyTests {
    let start = Timestamp(millisecondsSince1970: 1_798_000_000_000)

    func setup(_ extra: String = "") throws -> AlertBook.Setup {
        try NotifierConfiguration.parse(
            """
            alerts:
              quiet_hours:
                night: { from: "00:00", to: "24:00", zone: Europe/Berlin }
              sensors:
                "zb-*": { parent: gw7 }
            notifiers:
              backends:
                phone: { type: file, path: /dev/null }
              rules:
                doors: { events: [changed], statuses: [open], backends: [phone], group_wait: 30s \(extra) }
                power: { events: [offline, recovered], backends: [phone], group_by: [sensor], group_wait: 3s }
            """
        ).alertSetup
    }

    func open(_ sensor: String, _ book: inout AlertBook, _ setup: AlertBook.Setup, at now: Timestamp) {
        book.apply(
            [
                SensorEvent(
                    id: "\(sensor)-1", kind: .changed, sensor: sensor, topic: sensor, oldStatus: "closed",
                    newStatus: "open", time: now)
            ], setup, now: now)
    }

    @Test func eachWaitSaysWhy() throws {
        let setup = try setup()
        var book = AlertBook()
        open("front", &book, setup, at: start)
        let later = start.adding(milliseconds: 18_000)
        #expect(book.why(book.alerts["doors/front/status"]!, setup, now: later) == "in group_wait, 12 s left")
        _ = book.tick(setup, now: start.adding(milliseconds: 30_000))
        #expect(book.why(book.alerts["doors/front/status"]!, setup, now: later) == "firing")

        // A silence.
        var silenced = AlertBook()
        silenced.apply(
            .silence(
                Silence(
                    id: "a1b2", matchers: [try Silence.Matcher(parsing: "back*")], startsAt: start,
                    endsAt: start.adding(milliseconds: 7_200_000), createdBy: "ana", comment: "")), now: start)
        open("back", &silenced, setup, at: start)
        #expect(silenced.why(silenced.alerts["doors/back/status"]!, setup, now: start).hasPrefix("silenced by a1b2 (back*) until "))

        // A parent offline.
        var held = AlertBook()
        for (sensor, kind) in [("gw7", SensorEvent.Kind.offline), ("zb-1", .offline)] {
            held.apply(
                [
                    SensorEvent(
                        id: "\(sensor)-1", kind: kind, sensor: sensor, topic: sensor, oldStatus: "online",
                        newStatus: "offline", time: start)
                ], setup, now: start)
        }
        #expect(held.why(held.alerts["power/zb-1/offline"]!, setup, now: start) == "held by parent gw7 (offline)")

        // Quiet hours all day long in Berlin.
        let quiet = try self.setup(", quiet_hours: [night]")
        var night = AlertBook()
        open("window", &night, quiet, at: start)
        let said = night.why(night.alerts["doors/window/status"]!, quiet, now: start)
        #expect(said.hasPrefix("held by quiet hours 'night' until ") && said.hasSuffix(" Europe/Berlin (a digest then)"), "\(said)")

        // Part of an outage, and told as part of it.
        var storm = AlertBook()
        for index in 0..<30 {
            storm.apply(
                [
                    SensorEvent(
                        id: "s\(index)-1", kind: .offline, sensor: "s\(index)", topic: "s\(index)", oldStatus: "closed",
                        newStatus: "offline", time: start)
                ], setup, now: start)
        }
        _ = storm.tick(setup, now: start.adding(milliseconds: 3_000))
        let told = storm.why(storm.alerts["power/s0/offline"]!, setup, now: start.adding(milliseconds: 4_000))
        #expect(told.hasPrefix("firing, told as part of outage since ") && told.hasSuffix("(30 alerts)"), "\(told)")
    }
}

/// Small things a person reads (issue 52): lengths as a person wrote them, and a group's handle that is this hub's.
@Suite struct AlertWordsTests {
    @Test func aReminderSaysHowLongAsWritten() throws {
        var rule = NotificationRule(name: "leak", backends: ["phone"])
        rule.events = [.changed]
        rule.statuses = ["wet"]
        var policy = AlertPolicy()
        policy.groupWait = .seconds(0)
        policy.repeatEvery = [.seconds(3)]
        policy.escalate = [.init(after: .seconds(90), backends: ["partner"])]
        rule.alerting = policy
        let setup = AlertBook.Setup(rules: [rule])
        var book = AlertBook()
        let start = Timestamp(millisecondsSince1970: 1_798_000_000_000)
        book.apply(
            [
                SensorEvent(
                    id: "k-1", kind: .changed, sensor: "kitchen", topic: "kitchen", oldStatus: "dry", newStatus: "wet",
                    time: start)
            ], setup, now: start)
        _ = book.tick(setup, now: start)
        let reminder = book.tick(setup, now: start.adding(milliseconds: 3_000))
        #expect(reminder.first?.body == "kitchen — open for 3 s, not acknowledged")
        var escalation: [AlertMessage] = []
        for second in 4...91 { escalation += book.tick(setup, now: start.adding(milliseconds: Int64(second) * 1000)) }
        #expect(
            escalation.contains { $0.title == "Not acknowledged for 1 min 30 s: 1 sensor wet" },
            "\(escalation.map(\.title))")
    }

    @Test func aGroupsHandleIsThisHubs() {
        let (one, two) = (SymmetricKey(size: .bits256), SymmetricKey(size: .bits256))
        let first = Notification.AlertContext.handle(of: "leak", key: one)
        #expect(first.hasPrefix("sh-") && first.count == 15)
        #expect(first == Notification.AlertContext.handle(of: "leak", key: one), "stable on one hub")
        #expect(first != Notification.AlertContext.handle(of: "leak", key: two), "another hub's differs")
        #expect(first != Notification.AlertContext.handle(of: "doors", key: one))
        let context = Notification.AlertContext(group: "leak", reason: .firing, alerts: [], handle: first)
        #expect(context.replaceHandle == first)
    }
}

/// Quiet hours edited by a reload (issue 52): the edit applies at once, and a window the reload ended sends its
/// digest then, not at the old window's end.
@Suite struct QuietReloadTests {
    /// The rule in the all-day window `night`, or (`quiet: false`) not in any.
    static func setup(_ quiet: Bool) throws -> AlertBook.Setup {
        try NotifierConfiguration.parse(
            """
            alerts:
              quiet_hours:
                night: { from: "00:00", to: "24:00", zone: UTC }
            notifiers:
              backends:
                phone: { type: file, path: /dev/null }
              rules:
                doors: { events: [changed], statuses: [open], backends: [phone], group_wait: 0s\(quiet ? ", quiet_hours: [night]" : "") }
            """
        ).alertSetup
    }

    @Test func aWindowEndedByAReloadSendsItsDigestAtOnce() throws {
        // 2026-12-23 10:00 UTC: inside the all-day window.
        let start = Timestamp(millisecondsSince1970: 1_798_020_000_000)
        let quiet = try Self.setup(true)
        var book = AlertBook()
        book.apply(
            [
                SensorEvent(
                    id: "d-1", kind: .changed, sensor: "door", topic: "door", oldStatus: "closed", newStatus: "open",
                    time: start)
            ], quiet, now: start)
        #expect(book.tick(quiet, now: start).isEmpty, "held for the digest")
        let alert = try #require(book.alerts["doors/door/status"])
        #expect(book.why(alert, quiet, now: start).hasPrefix("held by quiet hours 'night' until "))
        // The reload takes the quiet hours off the rule: the deadline is now, and the digest goes.
        let plain = try Self.setup(false)
        let later = start.adding(milliseconds: 1_000)
        #expect(book.nextDeadline(plain, now: later) == later)
        let sent = book.tick(plain, now: later)
        #expect(sent.map(\.reason) == [.digest], "\(sent.map(\.title))")
        #expect(book.alerts["doors/door/status"]?.told == ["phone"])
    }
}
