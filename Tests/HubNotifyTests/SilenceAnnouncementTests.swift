import HubCore
import Testing

@testable import HubNotify

/// A silence added, ended early, or a snooze taken is announced to the backends its alerts would reach (issue 51):
/// nobody silences the alarms unseen.
@Suite struct SilenceAnnouncementTests {
    static let yaml = """
        notifiers:
          backends:
            phone: { type: file, path: /dev/null }
            pager: { type: file, path: /dev/null }
            log: { type: file, path: /dev/null }
          rules:
            doors: { events: [changed], statuses: [open], backends: [phone], group_wait: 0s, escalate: [{after: 10m, to: [pager]}] }
            leak: { events: [changed], statuses: [wet], backends: [pager], group_wait: 0s }
            audit: { backends: [log] }
        """

    static func setup(_ extra: String = "") throws -> AlertBook.Setup {
        try NotifierConfiguration.parse(extra + yaml).alertSetup
    }

    let now = Timestamp(millisecondsSince1970: 1_796_000_000_000)

    func silence(_ matchers: [String], hours: Int64 = 2, by: String = "ana", comment: String = "painting") -> Silence {
        Silence(
            id: "s1", matchers: matchers.map { try! Silence.Matcher(parsing: $0) }, startsAt: now,
            endsAt: now.adding(milliseconds: hours * 3_600_000), createdBy: by, comment: comment)
    }

    @Test func aSilenceAddedAndEndedIsAnnouncedToWhoeverItsAlertsWouldReach() throws {
        let setup = try Self.setup()
        var book = AlertBook()
        #expect(book.apply(.silence(silence(["door*"])), now: now) == "silence added")
        let added = book.tick(setup, now: now)
        #expect(added.count == 1)
        let message = try #require(added.first)
        #expect(message.reason == .silence && message.title == "ana silenced door* for 2 h — painting")
        #expect(message.body.hasPrefix("Until ") && message.body.contains("hubctl silences expire s1"))
        // Every rule could hold a door's messages, the escalation's pager and the plain rule's log included.
        #expect(message.backends.sorted() == ["log", "pager", "phone"])
        #expect(message.priority == 2 && message.event.kind == .silence && message.alerts.isEmpty)
        // No buttons: nothing to acknowledge.
        #expect(book.links.isEmpty)
        #expect(book.tick(setup, now: now).isEmpty, "announced once")

        let later = now.adding(milliseconds: 600_000)
        #expect(book.apply(.expire(silence: "s1", at: later, by: "ben"), now: later) == "silence expired")
        let ended = book.tick(setup, now: later)
        #expect(ended.map(\.title) == ["ben ended the silence on door*"])
        #expect(ended.first?.group == message.group, "the phone replaces the first with the second")
        #expect(ended.first?.key != message.key)
    }

    @Test func aRuleMatcherNarrowsWhereAndAnnounceChoosesIt() throws {
        var book = AlertBook()
        book.apply(.silence(silence(["rule=leak", "room=cellar"], hours: 30, comment: "")), now: now)
        let messages = book.tick(try Self.setup(), now: now)
        #expect(messages.map(\.backends) == [["pager"]])
        #expect(messages.first?.title == "ana silenced rule=leak room=cellar for 30 h")

        var quiet = AlertBook()
        quiet.apply(.silence(silence(["door*"])), now: now)
        #expect(quiet.tick(try Self.setup("alerts: { announce: [] }\n"), now: now).isEmpty)
        var chosen = AlertBook()
        chosen.apply(.silence(silence(["door*"])), now: now)
        #expect(chosen.tick(try Self.setup("alerts: { announce: [log] }\n"), now: now).map(\.backends) == [["log"]])
        #expect(throws: ConfigurationError.self) { try Self.setup("alerts: { announce: [nobody] }\n") }
    }

    @Test func aSnoozeFromAPhoneIsAnnouncedOnce() throws {
        let setup = try Self.setup()
        var book = AlertBook()
        let open = SensorEvent(
            id: "front-1", kind: .changed, sensor: "front door", topic: "front", oldStatus: "closed",
            newStatus: "open", time: now)
        book.apply([open], setup, now: now)
        let firing = book.tick(setup, now: now)
        let key = try #require(firing.first?.key)
        let outcome = book.apply(
            .act(handle: ActionToken.handle(of: key), action: .snooze, by: "ben", via: "ntfy", at: now), now: now)
        #expect(outcome.hasPrefix("snoozed"))
        let said = book.tick(setup, now: now).filter { $0.reason == .silence }
        #expect(said.map(\.title) == ["ben snoozed front door for 1 h"])
        #expect(said.first?.alerts == ["doors/front door/status"])
    }

    @Test(arguments: [
        (Int64(45_000), "45 s"), (Int64(600_000), "10 min"), (Int64(7_200_000), "2 h"),
        (Int64(5_400_000), "1 h 30 min"), (Int64(3 * 86_400_000), "3 days"),
    ])
    func lengthsReadAsAPersonSaysThem(_ milliseconds: Int64, _ text: String) {
        #expect(AlertBook.spoken(milliseconds) == text)
    }
}
