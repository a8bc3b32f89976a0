import Foundation
import HubCore
import Testing

@testable import HubNotify

/// The alert stage as a value: events and a clock in, messages out, each of the cases on its own.
@Suite final class AlertBookTests {
    static let start = Timestamp(millisecondsSince1970: 1_798_000_000_000)
    var now = AlertBookTests.start
    var book = AlertBook()
    var sequence = 0

    static func rule(
        _ name: String = "power", events: Set<SensorEvent.Kind> = [.silent, .offline], sensors: [String] = [],
        statuses: [String] = [], backends: [String] = ["phone"], priority: Int = 3,
        _ configure: (inout AlertPolicy) -> Void = { _ in }
    ) -> NotificationRule {
        var rule = NotificationRule(name: name, backends: backends)
        rule.events = events
        rule.sensors = sensors
        rule.statuses = statuses
        rule.priority = priority
        var policy = AlertPolicy()
        policy.groupWait = .seconds(30)
        policy.groupInterval = .seconds(300)
        configure(&policy)
        rule.alerting = policy
        return rule
    }

    func event(_ sensor: String, _ kind: SensorEvent.Kind, _ status: String, old: String = "") -> SensorEvent {
        sequence += 1
        return SensorEvent(
            id: "\(sensor)-\(sequence)", kind: kind, sensor: sensor, topic: sensor, oldStatus: old, newStatus: status,
            time: now)
    }

    func offline(_ sensors: [String], _ setup: AlertBook.Setup) {
        let events = sensors.map { event($0, .silent, "offline") }
        book.apply(events, setup, now: now)
    }

    func back(_ sensors: [String], _ setup: AlertBook.Setup) {
        let events = sensors.map { event($0, .recovered, "online", old: "offline") }
        book.apply(events, setup, now: now)
    }

    /// Moves the clock and returns what is due.
    func advance(_ seconds: Int64, _ setup: AlertBook.Setup) -> [AlertMessage] {
        now = now.adding(milliseconds: seconds * 1000)
        return book.tick(setup, now: now)
    }

    @Test func aPowerCutIsOneMessageAndItsEndAnother() {
        let setup = AlertBook.Setup(rules: [Self.rule()])
        let sensors = (1...40).map { "s\($0)" }
        for (index, sensor) in sensors.enumerated() {
            offline([sensor], setup)
            if index % 20 == 19 { now = now.adding(milliseconds: 1000) }
        }
        // One flapped inside the wait: it is in no message.
        back(["s7"], setup)
        #expect(book.tick(setup, now: now).isEmpty, "nothing before group_wait")
        #expect(book.nextDeadline(setup, now: now) == Self.start.adding(milliseconds: 30_000))
        let sent = advance(29, setup)
        #expect(sent.count == 1)
        #expect(sent.first?.title == "39 sensors offline")
        #expect(sent.first?.body.hasPrefix("s1, s2, s3, s4, s5, s6, s8,") == true)
        #expect(sent.first?.body.hasSuffix("and 29 more") == true)
        #expect(sent.first?.reason == .firing && sent.first?.backends == ["phone"])
        #expect(book.counters.flapped == 1)

        back(sensors.filter { $0 != "s7" }, setup)
        #expect(advance(60, setup).isEmpty, "a changed group waits for group_interval")
        let resolved = advance(240, setup)
        #expect(resolved.map(\.title) == ["39 sensors back"])
        #expect(resolved.first?.reason == .resolved)
        #expect(book.alerts.isEmpty)
        #expect(advance(3600, setup).isEmpty)
    }

    @Test func oneAlertReadsAsItsRuleSaysAndAFlapSendsNothing() {
        var rule = Self.rule()
        rule.title = try! Template("{sensor} is {new}")
        let setup = AlertBook.Setup(rules: [rule])
        offline(["shed"], setup)
        now = now.adding(milliseconds: 10_000)
        back(["shed"], setup)
        #expect(advance(60, setup).isEmpty)
        offline(["shed"], setup)
        let sent = advance(30, setup)
        #expect(sent.map(\.title) == ["shed is offline"])
        #expect(sent.first?.alerts == ["power/shed/offline"])
        // Re-sent by the same state after a crash: the same key; the book's epoch before its number.
        #expect(sent.first?.key == "power#0~\(book.epoch).1")
        #expect(book.epoch.count == 8 && book.epoch.allSatisfy(\.isHexDigit))
    }

    @Test func aGatewaysChildrenWaitForIt() {
        let children = (1...10).map { "zb\($0)" }
        let setup = AlertBook.Setup(rules: [Self.rule()]) { sensor in
            AlertBook.SensorFacts(parent: sensor.hasPrefix("zb") ? "bridge" : nil)
        }
        // Some children go silent first, then the bridge, then the rest.
        offline(Array(children.prefix(4)), setup)
        offline(["bridge"], setup)
        offline(Array(children.dropFirst(4)), setup)
        let sent = advance(30, setup)
        #expect(sent.map(\.alerts) == [["power/bridge/offline"]])
        // A child back while the bridge is still offline: it was never sent, and nothing is.
        back(["zb1"], setup)
        #expect(book.counters.heldAndClosed == 1)
        #expect(advance(60, setup).isEmpty)
        // The bridge is back, and 9 children with it (within their wait, which starts again as the bridge is back):
        // one stays offline and is sent, with the bridge's resolution.
        back(["bridge"] + children.dropFirst().dropLast(), setup)
        let after = advance(300, setup)
        #expect(after.count == 1)
        #expect(after.first?.alerts.sorted() == ["power/bridge/offline", "power/zb10/offline"])
        #expect(after.first?.body.contains("zb10") == true && after.first?.body.contains("Resolved: bridge") == true)
        #expect(book.counters.flapped == 8)
    }

    @Test func aSilenceHoldsAlertsAndItsEndSendsThoseStillOpen() throws {
        let setup = AlertBook.Setup(rules: [Self.rule("doors", events: [.changed], statuses: ["open"])])
        let silence = Silence(
            id: "s1", matchers: [try Silence.Matcher(parsing: "door*")], startsAt: now,
            endsAt: now.adding(milliseconds: 3_600_000), createdBy: "ana", comment: "painting the doors")
        book.add(silence, now: now)
        book.apply([event("door-front", .changed, "open", old: "closed")], setup, now: now)
        book.apply([event("window", .changed, "open", old: "closed")], setup, now: now)
        let sent = advance(30, setup)
        #expect(sent.map(\.alerts) == [["doors/window/status"]])
        #expect(book.counters.silenced == 1)
        #expect(advance(1800, setup).isEmpty)
        #expect(book.nextDeadline(setup, now: now) == silence.endsAt)
        // The silence ends with the door still open: sent at once (with the window, still open: the message
        // replaces the group's earlier one on the phone). Only the door is newly told.
        now = silence.endsAt
        let after = book.tick(setup, now: now)
        #expect(after.map(\.alerts) == [["doors/window/status", "doors/door-front/status"]])
        #expect(after.first?.title == "2 sensors open")
        #expect(book.alerts["doors/window/status"]?.notified == Self.start.adding(milliseconds: 30_000))
    }

    @Test func analertToldBeforeASilenceGetsItsResolvedMessage() throws {
        let setup = AlertBook.Setup(rules: [Self.rule("doors", events: [.changed], statuses: ["open"])])
        book.apply([event("door", .changed, "open", old: "closed")], setup, now: now)
        #expect(advance(30, setup).count == 1)
        book.add(
            Silence(
                id: "s1", matchers: [try Silence.Matcher(parsing: "sensor=door")], startsAt: now,
                endsAt: now.adding(milliseconds: 3_600_000), createdBy: "ana", comment: ""), now: now)
        book.apply([event("door", .changed, "closed", old: "open")], setup, now: now)
        let sent = advance(300, setup)
        #expect(sent.map(\.reason) == [.resolved])
        let (first, second) = (book.expire(silence: "s1", now: now), book.expire(silence: "s1", now: now))
        #expect(first && !second)
    }

    @Test func quietHoursWaitForTheDigestButUrgentPasses() throws {
        let zone = try #require(TimeZone(identifier: "Europe/Berlin"))
        let night = QuietHours(name: "night", from: 22 * 60, to: 7 * 60, zone: zone)
        let doors = Self.rule("doors", events: [.changed], sensors: ["door"]) { $0.quietHours = ["night"] }
        let leak = Self.rule("leak", events: [.changed], sensors: ["leak"], statuses: ["wet"], priority: 5) {
            $0.quietHours = ["night"]
        }
        let setup = AlertBook.Setup(rules: [doors, leak], quietHours: [night])
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let eleven = calendar.date(from: DateComponents(year: 2026, month: 11, day: 27, hour: 23))!
        now = Timestamp(eleven)
        book.apply([event("door", .changed, "open", old: "closed")], setup, now: now)
        book.apply([event("leak", .changed, "wet", old: "dry")], setup, now: now)
        let sent = advance(30, setup)
        #expect(sent.map(\.rule) == ["leak"], "urgent passes")
        let seven = Timestamp(calendar.date(from: DateComponents(year: 2026, month: 11, day: 28, hour: 7))!)
        #expect(book.nextDeadline(setup, now: now) == seven)
        #expect(advance(3600, setup).isEmpty)
        now = seven
        let morning = book.tick(setup, now: now)
        #expect(morning.map(\.reason) == [.digest])
        #expect(morning.first?.body == "Events: door open")
    }

    @Test func remindersStopAtAnAcknowledgementAndEscalationGoesOnce() {
        let rule = Self.rule("leak", events: [.changed], statuses: ["wet"]) {
            $0.repeatEvery = [.seconds(900), .seconds(1800)]
            $0.escalate = [.init(after: .seconds(600), backends: ["partner"])]
        }
        let setup = AlertBook.Setup(rules: [rule])
        book.apply([event("leak", .changed, "wet", old: "dry")], setup, now: now)
        #expect(advance(30, setup).map(\.reason) == [.firing])
        #expect(advance(600, setup).map(\.reason) == [.escalation])
        let reminder = advance(300, setup)
        #expect(reminder.map(\.reason) == [.reminder])
        #expect(reminder.first?.body == "leak — open for 15 min, not acknowledged")
        #expect(advance(1800, setup).map(\.reason) == [.reminder])
        let acknowledged = book.acknowledge("leak/leak/status", by: "ana", via: "test", now: now)
        #expect(acknowledged)
        // The copies already sent are taken back (where a backend can), and nothing more comes.
        let takenBack = advance(1, setup)
        #expect(takenBack.map(\.reason) == [.acknowledged])
        #expect(takenBack.first?.backends == ["partner", "phone"] && takenBack.first?.group == "leak")
        #expect(takenBack.first?.body == "leak — acknowledged by ana via test")
        #expect(advance(7200, setup).isEmpty)
        // Resolved: the escalation's backend was told it was firing, so it hears it ended.
        book.apply([event("leak", .changed, "dry", old: "wet")], setup, now: now)
        let resolved = advance(300, setup)
        #expect(resolved.first?.backends == ["phone", "partner"])

        // It fires again: acknowledgement and escalation start over; acknowledged at once, no escalation.
        book.apply([event("leak", .changed, "wet", old: "dry")], setup, now: now)
        #expect(advance(300, setup).count == 1)
        #expect(book.alerts["leak/leak/status"]?.acknowledged == nil)
        book.acknowledge("leak/leak/status", by: "ana", via: "test", now: now)
        #expect(advance(3600, setup).map(\.reason) == [.acknowledged])
    }

    @Test func remindersHaveACap() {
        let rule = Self.rule("leak", events: [.changed], statuses: ["wet"]) {
            $0.repeatEvery = [.seconds(60)]
            $0.repeatLimit = 3
        }
        let setup = AlertBook.Setup(rules: [rule])
        book.apply([event("leak", .changed, "wet", old: "dry")], setup, now: now)
        var reasons: [AlertMessage.Reason] = []
        for _ in 0..<20 { reasons += advance(30, setup).map(\.reason) }
        #expect(reasons == [.firing, .reminder, .reminder, .reminder])
    }

    @Test func aStormIsOneOutageMessage() {
        let rules = (1...3).map { index in
            Self.rule("r\(index)", sensors: ["r\(index)-*"], backends: index == 3 ? ["mail"] : ["phone"]) {
                $0.groupBy = ["sensor"]
            }
        }
        let setup = AlertBook.Setup(rules: rules, storm: 20)
        offline((1...3).flatMap { rule in (1...10).map { "r\(rule)-\($0)" } }, setup)
        let sent = advance(30, setup)
        #expect(sent.count == 1)
        #expect(sent.first?.reason == .outage && sent.first?.title == "Outage: 30 alerts")
        #expect(sent.first?.backends == ["phone", "mail"])
        // Below the limit: one message per group.
        back((1...3).flatMap { rule in (1...10).map { "r\(rule)-\($0)" } }, setup)
        #expect(advance(300, setup).map(\.reason) == [.outage])
        offline(["r1-1", "r2-1"], setup)
        #expect(advance(30, setup).count == 2)
    }

    @Test func theBookReadsBackAsItWas() throws {
        let rule = Self.rule { $0.repeatEvery = [.seconds(900)] }
        let setup = AlertBook.Setup(rules: [rule])
        offline(["a", "b"], setup)
        _ = advance(30, setup)
        book.acknowledge("power/a/offline", by: "ana", via: "ntfy", now: now)
        let data = try JSONEncoder().encode(book)
        var again = try JSONDecoder().decode(AlertBook.self, from: data)
        #expect(again.alerts == book.alerts)
        let later = now.adding(milliseconds: 900_000)
        let (read, kept) = (again.tick(setup, now: later), book.tick(setup, now: later))
        // The reminder is due in both, and names only the alert nobody acknowledged: an empty tick would prove nothing.
        #expect(read == kept && read.map(\.alerts) == [["power/b/offline"]])
    }

    /// Events the journal hands over again after a crash are taken once: the resolved alert is not opened anew.
    @Test func eventsHandedOverAgainAreTakenOnce() {
        let setup = AlertBook.Setup(rules: [Self.rule()])
        let down = event("shed", .silent, "offline")
        let up = event("shed", .recovered, "online", old: "offline")
        book.apply([down], setup, now: now)
        #expect(advance(30, setup).count == 1)
        book.apply([up], setup, now: now)
        #expect(advance(300, setup).map(\.reason) == [.resolved])
        book.apply([down, up], setup, now: now)
        #expect(book.counters.replayed == 2 && book.alerts.isEmpty)
        #expect(advance(300, setup).isEmpty)
    }

    @Test func matchersReadAsPeopleWriteThem() throws {
        let fields = AlertFields(
            rule: "r", sensor: "Door-Front", kind: "status", status: "open", labels: ["room": "hall"])
        #expect(try Silence.Matcher(parsing: "door*").matches(fields))
        #expect(try Silence.Matcher(parsing: "room=hall").matches(fields))
        #expect(try !Silence.Matcher(parsing: "kind!=status").matches(fields))
        #expect(try Silence.Matcher(parsing: "room!=garage").matches(fields))
        #expect(throws: AlertInputError.self) { try Silence.Matcher(parsing: "=x") }
        #expect(throws: AlertInputError.self) { try Silence.Matcher(parsing: "sensor=") }
    }

    @Test func quietHoursRunOvernightOnTheirDays() throws {
        let zone = try #require(TimeZone(identifier: "Europe/Berlin"))
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        func at(_ day: Int, _ hour: Int, _ minute: Int = 0) -> Timestamp {
            Timestamp(calendar.date(from: DateComponents(year: 2026, month: 11, day: day, hour: hour, minute: minute))!)
        }
        // 2026-11-27 is a Friday.
        let night = QuietHours(name: "n", from: 22 * 60, to: 7 * 60, days: [6], zone: zone)
        #expect(night.end(containing: at(27, 23)) == at(28, 7))
        #expect(night.end(containing: at(28, 6, 59)) == at(28, 7))
        #expect(!night.contains(at(28, 7)) && !night.contains(at(27, 21, 59)))
        #expect(!night.contains(at(28, 23)), "Saturday night is not one of its days")
        let day = QuietHours(name: "d", from: 9 * 60, to: 24 * 60, zone: zone)
        #expect(day.end(containing: at(27, 12)) == at(28, 0))
        #expect(QuietHours.minutes("24:00") == 1440 && QuietHours.minutes("24:01") == nil)
        #expect(QuietHours.minutes("7:5") == nil && QuietHours.minutes("07:05") == 425)
    }
}
