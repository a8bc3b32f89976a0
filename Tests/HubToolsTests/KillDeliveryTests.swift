import Foundation
import HubCore
import HubTestKit
import Logging
import Mosquitto
import Testing

/// hubd SIGKILLed at any moment while statuses change and a webhook refuses its first requests, with hubd's default
/// configuration (acknowledgements held until the journal has a status) and Mosquitto's default settings: every
/// change arrives, none under two ids (a status the broker sends again because its PUBACK had not left is known by
/// its packet id, not applied twice), each from the change delivered before it. Statuses retained, as firmware
/// publishes them, and not. `make chaos` runs the scenario 100 times each way (`CHAOS_KILL_RUNS`); `make test` twice.
@Suite struct KillDeliveryTests {
    static var runs: Int { Int(ProcessInfo.processInfo.environment["CHAOS_KILL_RUNS"] ?? "") ?? 2 }

    struct Outcome {
        var changes = 0
        var lost: [String] = []
        var twoIDs: [String] = []
        var wrongOld: [String] = []
        var repeats = 0
        var longestWait = 0.0
        /// Messages the broker sent again that hubd knew it had applied.
        var redelivered = 0
    }

    @Test(arguments: [true, false])
    func aSIGKILLLosesNoChangeAndSendsNoneTwice(retained: Bool) async throws {
        var total = Outcome()
        for run in 1...Self.runs {
            let outcome = try await scenario(seed: run, retained: retained)
            total.changes += outcome.changes
            total.lost += outcome.lost.map { "run \(run): \($0)" }
            total.twoIDs += outcome.twoIDs.map { "run \(run): \($0)" }
            total.wrongOld += outcome.wrongOld.map { "run \(run): \($0)" }
            total.repeats += outcome.repeats
            total.longestWait = max(total.longestWait, outcome.longestWait)
            total.redelivered += outcome.redelivered
        }
        let newestLost = total.lost.filter { $0.hasSuffix("(the newest)") }
        print(
            """
            SIGKILL scenario, statuses retained: \(retained), \(Self.runs) runs, \
            \(total.changes) changes: changes lost \(total.lost.count) \
            (newest statuses lost \(newestLost.count)), applied twice (delivered under two ids) \(total.twoIDs.count), \
            wrong old_status \(total.wrongOld.count); sent again by the broker and known \(total.redelivered); same id \
            delivered again \(total.repeats) (at least once); the journal's longest wait before a record was durable \
            \(String(format: "%.2f", total.longestWait)) ms
            """)
        #expect(total.lost.isEmpty, "\(total.lost)")
        #expect(total.twoIDs.isEmpty, "\(total.twoIDs)")
        #expect(total.wrongOld.isEmpty, "\(total.wrongOld)")
    }

    /// Three sensors, 40 retained QoS 1 changes, then 40 more with hubd SIGKILLed and started again in the middle;
    /// the webhook answers 503 (Retry-After: 1) to its first five requests.
    func scenario(seed: Int, retained: Bool) async throws -> Outcome {
        try await withBroker { broker in
            let server = try await TestHTTPServer.start { _, index in
                index < 5 ? TestHTTPServer.Response(status: 503, headers: [("Retry-After", "1")]) : .ok
            }
            defer { Task { await server.stop() } }
            let hub = try RunningHub(
                configuration: """
                    notifiers:
                      backends:
                        hook: { type: webhook, url: "\(server.url)/events", concurrency: 4 }
                      rules:
                        all: { backends: [hook] }
                    """)
            let sensors = ["a", "b", "c"]
            try await hub.prepare(broker, sensors: sensors)
            try await hub.startAndWaitUntilReady()
            let client = try await publisher(broker, id: "kill-\(seed)")
            var generator = SplitMix64(seed: UInt64(seed))
            var published: [String: [String]] = [:]
            func publish(_ index: Int) async throws {
                let sensor = sensors[index % sensors.count]
                let status = "v\(index / sensors.count + 1)"
                try await client.publish(topic: sensor, payload: status, qos: .atLeastOnce, retain: retained)
                published[sensor, default: []].append(status)
                try await Task.sleep(for: .milliseconds(Int.random(in: 2...15, using: &generator)))
            }
            for index in 0..<40 { try await publish(index) }
            // The kill comes at any moment of the next 40 changes (about 340 ms), not between two of them.
            let delay = Duration.microseconds(Int64.random(in: 0..<300_000, using: &generator))
            let kill = Task {
                try await Task.sleep(for: delay)
                _ = await hub.stop(SIGKILL)
                try hub.start()
            }
            for index in 40..<80 { try await publish(index) }
            try await kill.value
            await client.disconnect()
            try await hub.waitForLog("published availability", "status=online")
            let expected = published.values.reduce(0) { $0 + $1.count }
            // Every change, or 30 s: what is missing then is lost.
            let deadline = ContinuousClock.now + .seconds(30)
            var outcome = Outcome()
            while true {
                outcome = judge(server.requests, published: published)
                if outcome.lost.isEmpty || ContinuousClock.now > deadline { break }
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(outcome.changes == expected)
            try await Task.sleep(for: .seconds(1.2))  // the status file's next write
            outcome.redelivered =
                hub.status?.counters.rejected.filter { $0.key.contains("applied already") }.values.reduce(0, +) ?? 0
            await hub.stop()
            let closed = try await hub.waitForLog("journal closed")
            if let value = closed.split(separator: " ").first(where: { $0.hasPrefix("longest_wait_ms=") }) {
                outcome.longestWait = Double(value.dropFirst("longest_wait_ms=".count)) ?? 0
            }
            return outcome
        }
    }

    /// What the receiver got, against what was published.
    func judge(_ requests: [TestHTTPServer.Request], published: [String: [String]]) -> Outcome {
        var outcome = Outcome()
        var ids: [String: Set<String>] = [:]
        var deliveries: [String: Int] = [:]
        var old: [String: String] = [:]
        for (index, request) in requests.enumerated() where request.path == "/events" {
            guard let body = try? JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any],
                let sensor = body["sensor"] as? String, let status = body["status"] as? String,
                let oldStatus = body["old_status"] as? String, let id = body["id"] as? String
            else { continue }
            let change = "\(sensor)=\(status)"
            ids[change, default: []].insert(id)
            old[change] = oldStatus
            // The first five requests were answered 503: not delivered.
            if index >= 5 { deliveries[change + " " + id, default: 0] += 1 }
        }
        let delivered = Set(deliveries.keys.map { String($0.split(separator: " ")[0]) })
        for (sensor, statuses) in published {
            // Each delivered change must come from the change delivered before it: a stale registry or a change
            // derived twice would show here.
            var previous = Sensor.waiting
            for (index, status) in statuses.enumerated() {
                let change = "\(sensor)=\(status)"
                outcome.changes += 1
                guard delivered.contains(change) else {
                    // The newest status is retained by the broker: it must never be missing.
                    outcome.lost.append(index == statuses.count - 1 ? "\(change) (the newest)" : change)
                    continue
                }
                if old[change] != previous { outcome.wrongOld.append("\(change) from \(old[change] ?? "?")") }
                previous = status
            }
        }
        outcome.twoIDs = ids.filter { $0.value.count > 1 }.map { "\($0.key) as \($0.value.sorted())" }.sorted()
        outcome.repeats = deliveries.values.reduce(0) { $0 + max(0, $1 - 1) }
        return outcome
    }
}

/// hubd ends on each sensor's newest status after a long absence, even when the broker's queue for it overflowed
/// and dropped the retained statuses its subscriptions asked for: once the backlog has drained, hubd subscribes
/// once more and the broker sends the retained statuses again.
@Suite struct NewestStatusTests {
    @Test func theNewestStatusWinsAfterALongAbsence() async throws {
        // A queue of 50 for an absent client, one message in flight at a time: what a busy broker does to a hub that
        // was away for long, in miniature. The backlog is still draining when hubd subscribes, so the broker's queue
        // is full and it drops the retained replies.
        try await withBroker(.init(extraLines: ["max_queued_messages 50", "max_inflight_messages 1"])) { broker in
            let sensors = ["a", "b", "c"]
            let hub = try RunningHub()
            try await hub.prepare(broker, sensors: sensors)
            try await hub.startAndWaitUntilReady()
            await hub.stop()
            let client = try await publisher(broker, id: "absence")
            for round in 1...100 {
                for sensor in sensors {
                    try await client.publish(topic: sensor, payload: "v\(round)", qos: .atLeastOnce, retain: true)
                }
            }
            await client.disconnect()
            try await hub.startAndWaitUntilReady()
            try await hub.waitForLog("subscribed again for the newest retained statuses", "topics=3")
            try await eventually("every sensor at v100", within: .seconds(20)) {
                try hub.registry().sensors.allSatisfy { $0.status == "v100" }
            }
            await hub.stop()
        }
    }
}
