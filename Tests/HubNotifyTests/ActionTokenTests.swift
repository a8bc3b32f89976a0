import Crypto
import Foundation
import HubCore
import Testing

@testable import HubNotify

/// The tokens of alert buttons and links: short enough for Telegram, signed, expiring, used once.
@Suite struct ActionTokenTests {
    let key = SymmetricKey(size: .bits256)
    let now = Timestamp(millisecondsSince1970: 1_798_000_000_000)

    @Test func aTokenReadsBackAndFitsTelegram() throws {
        let token = ActionToken(
            handle: ActionToken.handle(of: "power#3"), action: .snooze, expires: now.adding(milliseconds: 60_000))
        let text = token.signed(with: key)
        #expect(text.count == 31 && ("ack:" + text).utf8.count <= 64)
        #expect(text.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
        let read = try ActionToken(verifying: text, key: key, now: now)
        #expect(read.handle == token.handle && read.action == .snooze)
        #expect(read.expires == Timestamp(millisecondsSince1970: (now.millisecondsSince1970 + 60_000) / 1000 * 1000))
    }

    @Test func forgedAndExpiredTokensAreRefused() {
        let text = ActionToken(handle: "a1b2c3d4e5f6", action: .acknowledge, expires: now.adding(milliseconds: 1000))
            .signed(with: key)
        #expect(throws: ActionToken.Refusal.forged) {
            try ActionToken(verifying: text, key: SymmetricKey(size: .bits256), now: now)
        }
        for index in text.indices {
            var changed = text
            changed.replaceSubrange(index...index, with: text[index] == "A" ? "B" : "A")
            #expect(throws: ActionToken.Refusal.self) { try ActionToken(verifying: changed, key: key, now: now) }
        }
        #expect(throws: ActionToken.Refusal.forged) { try ActionToken(verifying: "x", key: key, now: now) }
        #expect(throws: ActionToken.Refusal.expired) {
            try ActionToken(verifying: text, key: key, now: now.adding(milliseconds: 1000))
        }
    }

    @Test func aLinkActsOnceOnTheAlertsItsMessageNamed() {
        var rule = NotificationRule(name: "leak", backends: ["phone"])
        rule.events = [.changed]
        rule.statuses = ["wet"]
        var policy = AlertPolicy()
        policy.groupWait = .seconds(1)
        rule.alerting = policy
        let setup = AlertBook.Setup(rules: [rule])
        var book = AlertBook()
        let event = SensorEvent(
            id: "k-1", kind: .changed, sensor: "kitchen", topic: "kitchen", oldStatus: "dry", newStatus: "wet",
            time: now)
        book.apply([event], setup, now: now)
        let later = now.adding(milliseconds: 1000)
        let message = try! #require(book.tick(setup, now: later).first)
        let handle = ActionToken.handle(of: message.key)
        #expect(book.refusal(of: handle, now: later) == nil)
        let outcome = book.apply(.act(handle: handle, action: .snooze, by: "ntfy", via: "ntfy", at: later), now: later)
        #expect(outcome == "snoozed for 1 h: leak/kitchen/status")
        #expect(
            book.silences.count == 1 && book.silences[0].silences(book.alerts["leak/kitchen/status"]!.fields, at: later)
        )
        #expect(book.refusal(of: handle, now: later)?.hasPrefix("already used by ntfy") == true)
        #expect(
            book.apply(.act(handle: handle, action: .acknowledge, by: "x", via: "x", at: later), now: later).hasPrefix(
                "refused"))
        #expect(book.refusal(of: "000000000000", now: later) == "this notification's alerts are no longer open")
    }
}
