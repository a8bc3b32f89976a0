import HubCore
import Testing

@testable import HubNotify

/// The storm guard judged over time (issue 52), as a value: events and a clock in, messages out. The hub's router
/// ticks the book at its next deadline; here the clock moves 100 ms at a time and the book is ticked at each step.
@Suite struct StormTests {
    static let start = Timestamp(millisecondsSince1970: 1_798_000_000_000)

    final class Run {
        var now = StormTests.start
        var book = AlertBook()
        var sequence = 0
        var sent: [AlertMessage] = []
        /// When each message went.
        var times: [Timestamp] = []
        let setup: AlertBook.Setup

        init(_ configure: (inout AlertPolicy) -> Void = { _ in }, storm: Int = 20, rules: Int = 1) {
            var all: [NotificationRule] = []
            for index in 0..<rules {
                var rule = NotificationRule(
                    name: rules == 1 ? "power" : "power\(index)", backends: index == 2 ? ["mail"] : ["phone"])
                rule.events = [.offline, .recovered]
                if rules > 1 { rule.sensors = ["r\(index)-*"] }
                var policy = AlertPolicy()
                policy.groupBy = ["sensor"]
                policy.groupWait = .seconds(3)
                policy.groupInterval = .seconds(3)
                configure(&policy)
                rule.alerting = policy
                all.append(rule)
            }
            setup = AlertBook.Setup(rules: all, storm: storm)
        }

        func event(_ sensor: String, _ kind: SensorEvent.Kind) -> SensorEvent {
            sequence += 1
            return SensorEvent(
                id: "\(sensor)-\(sequence)", kind: kind, sensor: sensor, topic: sensor,
                oldStatus: kind == .offline ? "closed" : "offline", newStatus: kind == .offline ? "offline" : "closed",
                time: now)
        }

        /// Moves the clock by `milliseconds` in 100 ms steps, ticking at each.
        func run(_ milliseconds: Int64) {
            var left = milliseconds
            while left > 0 {
                let step = min(100, left)
                now = now.adding(milliseconds: step)
                left -= step
                let due = book.tick(setup, now: now)
                sent += due
                times += due.map { _ in now }
            }
        }

        /// `sensors` go `kind`, spread evenly over `milliseconds` (all at once for 0), the clock ticking meanwhile.
        func spread(_ sensors: [String], _ kind: SensorEvent.Kind, over milliseconds: Int64) {
            let gap = sensors.count > 1 ? milliseconds / Int64(sensors.count) : 0
            for sensor in sensors {
                book.apply([event(sensor, kind)], setup, now: now)
                if gap > 0 { run(gap) }
            }
        }

        var titles: [String] { sent.map(\.title) }
    }

    static let sensors = (1...300).map { "s\($0)" }

    /// The cases: 300 at once, spread over 3.2 s (one every ~10 ms) and over 5 s; then all back at once. Each
    /// phase: at most one outage message and one update, all of it in outage messages, no alert alone.
    @Test(arguments: [Int64(0), 3_200, 5_000, 30_000, 90_000])
    func aPowerCutIsOneOutageHoweverTheWillsCome(_ spread: Int64) {
        let run = Run()
        run.spread(Self.sensors, .offline, over: spread)
        run.run(30_000)
        let cut = run.sent
        #expect(cut.count <= 2 && cut.allSatisfy { $0.reason == .outage }, "\(spread) ms: \(run.titles)")
        #expect(cut.last?.title == "Outage: 300 alerts", "\(spread) ms: \(run.titles)")
        #expect(Set(cut.flatMap(\.alerts)).count == 300)
        run.sent = []
        run.spread(Self.sensors, .recovered, over: spread)
        run.run(30_000)
        #expect(run.titles == ["Outage over: 300 back"], "\(spread) ms")
        #expect(run.book.alerts.isEmpty && run.book.groups.isEmpty)
    }

    /// One group (no group_by) is its own aggregate: a storm of one group is its group's message, not an outage.
    @Test func oneGroupIsItsOwnMessage() {
        let run = Run { $0.groupBy = [] }
        run.spread(Array(Self.sensors.prefix(40)), .offline, over: 2_000)
        run.run(10_000)
        #expect(run.titles == ["40 sensors offline"])
    }

    /// Two alerts of different groups a second apart, far below a storm: each its own message, each at its own
    /// group_wait (nothing is held while no storm gathers).
    @Test func twoAlertsAreTwoMessagesAtTheirGroupWait() {
        let run = Run()
        run.spread(["door"], .offline, over: 0)
        run.run(1_000)
        run.spread(["window"], .offline, over: 0)
        run.run(30_000)
        #expect(run.titles == ["door is offline", "window is offline"])
        #expect(run.sent.allSatisfy { $0.reason == .firing })
        let delays = run.times.map { $0.millisecondsSince1970 - StormTests.start.millisecondsSince1970 }
        #expect(delays == [3_000, 4_000], "\(delays)")
    }

    /// The guard turned off (a limit no cut reaches): nothing is held, each group goes at its group_wait.
    @Test func withTheGuardOffNothingIsHeld() {
        let run = Run(storm: 1_000_000)
        run.spread(Array(Self.sensors.prefix(50)), .offline, over: 0)
        run.run(3_000)
        #expect(run.sent.count == 50 && run.sent.allSatisfy { $0.reason == .firing })
    }

    /// A trickle that gathers (at least half the limit within the window) but never becomes a storm holds a group at
    /// most a storm window, not for ever.
    @Test func aTrickleHoldsAGroupAtMostAStormWindow() throws {
        let run = Run(storm: 200)
        for index in 0..<260 {
            run.spread(["t\(index)"], .offline, over: 0)
            run.run(1_000)
        }
        // t110 opened at 110 s and fell due at 113 s, with 111 changes in the window (gathering, not a storm).
        let sent = try #require(run.sent.firstIndex { $0.alerts == ["power/t110/offline"] }, "t110 went")
        let after = run.times[sent].millisecondsSince1970 - StormTests.start.millisecondsSince1970
        #expect(after > 113_000 + 1_000 && after <= 113_000 + 120_000 + 1_000, "\(after) ms")
        // The first ones, before anything gathered, went at their group_wait.
        let first = try #require(run.sent.firstIndex { $0.alerts == ["power/t0/offline"] })
        #expect(run.times[first].millisecondsSince1970 - StormTests.start.millisecondsSince1970 == 3_000)
    }

    /// The outage is one group: one reminder, one escalation, one acknowledgement's take-back; not one per sensor.
    @Test func anOutageRemindsEscalatesAndIsAcknowledgedAsOne() throws {
        let run = Run {
            $0.repeatEvery = [.seconds(60)]
            $0.escalate = [.init(after: .seconds(120), backends: ["partner"])]
        }
        run.spread(Self.sensors, .offline, over: 3_000)
        run.run(20_000)
        #expect(run.sent.count <= 2)
        run.sent = []
        run.run(60_000)
        #expect(run.sent.map(\.reason) == [.reminder], "\(run.titles)")
        #expect(run.sent.first?.title == "Still 300 sensors offline")
        run.sent = []
        run.run(60_000)
        let reasons = run.sent.map(\.reason)
        #expect(reasons.filter { $0 == .escalation }.count == 1, "\(run.titles)")
        // Acknowledged from the outage message's button: every alert of it, and one take-back.
        let key = try #require(run.book.links.first?.key)
        #expect(run.book.apply(.act(handle: key, action: .acknowledge, by: "ana", via: "ntfy", at: run.now), now: run.now)
            .hasPrefix("acknowledged"))
        run.sent = []
        run.run(5_000)
        #expect(run.book.alerts.values.allSatisfy { $0.acknowledged != nil })
        #expect(run.sent.map(\.reason) == [.acknowledged], "\(run.titles)")
    }

    /// Several rules: the outage goes to each of their backends, and the return too.
    @Test func anOutageAcrossRulesGoesToEachRulesBackends() {
        let run = Run(rules: 3)
        let sensors = (0..<3).flatMap { rule in (1...10).map { "r\(rule)-\($0)" } }
        run.spread(sensors, .offline, over: 0)
        run.run(10_000)
        #expect(run.titles == ["Outage: 30 alerts"])
        #expect(Set(run.sent.first?.backends ?? []) == ["phone", "mail"])
        run.sent = []
        run.spread(sensors, .recovered, over: 0)
        run.run(20_000)
        #expect(run.titles == ["Outage over: 30 back"])
        #expect(Set(run.sent.first?.backends ?? []) == ["phone", "mail"])
    }
}
