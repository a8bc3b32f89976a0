import Foundation
import HubCore
import HubSupport
import HubTestKit
import Testing

@testable import HubNotify

/// The alert book is saved before its alert messages go, but not more often than its gap allows
/// (`NotificationRouter+Saving`): a message made meanwhile waits in the outbox for the next save, and whenever a
/// message reaches its backend, the book on disk already holds its link, so that a tap on it works after a restart.
@Suite struct AlertBookSavingTests {
    static func leak(_ sensor: String) -> SensorEvent {
        SensorEvent(
            id: "\(sensor)-1", kind: .changed, sensor: sensor, topic: sensor, oldStatus: "dry", newStatus: "wet",
            time: .now)
    }

    @Test func messagesWaitForTheBooksSaveAndFindTheirLinksOnDisk() async throws {
        let directory = try TemporaryDirectory()
        let out = directory.file("out.jsonl")
        let yaml = """
            notifiers:
              backends:
                out: { type: file, path: "\(out)" }
              rules:
                leak: { events: [changed], statuses: [wet], backends: [out], group_by: [sensor], group_wait: 0s }
            """
        try await withRouter(yaml, directory: directory) { router in
            // The first message after a quiet spell goes with the book's first save (its timing:
            // `theFirstGoesAtOnceAndTheNextWaitForTheGap`).
            let start = ContinuousClock.now
            router.submit(Self.leak("kitchen"))
            try await eventually("the kitchen's message") { AlertBookResetTests.delivered(out).count == 1 }
            // Three more right after it: each its own group, each held until the next save, then sent together.
            for sensor in ["bath", "cellar", "garage"] { router.submit(Self.leak(sensor)) }
            var seen: [String] = []
            let deadline = ContinuousClock.now + .seconds(10)
            while seen.count < 4 && ContinuousClock.now < deadline {
                let delivered = AlertBookResetTests.delivered(out)
                for key in delivered where !seen.contains(key) {
                    // The book on disk when the message is in the backend's file: it holds the message's link.
                    let saved = try SavedAlerts(directory: directory.path).book
                    #expect(saved.links[ActionToken.handle(of: key)] != nil, "\(key): its link is not on disk")
                    seen.append(key)
                }
                try await Task.sleep(for: .milliseconds(5))
            }
            #expect(seen.count == 4)
            let spacing = router.bookSaving.withLock { saving in
                saving.lastForMessages.map { $0 - start } ?? .zero
            }
            // The held three went with the save a gap after the first.
            #expect(spacing >= NotificationRouter.bookSaveGap, "\(spacing)")
        }
    }

    /// On the router's clock, given: the first message after a quiet spell goes at once; one made within the gap is
    /// held, and goes with the save at the gap's end.
    @Test func theFirstGoesAtOnceAndTheNextWaitForTheGap() async throws {
        let directory = try TemporaryDirectory()
        let yaml = AlertBookResetTests.yaml(directory.file("out.jsonl"))
        try await withRouter(yaml, directory: directory) { router in
            func message(_ sensor: String) -> HubNotify.Notification {
                Notification(
                    id: "\(sensor)#firing", backend: "out", rule: "leak", event: Self.leak(sensor), title: "t",
                    body: "b", alert: .init(group: sensor, reason: .firing, alerts: ["leak/\(sensor)/status"]))
            }
            let start = ContinuousClock.now
            #expect(router.saveBookForAlertMessages([message("kitchen")], now: start).map(\.id) == ["kitchen#firing"])
            let soon = start + .milliseconds(100)
            #expect(router.saveBookForAlertMessages([message("bath")], now: soon).isEmpty)
            #expect(router.heldAlertMessagesDeadline() == start + NotificationRouter.bookSaveGap)
            let then = start + NotificationRouter.bookSaveGap
            #expect(router.saveBookForAlertMessages([], now: then).map(\.id) == ["bath#firing"])
            #expect(router.heldAlertMessagesDeadline() == nil)
        }
    }

    @Test func theGapGrowsWithTheSavesLength() throws {
        #expect(NotificationRouter.saveGap(afterWrite: .milliseconds(1)) == .milliseconds(250))
        #expect(NotificationRouter.saveGap(afterWrite: .milliseconds(150)) == .seconds(1.5))
    }
}
