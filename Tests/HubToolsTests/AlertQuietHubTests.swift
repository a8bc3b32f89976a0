import Foundation
import HubCore
import HubTestKit
import Testing

/// Quiet hours end to end, on the real clock: hubd on a real Mosquitto with a quiet window that began a minute ago
/// and ends at the next minute boundary (25–85 s away; the window is the same thing as 22:00–07:00, shorter). A door
/// opening in the window waits for the digest; an urgent leak goes at once; a backend with quiet hours of its own
/// misses the window's alert and gets one digest of it. hubd is SIGKILLed in the window and restarted: the digest
/// still comes, once.
@Suite struct AlertQuietHubTests {
    @Test func aChangeInQuietHoursWaitsForTheDigestAndAnUrgentLeakDoesNot() async throws {
        try await withBroker { broker in
            let directory = try TemporaryDirectory()
            let audit = directory.file("audit.jsonl")
            let partner = directory.file("partner.jsonl")
            let (from, to, end) = Self.window()
            let hub = try RunningHub(
                configuration: """
                    alerts:
                      quiet_hours:
                        night: { from: "\(from)", to: "\(to)", zone: UTC }
                    notifiers:
                      backends:
                        audit: { type: file, path: \(audit) }
                        partner: { type: file, path: \(partner), quiet_hours: [night] }
                      rules:
                        doors: { events: [changed], sensors: [door], backends: [audit], quiet_hours: [night], group_wait: 0s }
                        leak:
                          events: [changed]
                          sensors: [leak]
                          statuses: [wet]
                          priority: urgent
                          backends: [audit, partner]
                          quiet_hours: [night]
                          group_wait: 0s
                        windows: { events: [changed], sensors: [window], statuses: [open], backends: [audit, partner], group_wait: 0s }
                    """)
            try await hub.prepare(broker, sensors: ["door", "leak", "window"])
            try await hub.startAndWaitUntilReady()
            try await publish(broker, [("door", Array("closed".utf8)), ("leak", Array("dry".utf8))], retain: true)
            try await eventually("the first statuses") { (try? hub.sensor("leak"))??.status == "dry" }

            try await publish(broker, "door", "open", retain: true)
            try await publish(broker, "leak", "wet", retain: true)
            try await publish(broker, "window", "open", retain: true)
            try await eventually("the urgent leak at once, to both") {
                jsonLines(audit).contains { $0["sensor"] as? String == "leak" }
                    && jsonLines(partner).contains { $0["sensor"] as? String == "leak" }
            }
            try await eventually("the window's alert to the backend that is not quiet") {
                jsonLines(audit).contains { $0["sensor"] as? String == "window" }
            }
            try await hub.waitForLog("alert message", "reason", "firing", "window")
            #expect(!jsonLines(audit).contains { $0["sensor"] as? String == "door" }, "the door waits for the digest")
            #expect(jsonLines(partner).count == 1, "the partner's phone is quiet: only the urgent leak")

            // Killed in the window, and back: what waits is neither lost nor sent twice.
            #expect(await hub.stop(SIGKILL) == 128 + SIGKILL)
            try await hub.startAndWaitUntilReady()
            #expect(Date() < end, "the window ends at \(end): the test ran too slowly to show anything")
            #expect(!jsonLines(audit).contains { $0["reason"] as? String == "digest" })

            try await eventually("the digests when the window ends", within: .seconds(100)) {
                jsonLines(audit).contains { $0["reason"] as? String == "digest" }
                    && jsonLines(partner).contains { $0["reason"] as? String == "digest" }
            }
            #expect(Date() >= end)
            let digest = try #require(jsonLines(audit).first { $0["reason"] as? String == "digest" })
            #expect(digest["rule"] as? String == "doors")
            // Whatever the door did in the window (closed when the test began, then open), newest last.
            #expect((digest["message"] as? String)?.hasSuffix("door open") == true, "\(digest)")
            let missed = try #require(jsonLines(partner).first { $0["reason"] as? String == "digest" })
            #expect(missed["title"] as? String == "While quiet: 1 sensor open", "\(missed)")
            #expect(missed["message"] as? String == "Still open: window", "\(missed)")
            try await Task.sleep(for: .seconds(3))
            #expect(jsonLines(audit).filter { $0["reason"] as? String == "digest" }.count == 1)
            #expect(jsonLines(partner).filter { $0["reason"] as? String == "digest" }.count == 1)
            await hub.stop()
        }
    }

    /// A window in UTC from the minute before now to the next minute boundary at least 25 s away, and when it ends.
    static func window() -> (from: String, to: String, end: Date) {
        let now = Date().timeIntervalSince1970
        let minute = Int(now / 60)
        let endMinute = Double(minute + 1) * 60 - now >= 25 ? minute + 1 : minute + 2
        func clock(_ minute: Int) -> String {
            let inDay = ((minute % 1440) + 1440) % 1440
            return String(format: "%02d:%02d", inDay / 60, inDay % 60)
        }
        return (clock(minute - 1), clock(endMinute), Date(timeIntervalSince1970: Double(endMinute) * 60))
    }
}
