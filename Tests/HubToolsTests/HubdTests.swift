import Foundation
import HubCore
import HubTestKit
import Mosquitto
import Testing

/// The agent end to end: the built hubd and hubctl against a real broker and real files.
@Suite(.timeLimit(.minutes(2)))
struct HubdTests {
    /// Writes quickly, so tests don't wait for the default second.
    static let fastFlush = "store:\n  flush_interval: 100ms\n"

    @Test func aSensorAddedWhileRunningGetsItsFirstMessage() async throws {
        try await withBroker { broker in
            let hub = try RunningHub(configuration: Self.fastFlush)
            try await hub.use(broker)
            try await hub.startAndWaitUntilReady()
            #expect(try await hub.hubctl.run("sensors", "add", "kitchen").status == 0)
            try await hub.waitForLog("followed the registry", "subscribed=1")
            try await publish(broker, "kitchen", "open")
            try await eventually("kitchen shows open") { try hub.sensor("kitchen")?.status == "open" }
            let show = try await hub.hubctl.run("sensors", "show", "kitchen", "--json")
            #expect(show.standardOutput.contains(#""status": "open""#))
            // The event's id is the sensor's id and its first sequence number, in the log and in `show`.
            let id = try #require(try hub.sensor("kitchen")?.id)
            try await hub.waitForLog("sensor event", "sensor=kitchen", "from=Waiting", "to=open", "id=\(id)-1")
            let text = try await hub.hubctl.run("sensors", "show", "kitchen")
            #expect(text.standardOutput.contains("Id:            \(id) (last event \(id)-1)"))
            #expect(await hub.stop() == 0)
        }
    }

    @Test func aRemovedSensorIsUnsubscribedAndChangesNothing() async throws {
        try await withBroker { broker in
            let hub = try RunningHub(configuration: Self.fastFlush)
            try await hub.prepare(broker, sensors: ["kitchen", "marker"])
            try await hub.startAndWaitUntilReady()
            try await publish(broker, "kitchen", "open")
            try await eventually("kitchen shows open") { try hub.sensor("kitchen")?.status == "open" }
            _ = try await hub.hubctl.run("sensors", "remove", "kitchen")
            try await hub.waitForLog("followed the registry", "unsubscribed=1")
            // The status file follows within a second: once it has kitchen's message, that is the count before.
            try await eventually("the status file counts kitchen's message") { hub.status?.counters.messages == 1 }
            let before = try #require(hub.status).counters.messages
            // The marker goes out after the message to the removed topic, on one connection at QoS 1: once it is
            // in, the other message would have been too.
            try await publish(broker, [("kitchen", Array("closed".utf8)), ("marker", Array("seen".utf8))])
            try await eventually("the marker arrives") { try hub.sensor("marker")?.status == "seen" }
            try await eventually("the status file is rewritten") { (hub.status?.counters.messages ?? 0) > before }
            #expect(hub.status?.counters.messages == before + 1)
            #expect(try hub.sensor("kitchen") == nil)
            await hub.stop()
        }
    }

    @Test func aRenamedSensorKeepsItsTopicAndItsStatusesFollow() async throws {
        try await withBroker { broker in
            let hub = try RunningHub(configuration: Self.fastFlush)
            try await hub.prepare(broker, sensors: ["kitchen"])
            try await hub.startAndWaitUntilReady()
            _ = try await hub.hubctl.run("sensors", "rename", "kitchen", "kitchen window")
            try await publish(broker, "kitchen", "open")
            try await eventually("the renamed sensor shows open") { try hub.sensor("kitchen window")?.status == "open" }
            try await hub.waitForLog("sensor event", "sensor=kitchen window", "to=open")
            await hub.stop()
        }
    }

    @Test func newBrokerSettingsMakeItReconnect() async throws {
        try await withBroker { first in
            try await withBroker { second in
                let hub = try RunningHub(configuration: Self.fastFlush)
                try await hub.prepare(first, sensors: ["kitchen"])
                try await hub.startAndWaitUntilReady()
                try await hub.use(second)
                try await hub.waitForLog("the broker settings changed; reconnecting")
                try await eventually("connected to the second broker") {
                    hub.status?.broker == "\(second.host):\(second.port)" && hub.status?.connected == true
                }
                try await publish(second, "kitchen", "from the second broker")
                try await eventually("the status arrives through the second broker") {
                    try hub.sensor("kitchen")?.status == "from the second broker"
                }
                // The first broker was told the hub left, not left to guess from a will.
                let sub = try requireExecutable("mosquitto_sub", package: "mosquitto-clients")
                let availability = try await runProcess(
                    sub,
                    ["-h", first.host, "-p", "\(first.port)", "-t", "sensorhub/availability", "-C", "1", "-W", "5"])
                #expect(availability.standardOutput == "offline\n")
                await hub.stop()
            }
        }
    }

    @Test func statusesPublishedWhileTheHubWasKilledAreAppliedWhenItReturns() async throws {
        try await withBroker { broker in
            let hub = try RunningHub(configuration: Self.fastFlush)
            try await hub.prepare(broker, sensors: ["kitchen", "garage"])
            try await hub.startAndWaitUntilReady()
            #expect(await hub.stop(SIGKILL) == 128 + SIGKILL)
            // Not retained: only the broker's queue for the hub's persistent session can deliver these.
            try await publish(broker, [("kitchen", Array("open".utf8)), ("garage", Array("closed".utf8))])
            try await hub.startAndWaitUntilReady()
            try await eventually("both statuses applied") {
                try hub.sensor("kitchen")?.status == "open" && hub.sensor("garage")?.status == "closed"
            }
            await hub.stop()
        }
    }

    @Test func silenceMarksASensorOfflineAndAMessageBringsItBack() async throws {
        try await withBroker { broker in
            let hub = try RunningHub(configuration: Self.fastFlush + "sensors:\n  silence_timeout: 1s\n")
            try await hub.prepare(broker, sensors: ["kitchen"])
            // The firmware's word is tried on a sensor of its own, with an hour's silence: on a loaded machine a
            // second can pass between two publishes, and the kitchen's silence would say offline first.
            try await hub.add(arguments: [["hall", "--silence-timeout", "1h"]])
            try await hub.startAndWaitUntilReady()
            try await publish(broker, "kitchen", "open")
            try await hub.waitForLog("sensor event", "event=silent", "from=open", "to=offline")
            try await eventually("kitchen shows offline") { try hub.sensor("kitchen")?.status == "offline" }
            try await publish(broker, "kitchen", "closed")
            try await hub.waitForLog("sensor event", "event=recovered", "from=offline", "to=closed")
            // The firmware's own word (its last will, say) counts at once.
            try await publish(broker, "hall", "closed")
            try await hub.waitForLog("sensor event", "sensor=hall", "to=closed")
            try await publish(broker, "hall", "offline")
            try await hub.waitForLog("sensor event", "sensor=hall", "event=offline", "from=closed")
            try await publish(broker, "hall", "online")
            try await hub.waitForLog("sensor event", "sensor=hall", "event=recovered", "to=closed")
            await hub.stop()
        }
    }

    /// Issue 36: a sensor silent past its timeout, whose firmware publishes retained, stays silent when hubd
    /// restarts and the broker replays its old status: no `recovered`, no second `silent` a timeout later, its
    /// last-updated time untouched. (It was two false notifications on the phone.)
    @Test func aSilentSensorStaysSilentWhenTheBrokerReplaysItsOldStatusAtARestart() async throws {
        try await withBroker { broker in
            let hub = try RunningHub(configuration: Self.fastFlush + "sensors:\n  silence_timeout: 1s\n")
            try await hub.prepare(broker, sensors: ["kitchen"])
            try await hub.startAndWaitUntilReady()
            try await publish(broker, "kitchen", "open", retain: true)
            try await hub.waitForLog("sensor event", "event=silent", "from=open", "to=offline")
            try await eventually("kitchen shows offline") { try hub.sensor("kitchen")?.status == "offline" }
            let silentSince = try hub.sensor("kitchen")?.lastUpdated
            #expect(await hub.stop() == 0)
            try await hub.startAndWaitUntilReady()
            // The broker replays the retained "open" to hubd's subscription: taken, and no news.
            try await eventually("the replay arrived") { (hub.status?.counters.messages ?? 0) >= 1 }
            try await Task.sleep(for: .seconds(2.5))  // the timeout, twice over
            #expect(await hub.stop() == 0)
            let kitchen = try #require(try hub.sensor("kitchen"))
            #expect(kitchen.status == "offline" && kitchen.lastUpdated == silentSince)
            let events = try await hub.hubctl.run("events", "kitchen", "--csv")
            let kinds = events.standardOutput.split(separator: "\n").dropFirst().map {
                $0.split(separator: ",", omittingEmptySubsequences: false)[2]
            }
            #expect(kinds == ["changed", "silent"], "\(events.standardOutput)")
        }
    }

    @Test func hostilePayloadsAreCountedAndChangeNothing() async throws {
        try await withBroker { broker in
            let hub = try RunningHub(configuration: Self.fastFlush)
            try await hub.prepare(broker, sensors: ["kitchen"])
            try await hub.startAndWaitUntilReady()
            try await publish(
                broker,
                [
                    ("kitchen", [0xFF, 0xFE, 0x00, 0x01]),  // binary, not UTF-8
                    ("kitchen", Array(repeating: UInt8(ascii: "a"), count: 256 * 1024)),  // 256 KiB
                    ("kitchen", [0x6F, 0xC3, 0x28]),  // invalid UTF-8
                    ("kitchen", Array("   ".utf8)),  // empty once trimmed
                    ("kitchen", Array("fine".utf8)),
                ])
            try await eventually("the valid status arrives") { try hub.sensor("kitchen")?.status == "fine" }
            try await eventually("the rejects are counted") {
                let rejected = hub.status?.counters.rejected ?? [:]
                return rejected["not valid UTF-8"] == 2 && rejected["longer than sensors.max_status_length"] == 1
                    && rejected["empty"] == 1
            }
            try await hub.waitForLog("rejected a message", "reason=not valid UTF-8")
            #expect(hub.child?.exitStatus == nil)
            await hub.stop()
        }
    }

    @Test func sigtermWritesWhatArrivedAndSaysOffline() async throws {
        try await withBroker { broker in
            // A long flush interval: only the shutdown can have written the status.
            let hub = try RunningHub(configuration: "store:\n  flush_interval: 60s\n")
            try await hub.prepare(broker, sensors: ["kitchen"])
            try await hub.startAndWaitUntilReady()
            try await publish(broker, "kitchen", "open")
            try await hub.waitForLog("sensor event", "to=open")
            // The file itself, unasked (`hub.sensor` has hubd write what it holds first, as hubctl does).
            let file = DefaultsStore(directory: hub.hubctl.state.path)
            #expect(try file.read().sensor(named: "kitchen")?.status == Sensor.waiting)
            #expect(await hub.stop(SIGTERM) == 0)
            #expect(try hub.sensor("kitchen")?.status == "open")
            let sub = try requireExecutable("mosquitto_sub", package: "mosquitto-clients")
            let availability = try await runProcess(
                sub, ["-h", broker.host, "-p", "\(broker.port)", "-t", "sensorhub/availability", "-C", "1", "-W", "5"])
            #expect(availability.standardOutput == "offline\n")
        }
    }

    @Test func systemdHearsReadyWatchdogAndStopping() async throws {
        try await withBroker { broker in
            let listener = try DatagramListener()
            let hub = try RunningHub()
            try await hub.use(broker)
            try hub.start(["NOTIFY_SOCKET": listener.path, "WATCHDOG_USEC": "400000"])
            let ready = try await listener.messages.next(within: .seconds(15)) { $0.contains("READY=1") }
            #expect(ready.contains("STATUS=Connected to \(broker.host):\(broker.port), following 0 sensors"))
            _ = try await listener.messages.next(within: .seconds(5)) { $0 == "WATCHDOG=1" }
            await hub.stop()
            _ = try await listener.messages.next(within: .seconds(5)) { $0 == "STOPPING=1" }
        }
    }

    @Test func sighupReloadsTheConfiguration() async throws {
        try await withBroker { broker in
            let hub = try RunningHub(configuration: "sensors:\n  silence_timeout: off\n")
            try await hub.prepare(broker, sensors: ["kitchen"])
            try await hub.startAndWaitUntilReady()
            try await publish(broker, "kitchen", "open")
            try await hub.waitForLog("sensor event", "to=open")
            try "sensors:\n  silence_timeout: 1s\n".write(toFile: hub.configFile, atomically: true, encoding: .utf8)
            hub.child?.send(SIGHUP)
            let reloaded = try await hub.waitForLog("configuration reloaded")
            #expect(!reloaded.contains("applies_after_restart"), "\(reloaded)")
            try await hub.waitForLog("sensor event", "event=silent")
            // Keys the configuration reference marks as read at start are named when they change, and only those
            // (the section's own list: a changed feed or UV setting too).
            try """
            sensors: { silence_timeout: 1s, qos: 0, max_status_length: 100 }
            uv: { interval: 5m }
            log: { level: debug }
            """.write(toFile: hub.configFile, atomically: true, encoding: .utf8)
            hub.child?.send(SIGHUP)
            try await hub.waitForLog("configuration reloaded", "applies_after_restart=sensors.qos, uv")
            // A broken file is refused and the running configuration stays.
            try "sensors:\n  silence_timeout: soon\n".write(toFile: hub.configFile, atomically: true, encoding: .utf8)
            hub.child?.send(SIGHUP)
            try await hub.waitForLog("configuration not reloaded", "sensors.silence_timeout")
            #expect(hub.child?.exitStatus == nil)
            await hub.stop()
        }
    }

    /// SIGHUP reloads the notifiers without a restart: a rule and a backend added to the file take effect, and a
    /// webhook given through the environment (HUB_*) reaches its key like any other.
    @Test func sighupReloadsTheNotifiers() async throws {
        try await withBroker { broker in
            let directory = try TemporaryDirectory()
            let audit = directory.file("audit.jsonl")
            let server = try await TestHTTPServer.start()
            defer { Task { await server.stop() } }
            let hub = try RunningHub(
                configuration: """
                    notifiers:
                      backends:
                        audit: { type: file, path: \(audit) }
                      rules:
                        all: { backends: [audit] }
                    """)
            try await hub.prepare(broker, sensors: ["kitchen"])
            try await hub.startAndWaitUntilReady(["HUB_NOTIFIERS_BACKENDS_HOOK_URL": "http://127.0.0.1:\(server.port)/"]
            )
            try await publish(broker, "kitchen", "open")
            try await eventually("the first audit line") {
                (try? String(contentsOfFile: audit, encoding: .utf8))?.contains(#""status": "open""#) == true
            }
            #expect(server.requests.isEmpty)
            try """
            notifiers:
              backends:
                audit: { type: file, path: \(audit) }
                hook: { type: webhook, url: "http://127.0.0.1:1/overridden" }
              rules:
                all: { backends: [audit, hook] }
            """.write(toFile: hub.configFile, atomically: true, encoding: .utf8)
            hub.child?.send(SIGHUP)
            try await hub.waitForLog("configuration reloaded", "backends_added=hook")
            try await publish(broker, "kitchen", "closed")
            let requests = try await server.waitForRequests(1)
            #expect(requests[0].text.contains(#""status": "closed""#))
            await hub.stop()
        }
    }

    @Test func anInvalidConfigurationStopsStartUpNamingTheKey() async throws {
        let hub = try RunningHub(configuration: "sensors:\n  qos: 3\n")
        let result = try await runProcess(hub.hubd, [], environment: hub.environment)
        #expect(result.status == 78)
        #expect(
            result.standardError
                == "hubd: \(hub.configFile): sensors.qos (or $HUB_SENSORS_QOS) is '3': the QoS is 0, 1 or 2\n")
        let yaml = try RunningHub(configuration: "sensors: [1, 2\n")
        let broken = try await runProcess(yaml.hubd, [], environment: yaml.environment)
        #expect(broken.status == 78)
        #expect(broken.standardError.hasPrefix("hubd: the configuration \(yaml.configFile) is not valid YAML"))
    }

    /// Wrong shapes anywhere in the file, the notifiers section too, stop hubd with exit 78 and the key path; list
    /// items by their index (issue 16, item 4).
    @Test(arguments: [
        ("sensors:\n  - kitchen\n", "sensors: expected a mapping"),
        (
            "notifiers:\n  backends:\n    a: {type: log, timout: 5s}\n",
            "notifiers.backends.a.timout: unknown key (known here:"
        ),
        (
            "notifiers:\n  backends:\n    a: {type: webhook, url: 'http://x', timeout: fast}\n",
            "notifiers.backends.a.timeout (or $HUB_NOTIFIERS_BACKENDS_A_TIMEOUT) is 'fast': a duration like"
        ),
        (
            "notifiers:\n  backends:\n    a: {type: log, queue_size: lots}\n",
            "notifiers.backends.a.queue_size (or $HUB_NOTIFIERS_BACKENDS_A_QUEUE_SIZE) is 'lots': a whole number"
        ),
        (
            "notifiers:\n  backends:\n    a: {type: log}\n  rules:\n    r: {backends: [a, a, b]}\n",
            "notifiers.rules.r.backends[2]: no backend is named 'b' (backends: a)"
        ),
        (
            "notifiers:\n  backends:\n    a: {type: log}\n  rules:\n    r: {backends: [a], events: [changed, exploded]}\n",
            "notifiers.rules.r.events[1]: 'exploded' is not an event"
        ),
        ("notifiers:\n  backends:\n    - {type: log}\n", "notifiers.backends: expected a mapping"),
        ("uv: {latitude: 52.1, longitude: 5.18, temis: ftp://x}", "uv.temis (or $HUB_UV_TEMIS) is 'ftp://x'"),
        ("uv: {temis: true}", "uv.temis: uv.temis reads TEMIS's page for uv.latitude and"),
        ("uv: {latitude: 52.1, longitude: 5.18, interval: 0s}", "uv.interval (or $HUB_UV_INTERVAL) is '0s'"),
        ("uv: {latitude: 52.1, longitude: 5.18, topic: 'a/#'}", "uv.topic (or $HUB_UV_TOPIC) is 'a/#'"),
    ])
    func wrongShapesStopStartUpNamingTheKeyPath(yaml: String, message: String) async throws {
        let hub = try RunningHub(configuration: yaml)
        let result = try await runProcess(hub.hubd, [], environment: hub.environment)
        #expect(result.status == 78)
        #expect(result.standardError.contains(message), "\(result.standardError)")
    }

    @Test func aDamagedRegistryStopsStartUpAndIsLeftAlone() async throws {
        let hub = try RunningHub()
        try "{\"schemaVersion\": 1, \"sensors\": [}".write(
            toFile: hub.hubctl.storePath, atomically: true, encoding: .utf8)
        let result = try await runProcess(hub.hubd, [], environment: hub.environment)
        #expect(result.status == 65)
        #expect(result.standardError.contains("is not a valid defaults document: line 1, column 34"))
        #expect(
            try String(contentsOfFile: hub.hubctl.storePath, encoding: .utf8)
                == "{\"schemaVersion\": 1, \"sensors\": [}")
    }

    @Test func hubctlStatusTellsWhetherTheHubRuns() async throws {
        try await withBroker { broker in
            let hub = try RunningHub()
            try await hub.prepare(broker, sensors: ["kitchen"])
            let before = try await hub.hubctl.run("status")
            #expect(before.status == 3)
            #expect(
                before.standardOutput.hasPrefix("hubd:       not running (it has never run with the state directory"))
            try await hub.startAndWaitUntilReady()
            try await eventually("the status file says connected") { hub.status?.connected == true }
            let running = try await hub.hubctl.run("status")
            #expect(running.status == 0, "\(running.standardOutput)")
            #expect(running.standardOutput.contains("Broker:     connected to \(broker.host):\(broker.port)"))
            #expect(running.standardOutput.contains("Sensors:    1 (0 reporting, 0 offline, 1 waiting)"))
            #expect(running.standardOutput.contains("Journal:    0 statuses in 0 flushes, longest wait 0.0 ms"))
            try await publish(broker, "kitchen", "open")
            try await eventually("the status file counts the journaled status") {
                hub.status?.counters.journal?.records == 1
            }
            let json = try await hub.hubctl.run("status", "--json")
            #expect(json.standardOutput.contains(#""running": true"#))
            await hub.stop()
            let after = try await hub.hubctl.run("status")
            #expect(after.status == 3)
            #expect(after.standardOutput.hasPrefix("hubd:       not running (last seen"))
        }
    }
}

/// A taken HTTP port is logged, and the hub goes on without HTTP (it once took the whole service group down).
@Suite struct HTTPPortTakenTests {
    @Test func hubRunsWhenTheHTTPPortIsTaken() async throws {
        try await withBroker { broker in
            let taken = try SilentListener()
            let hub = try RunningHub()
            try await hub.prepare(broker, sensors: ["door"])
            try hub.start(["HUB_HTTP_LISTEN": "127.0.0.1:\(taken.port)"])
            try await hub.waitForLog("the HTTP API and dashboard can't run; the hub goes on without them")
            // Retained: the hub may have subscribed before or after the HTTP failure was logged (the log reader
            // consumes lines, so waiting for "subscribed" here would race the line above).
            try await publish(broker, [("door", Array("open".utf8))], retain: true)
            try await eventually("the status stored") { try hub.sensor("door")?.status == "open" }
            #expect(await hub.stop() == 0)
        }
    }
}
