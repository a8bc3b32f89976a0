import Foundation
import HubCore
import HubSupport
import HubTestKit
import Testing

@testable import HubNotify

/// The router tells the journal which events it has routed only once their notifications are on disk; the outbox
/// is flushed once for a burst, not once per batch (issue 38).
@Suite struct RouterProgressTests {
    /// What `progress` was told, and how many notifications the outbox file held at that moment.
    final class Reports: Sendable {
        let seen = Locked<[(position: Int, lines: Int)]>([])
        let outbox: Outbox

        init(_ directory: TemporaryDirectory) { outbox = Outbox(directory: directory.path) }

        func report(_ position: Int) {
            let lines = AppendFile.lines(AppendFile.contents(outbox.path)).filter {
                $0.starts(with: Array("{\"add\"".utf8))
            }
            seen.withLock { $0.append((position, lines.count)) }
        }
    }

    static let yaml = """
        notifiers:
          backends:
            audit: { type: file, path: audit.jsonl }
          rules:
            all: { backends: [audit] }
        """

    /// Fifty batches, each its own journal position: every position is reported only once the outbox file holds the
    /// notifications up to it, and the outbox is flushed once a second, not once a batch.
    @Test func aBurstIsReportedOnceItsOutboxIsFlushed() async throws {
        let directory = try TemporaryDirectory()
        let reports = Reports(directory)
        let clock = ContinuousClock()
        let started = clock.now
        let stopped = try await withRouter(Self.yaml, directory: directory, progress: { reports.report($0) }) {
            router in
            for position in 1...50 {
                router.submit([event("s\(position)")], through: position)
                try await Task.sleep(for: .milliseconds(2))
            }
            try await eventually("fifty delivered") { router.statistics.backends["audit"]?.delivered == 50 }
            // Reported at the first pass, or when the router stops (the next report is 30 s away).
            return router
        }
        let syncs = stopped.outbox.syncCount
        let seen = reports.seen.withLock { $0 }
        #expect(seen.last?.position == 50)
        for report in seen { #expect(report.lines >= report.position, "\(report)") }
        #expect(seen.map(\.position) == seen.map(\.position).sorted())
        // One flush a second at most (a loaded machine stretches the burst), never one per batch.
        let seconds = Int((clock.now - started).components.seconds)
        #expect(syncs >= 1 && syncs <= seconds + 1, "outbox fsyncs for 50 batches in \(seconds) s: \(syncs)")
    }

    /// A home's doors change the alert book with every message. hubd's readers follow the book in memory
    /// (`alertPlace`, at once); its files are written, and `fsync`ed, only for a report, every `reportInterval`:
    /// reported every `outboxSyncDelay`, a home's book took 17,856 `fsync`s a day, and written without `fsync` every
    /// `outboxSyncDelay` between reports, 58 MB (`bench/home.sh`).
    @Test func theBookIsFollowedInMemoryAndWrittenForEachReport() async throws {
        let directory = try TemporaryDirectory()
        let reports = Reports(directory)
        let yaml = """
            notifiers:
              backends:
                audit: { type: file, path: audit.jsonl }
              rules:
                doors: { events: [changed], statuses: [open], backends: [audit], group_by: [sensor], group_wait: 1h }
            """
        let clock = ContinuousClock()
        let started = clock.now
        let count = 48
        let changes = Locked(0)
        let elapsed = try await withRouter(yaml, directory: directory, progress: { reports.report($0) }) { router in
            let following = Task {
                for await _ in router.alertChanges() { changes.withLock { $0 += 1 } }
            }
            defer { following.cancel() }
            for position in 1...count {
                router.submit([event("door\(position)")], through: position)
                try await Task.sleep(for: .milliseconds(250))
            }
            // Each door an alert, waiting out its group's hour: in the book hubd's readers read within a pass.
            try await eventually("every door's alert in the book hubd reads") {
                (try? await router.alertPlace.saved().book.alerts.count) == count
            }
            // Its files hold the first report's book, not the doors since: nothing was written for them.
            let written = try SavedAlerts(directory: directory.path).book.alerts.count
            #expect(written < count / 2, "\(written) of \(count) alerts in the files before the next report")
            return clock.now - started
        }
        #expect(changes.withLock { $0 } > 0, "the book's followers were told of its changes")
        // Stopping writes the book whole into the files.
        #expect(try SavedAlerts(directory: directory.path).book.alerts.count == count)
        // The first routed batch is reported at the first pass; the next only a `reportInterval` later. Reported
        // every pass (5 s), 12 s of doors made two or three.
        let seen = reports.seen.withLock { $0.map(\.position) }
        let allowed = 1 + Int((elapsed - NotificationRouter.outboxSyncDelay) / NotificationRouter.reportInterval)
        // Stopping reports the last position, whenever it comes.
        #expect(seen.last == count)
        #expect(seen.count - 1 <= allowed, "\(seen.count - 1) reports in \(elapsed) before the stop's: \(seen)")
    }

    /// Stopping reports what was routed last, flushed: nothing waits a second that never comes.
    @Test func stoppingReportsTheLastPosition() async throws {
        let directory = try TemporaryDirectory()
        let reports = Reports(directory)
        try await withRouter(Self.yaml, directory: directory, progress: { reports.report($0) }) { router in
            router.submit([event("s1"), event("s2")], through: 7)
            try await eventually("routed") {
                router.outbox.pendingCount + (router.statistics.backends["audit"]?.delivered ?? 0) >= 2
            }
        }
        let last = try #require(reports.seen.withLock { $0.last })
        #expect(last.position == 7 && last.lines >= 2)
    }

    /// A batch the journal hands over on the executor is routed there, and wakes the routing loop only when it moved
    /// the alert book's next deadline sooner: twenty doors each opening a group that waits an hour wake it once, and
    /// a leak whose group waits a second still goes within it. Woken for every batch, the loop cost a task group, a
    /// timer and three or four context switches a message at a home's rate.
    @Test func theLoopWakesOnlyForASoonerDeadline() async throws {
        let directory = try TemporaryDirectory()
        let out = directory.file("out.jsonl")
        let yaml = """
            notifiers:
              backends:
                out: { type: file, path: "\(out)" }
              rules:
                doors:
                  { sensors: ["door*"], events: [changed], statuses: [open], backends: [out], group_by: [sensor],
                    group_wait: 1h }
                leak: { sensors: ["leak"], events: [changed], statuses: [wet], backends: [out], group_wait: 1s }
            """
        try await withRouter(yaml, directory: directory) { router in
            try await eventually("the loop routes inline") { router.routesInline.withLock { $0 } }
            try await Task.sleep(for: .milliseconds(100))
            let before = router.loopWakes.withLock { $0 }
            for index in 1...20 {
                router.executor.sync { router.submit([event("door\(index)")], through: index) }
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(router.alerts.book.alerts.count == 20)
            let wakes = router.loopWakes.withLock { $0 } - before
            #expect(wakes <= 3, "the loop woke \(wakes) times for 20 batches")
            router.executor.sync { router.submit([event("leak", "dry", "wet")], through: 21) }
            try await eventually("the leak's message", within: .seconds(5)) { jsonLines(out).count == 1 }
        }
    }
}
