import Foundation
import HubCore
import Testing

@testable import HubNotify

@Suite struct TemplateTests {
    let event = SensorEvent(
        id: SensorEvent.randomID(), kind: .changed, sensor: "kitchen", topic: "home/kitchen", oldStatus: "closed",
        newStatus: "open",
        time: Timestamp(iso8601: "2026-11-22T10:00:00Z")!)

    @Test func fillsEveryPlaceholder() throws {
        let template = try Template("{sensor} {topic} {old}→{new} {event} {time} {id} {{literal}}")
        #expect(
            template.render(event, id: "abc")
                == "kitchen home/kitchen closed→open changed 2026-11-22T10:00:00.000Z abc {literal}")
    }

    @Test func refusesUnknownAndUnclosedPlaceholders() {
        #expect(throws: TemplateError.unknownPlaceholder("sensr", template: "{sensr} is {new}")) {
            try Template("{sensr} is {new}")
        }
        #expect(throws: TemplateError.unclosed(template: "{sensor")) { try Template("{sensor") }
    }

    /// A status is data, never a template: braces, quotes, newlines and 256 KiB come out as text, clipped.
    @Test func hostileValuesStayData() throws {
        var hostile = event
        hostile.newStatus = "{sensor}\"'\n\r$(touch /tmp/x)`id`" + String(repeating: "A", count: 256 * 1024)
        let text = try Template("[{new}]").render(hostile, id: "1")
        #expect(text.hasPrefix("[{sensor}\"'\n\r$(touch /tmp/x)`id`AAA"))
        #expect(text.utf8.count <= Template.maximumValueLength + 2)
        #expect(text.hasSuffix("…]"))
        // In a header, CR and LF can't start a new header.
        #expect(!headerValue(text).contains("\n") && !headerValue(text).contains("\r"))
        // In JSON, it is one escaped string.
        let notification = Notification(
            id: "1", backend: "b", rule: "r", event: hostile, title: text, body: text)
        let json = String(decoding: notification.json, as: UTF8.self)
        #expect(!json.contains("\n"))
        #expect(json.contains(#"\"'\n\r$(touch"#))
    }

    @Test func rulesMatchKindsGlobsAndStatuses() {
        var rule = NotificationRule(name: "doors", backends: ["x"])
        rule.events = [.changed]
        rule.sensors = ["door*", "garage"]
        rule.statuses = ["open*"]
        var door = event
        door.sensor = "Door front"
        #expect(rule.matches(door))
        door.newStatus = "closed"
        #expect(!rule.matches(door))
        #expect(!rule.matches(event))  // kitchen
        var silent = door
        silent.kind = .silent
        silent.newStatus = "open"
        #expect(!rule.matches(silent))
    }

    @Test func rateLimitAllowsOnePerSensorPerInterval() {
        var rule = NotificationRule(name: "r", backends: ["x"])
        rule.rateLimit = .seconds(1200)
        var limiter = RateLimiter()
        let start = ContinuousClock.now
        let answers = [
            limiter.allow(rule: rule, sensor: "a", now: start),
            limiter.allow(rule: rule, sensor: "a", now: start + .seconds(1199)),
            limiter.allow(rule: rule, sensor: "b", now: start + .seconds(1)),
            limiter.allow(rule: rule, sensor: "a", now: start + .seconds(1200)),
        ]
        #expect(answers == [true, false, true, true])
        // The event let through is let through again (a cluster's step tried again); another event of it is not.
        let retried = [
            limiter.allow(rule: rule, sensor: "c", event: "c-1", now: start),
            limiter.allow(rule: rule, sensor: "c", event: "c-1", now: start + .seconds(1)),
            limiter.allow(rule: rule, sensor: "c", event: "c-2", now: start + .seconds(2)),
        ]
        #expect(retried == [true, true, false])
    }

    @Test func retryDelaysGrowWithJitterUpToTheCap() {
        var policy = DeliveryPolicy()
        policy.initialDelay = .seconds(2)
        policy.maximumDelay = .seconds(60)
        for attempt in 1...10 {
            let base = min(2 * pow(2, Double(attempt - 1)), 60)
            let delay = policy.delay(attempt: attempt, requested: nil).seconds
            #expect(delay >= base * 0.5 && delay <= base)
        }
        // Retry-After asks for longer: honoured.
        #expect(policy.delay(attempt: 1, requested: .seconds(120)).seconds == 120)
        #expect(HTTPDelivery.retryAfter("7") == .seconds(7))
        let date = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(HTTPDelivery.retryAfter("Fri, 15 Jan 2027 08:00:30 GMT", now: date) == .seconds(30))
    }
}
