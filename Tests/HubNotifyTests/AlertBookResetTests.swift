import Foundation
import HubCore
import HubSupport
import HubTestKit
import Testing

@testable import HubNotify

/// An alert book that is lost or can't be read is begun again without going quiet (issue 51): before, the new book
/// counted its messages from `~1` again, keys the outbox still held as done, so the next alerts were silently not
/// delivered, and the handles of used links came back, so a used snooze link snoozed again. Now a book carries an
/// epoch of its own in every key and handle, the reset is logged as an error and counted, and each unreadable file is
/// kept, none over another.
@Suite struct AlertBookResetTests {
    static func yaml(_ out: String) -> String {
        """
        notifiers:
          backends:
            out: { type: file, path: "\(out)" }
          rules:
            leak: { events: [changed], statuses: [wet], backends: [out], group_wait: 0s, group_interval: 1s }
        """
    }

    static func leak(_ sequence: Int, _ old: String, _ new: String) -> SensorEvent {
        SensorEvent(
            id: "kitchen-\(sequence)", kind: .changed, sensor: "kitchen", topic: "kitchen", oldStatus: old,
            newStatus: new, time: .now)
    }

    /// The ids of the messages the file backend wrote, in order.
    static func delivered(_ path: String) -> [String] {
        AppendFile.lines(AppendFile.contents(path)).compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any])?["id"] as? String
        }
    }

    /// One run of the hub: the leak opens (its message goes; the link of the message is used), then closes.
    static func run(_ directory: TemporaryDirectory, from sequence: Int, log: LogRecorder? = nil) async throws -> (
        key: String, statistics: AgentStatus.Alerts
    ) {
        let out = directory.file("out.jsonl")
        let before = delivered(out).count
        return try await withRouter(yaml(out), directory: directory, log: log) { router in
            router.submit(leak(sequence, "dry", "wet"))
            try await eventually("the firing message delivered") { delivered(out).count == before + 1 }
            let key = try #require(delivered(out).last)
            let handle = ActionToken.handle(of: key)
            #expect(router.alerts.book.refusal(of: handle, now: .now) == nil)
            let outcome = router.alerts.update {
                $0.apply(.act(handle: handle, action: .acknowledge, by: "ana", via: "link", at: .now), now: .now)
            }
            #expect(outcome.hasPrefix("acknowledged"))
            router.alerts.save()
            router.submit(leak(sequence + 1, "wet", "dry"))
            try await eventually("the resolved message delivered") { delivered(out).count == before + 2 }
            return (key, router.statistics.alerts)
        }
    }

    @Test func anUnreadableOrMissingBookNeverSilencesALaterAlertNorRevivesAUsedLink() async throws {
        let directory = try TemporaryDirectory()
        let book = directory.file("alerts.json")
        let first = try await Self.run(directory, from: 1)
        #expect(first.statistics.resets == 0)
        var keys = [first.key]

        // Unreadable, twice: each copy kept.
        for round in 1...2 {
            try Data("{\"alerts\": tru".utf8).write(to: URL(fileURLWithPath: book))
            let log = LogRecorder()
            let next = try await Self.run(directory, from: round * 10, log: log)
            #expect(!keys.contains(next.key), "round \(round): a key the outbox had seen came again")
            keys.append(next.key)
            #expect(next.statistics.resets == round)
            #expect(next.statistics.lastReset?.contains("could not be read") == true)
            let errors = log.all.filter { $0.level == .error && $0.message.contains("alert book could not be read") }
            #expect(errors.count == 1, "round \(round): the reset logged as an error")
            let kept = try FileManager.default.contentsOfDirectory(atPath: directory.path)
                .filter { $0.hasPrefix("alerts.json.unreadable-") }
            #expect(kept.count == round, "round \(round): \(kept)")
            for name in kept {
                #expect(try String(contentsOfFile: directory.file(name), encoding: .utf8) == "{\"alerts\": tru")
            }
        }

        // Missing: noticed, by the book's mark, and counted too.
        try FileManager.default.removeItem(atPath: book)
        let log = LogRecorder()
        let last = try await Self.run(directory, from: 100, log: log)
        #expect(!keys.contains(last.key))
        keys.append(last.key)
        #expect(last.statistics.resets == 3)
        #expect(last.statistics.lastReset?.contains("missing") == true)
        #expect(log.all.contains { $0.level == .error && $0.message.contains("alert book is missing") })

        // Every firing message was delivered, and no link of an earlier book works in a later one.
        let out = directory.file("out.jsonl")
        #expect(Self.delivered(out).count == 8)
        let final = try SavedAlerts(directory: directory.path).book
        for key in keys.dropLast() {
            #expect(final.refusal(of: ActionToken.handle(of: key), now: .now) != nil)
        }
    }

    /// A hub that never alerted has no book and no mark: starting is not a reset. A book an earlier version wrote
    /// (no epoch, no mark) is taken as it is, and its keys go on as they were.
    @Test func aNewHubAndAnUpgradedOneAreNotResets() async throws {
        let directory = try TemporaryDirectory()
        let log = LogRecorder()
        let first = try await Self.run(directory, from: 1, log: log)
        #expect(first.statistics.resets == 0)
        #expect(!log.all.contains { $0.level == .error })
        // As an earlier hubd left it.
        let epoch = try SavedAlerts(directory: directory.path).book.epoch
        #expect(epoch.count == 8)
        let text = try String(contentsOfFile: directory.file("alerts.json"), encoding: .utf8)
            .replacingOccurrences(of: "\"epoch\":\"\(epoch)\",", with: "")
            .replacingOccurrences(of: ",\"epoch\":\"\(epoch)\"", with: "")
        #expect(!text.contains(epoch))
        try Data(text.utf8).write(to: URL(fileURLWithPath: directory.file("alerts.json")))
        try FileManager.default.removeItem(atPath: directory.file("alerts.json.epoch"))
        let upgraded = LogRecorder()
        let second = try await Self.run(directory, from: 10, log: upgraded)
        #expect(second.statistics.resets == 0)
        #expect(!upgraded.all.contains { $0.level == .error })
        #expect(second.key == "leak#0~3", "an earlier book's numbering goes on")
    }
}
