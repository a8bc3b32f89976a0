import Foundation
import HubCore
import HubTestKit
import Testing

@testable import HubNotify

/// SIGHUP's part in the router: new rules and backends take effect without a restart, and no notification is lost
/// on the way.
@Suite struct ReloadTests {
    /// A backend whose receiver is down holds three notifications; a reload points it at a receiver that is up (a
    /// changed backend), adds a second backend, and adds a rule: the three arrive with their ids, new events reach
    /// both backends, and the statistics carry over.
    @Test func aChangedBackendTakesOverItsQueueAndANewOneStartsWork() async throws {
        let directory = try TemporaryDirectory()
        let down = try freeLoopbackPort()
        let server = try await TestHTTPServer.start()
        defer { Task { await server.stop() } }
        let yaml = """
            notifiers:
              backends:
                hook: { type: webhook, url: "http://127.0.0.1:\(down)/", retry_delay: 200ms, retry_max_delay: 400ms }
              rules:
                doors: { backends: [hook], sensors: ["door*"] }
            """
        try await withRouter(yaml, directory: directory) { router in
            for index in 0..<3 { router.submit(event("door \(index)")) }
            try await eventually("three failed attempts") { (router.statistics.backends["hook"]?.retried ?? 0) >= 3 }
            let ids = try await Outbox(directory: directory.path).open().map(\.id)
            #expect(ids.count == 3)

            let reloaded = try NotifierConfiguration.parse(
                """
                notifiers:
                  backends:
                    hook: { type: webhook, url: "http://127.0.0.1:\(server.port)/", retry_delay: 200ms }
                    audit: { type: file, path: \(directory.file("audit.jsonl")) }
                  rules:
                    doors: { backends: [hook], sensors: ["door*"] }
                    all: { backends: [audit] }
                """)
            let changes = try router.reconfigure(reloaded)
            #expect(changes == .init(added: ["audit"], changed: ["hook"], removed: []))
            let delivered = try await server.waitForRequests(3)
            #expect(Set(delivered.compactMap { $0.header("X-SensorHub-Id") }) == Set(ids))
            #expect((router.statistics.backends["hook"]?.retried ?? 0) >= 3, "statistics carried over")

            router.submit(event("door 9"))
            router.submit(event("window"))
            _ = try await server.waitForRequests(4)
            try await eventually("the new backend and rule at work") {
                let lines = (try? String(contentsOfFile: directory.file("audit.jsonl"), encoding: .utf8)) ?? ""
                return lines.split(separator: "\n").count == 2
            }
            #expect(server.requests.count == 4, "the window matches no rule of hook's")
            try await eventually("outbox empty") { router.outbox.pendingCount == 0 }
        }
    }

    /// A removed backend's notifications are not sent and not forgotten: they stay in the outbox, counted and
    /// logged as orphaned, while a backend that stays goes on untouched.
    @Test func aRemovedBackendsNotificationsStayInTheOutbox() async throws {
        let directory = try TemporaryDirectory()
        let down = try freeLoopbackPort()
        let yaml = """
            notifiers:
              backends:
                gone: { type: webhook, url: "http://127.0.0.1:\(down)/", retry_delay: 1h }
                audit: { type: file, path: \(directory.file("audit.jsonl")) }
              rules:
                all: { backends: [gone, audit] }
            """
        try await withRouter(yaml, directory: directory) { router in
            for index in 0..<2 { router.submit(event("s\(index)")) }
            try await eventually("two failed attempts") { router.statistics.backends["gone"]?.retried == 2 }
            try await eventually("audit delivered") { router.statistics.backends["audit"]?.delivered == 2 }
            let changes = try router.reconfigure(
                NotifierConfiguration.parse(
                    """
                    notifiers:
                      backends:
                        audit: { type: file, path: \(directory.file("audit.jsonl")) }
                      rules:
                        all: { backends: [audit] }
                    """))
            #expect(changes == .init(added: [], changed: [], removed: ["gone"]))
            try await eventually("reported as orphaned") { router.statistics.router.orphaned == 2 }
            #expect(router.statistics.backends["gone"] == nil)
            #expect(router.statistics.backends["audit"]?.delivered == 2, "a backend that stays keeps its statistics")
            // Done marks are written a moment after a delivery (`markDoneLater`): audit's leave the file then.
            try await eventually("only gone's notifications pending in the file") {
                let file = Outbox(directory: directory.path)
                let pending = try await file.open()
                await file.close()
                return pending.map(\.backend) == ["gone", "gone"]
            }
        }
    }

    /// A reload with a backend that can't be made changes nothing.
    @Test func anInvalidReloadChangesNothing() async throws {
        let directory = try TemporaryDirectory()
        let yaml = """
            notifiers:
              backends:
                audit: { type: file, path: \(directory.file("audit.jsonl")) }
              rules:
                all: { backends: [audit] }
            """
        try await withRouter(yaml, directory: directory) { router in
            let broken = try NotifierConfiguration.parse(
                """
                notifiers:
                  backends:
                    hook: { type: webhook, url: "https://127.0.0.1:1/", ca_file: \(directory.file("missing.pem")) }
                """)
            #expect(throws: ConfigurationError.self) { try router.reconfigure(broken) }
            #expect(router.configuration.backends.map(\.name) == ["audit"] && router.configuration.rules.count == 1)
            router.submit(event("s"))
            try await eventually("still delivered") { router.statistics.backends["audit"]?.delivered == 1 }
        }
    }
}
