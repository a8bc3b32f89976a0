import Foundation
import HubCore
import Testing

@testable import HubNotify

/// A group whose only new alert a silence holds, due in the same tick as another group with something to send
/// (`group_by: [sensor]`, the door silenced, the door and the window opened together): found by `AlertChaosTests`,
/// where hubd died on `resolved.last!` in `groupMessage` (a fatal error, and the same again after each restart, as
/// the journal handed the events over again).
@Suite struct AlertBookSilencedGroupTests {
    @Test func aSilencedGroupDueWithAnotherSendsTheOtherAlone() throws {
        let start = Timestamp(millisecondsSince1970: 1_798_000_000_000)
        var rule = NotificationRule(name: "doors", backends: ["phone"])
        rule.events = [.changed]
        rule.statuses = ["open"]
        var policy = AlertPolicy()
        policy.groupBy = ["sensor"]
        policy.groupWait = .seconds(30)
        rule.alerting = policy
        let setup = AlertBook.Setup(rules: [rule])
        var book = AlertBook()
        let silence = Silence(
            id: "s1", matchers: [try Silence.Matcher(parsing: "door*")], startsAt: start,
            endsAt: start.adding(milliseconds: 3_600_000), createdBy: "ana", comment: "painting")
        book.add(silence, now: start)
        book.apply(
            ["door", "window"].enumerated().map { index, sensor in
                SensorEvent(
                    id: "\(sensor)-\(index + 1)", kind: .changed, sensor: sensor, topic: sensor, oldStatus: "closed",
                    newStatus: "open", time: start)
            }, setup, now: start)
        let sent = book.tick(setup, now: start.adding(milliseconds: 30_000))
        #expect(sent.map(\.alerts) == [["doors/window/status"]])
        #expect(book.counters.silenced == 1)
        // The silence ends: the door's alert goes at once.
        let after = book.tick(setup, now: silence.endsAt)
        #expect(after.map(\.alerts) == [["doors/door/status"]])
    }
}
