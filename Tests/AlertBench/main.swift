// The alert stage's cost (bench/alerts.sh): hubd's router with a file backend (its outbox fsynced, the file
// written) taking the same events through a plain rule, a plain rule under a silence, and an alerting rule; then
// the storm: 10,000 sensors offline, at once and spread over 10 s, one event a batch, with the storm guard and without.
import Foundation
import HubCore
import HubNotify
import HubSupport
import Logging

func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
        + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

func lineCount(_ path: String) -> Int {
    guard let data = FileManager.default.contents(atPath: path) else { return 0 }
    return data.withUnsafeBytes { bytes in bytes.reduce(0) { $1 == 10 ? $0 + 1 : $0 } }
}

struct Run {
    var seconds: Double
    var cpu: Double
    var lines: Int
}

/// Starts a router on `yaml` in a fresh directory, hands it `batches` (each as the journal would), and waits until
/// the router says every event is routed (in the outbox, and in the alert book on disk) and the file backend has
/// `expected` lines.
func run(_ yaml: String, silence: Silence? = nil, batches: [[SensorEvent]], expected: Int) async throws -> Run {
    let directory = NSTemporaryDirectory() + "alert-bench-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let audit = directory + "/audit.jsonl"
    var logger = Logger(label: "bench")
    logger.logLevel = .error
    if let silence {
        try AlertRequests(directory: directory).append([.silence(silence)])
    }
    let routed = Locked(0)
    let router = try NotificationRouter(
        configuration: NotifierConfiguration.parse(yaml.replacingOccurrences(of: "AUDIT", with: audit)),
        stateDirectory: directory, logger: logger, progress: { position in routed.withLock { $0 = max($0, position) } })
    let task = Task { await router.run() }
    try await Task.sleep(for: .milliseconds(300))
    let (t0, c0) = (ContinuousClock.now, cpuSeconds())
    var position = 0
    for batch in batches {
        position += batch.count
        router.submit(batch, through: position)
    }
    // The file is counted only once everything is routed (reading it is work the router's cores would feel).
    while routed.withLock({ $0 }) < position { try await Task.sleep(for: .milliseconds(5)) }
    while lineCount(audit) < expected { try await Task.sleep(for: .milliseconds(20)) }
    let elapsed = ContinuousClock.now - t0
    let result = Run(
        seconds: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18,
        cpu: cpuSeconds() - c0, lines: lineCount(audit))
    task.cancel()
    await task.value
    return result
}

func events(sensors: Int, rounds: Int, statuses: [String], kind: SensorEvent.Kind = .changed) -> [[SensorEvent]] {
    var batches: [[SensorEvent]] = []
    var batch: [SensorEvent] = []
    let time = Timestamp.now
    for round in 0..<rounds {
        for sensor in 0..<sensors {
            let status = statuses[round % statuses.count]
            let old = statuses[(round + statuses.count - 1) % statuses.count]
            batch.append(
                SensorEvent(
                    id: SensorEvent.id(sensor: String(format: "%012x", sensor), sequence: round + 1), kind: kind,
                    sensor: "s\(sensor)", topic: "bench/s\(sensor)", oldStatus: old, newStatus: status, time: time))
            if batch.count == 1000 {
                batches.append(batch)
                batch = []
            }
        }
    }
    if !batch.isEmpty { batches.append(batch) }
    return batches
}

func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

let arguments = CommandLine.arguments
let runs = Int(ProcessInfo.processInfo.environment["RUNS"] ?? "") ?? 3
let sensors = 1000
let rounds = 100
let total = sensors * rounds
let plain = """
    notifiers:
      backends: { audit: { type: file, path: AUDIT, queue_size: 200000 } }
      rules: { all: { backends: [audit] } }
    """
let alerting = """
    notifiers:
      backends: { audit: { type: file, path: AUDIT, queue_size: 200000 } }
      rules:
        doors: { backends: [audit], events: [changed], statuses: [open], group_by: [sensor], group_wait: 0s, group_interval: 1s }
    """
let later = Timestamp(millisecondsSince1970: Timestamp.now.millisecondsSince1970 + 3_600_000)
let elsewhere = Silence(
    id: "bench", matchers: [Silence.Matcher(name: "sensor", operation: .equal, value: "nothing-*")],
    startsAt: .now, endsAt: later, createdBy: "bench", comment: "matches no sensor")
let batches = events(sensors: sensors, rounds: rounds, statuses: ["open", "closed"])

/// `ONLY=storm` runs the storm's rows alone (what a profile of the alert stage under a power cut wants);
/// `ONLY=storm-guard` only those with the storm guard (hubd's default), to profile that case alone.
let only = ProcessInfo.processInfo.environment["ONLY"]

var rows: [(String, [Run])] = [
    ("plain rule (no alert features)", []), ("plain rule, a silence in force", []), ("alerting rule", []),
]
for _ in 0..<(only?.hasPrefix("storm") == true ? 0 : runs) {
    rows[0].1.append(try await run(plain, batches: batches, expected: total))
    rows[1].1.append(try await run(plain, silence: elsewhere, batches: batches, expected: total))
    // The alerting rule sends per group and interval: timed until every event is in the book on disk.
    rows[2].1.append(try await run(alerting, batches: batches, expected: 0))
}
if only?.hasPrefix("storm") != true {
    print("## The alert stage per event\n")
    print(
        "\(total) events (\(sensors) sensors × \(rounds) statuses, open/closed), in batches of 1,000 as the journal hands them; median of \(runs) runs.\n"
    )
    print("| path | events/s | CPU µs per event | lines in the file | vs plain |")
    print("|---|---|---|---|---|")
    let base = median(rows[0].1.map { Double(total) / $0.seconds })
    for (name, results) in rows {
        let rate = median(results.map { Double(total) / $0.seconds })
        let cpu = median(results.map { $0.cpu / Double(total) * 1e6 })
        print(String(format: "| %@ | %.0f | %.1f | %d | %.2f× |", name, rate, cpu, results.last!.lines, rate / base))
    }
}

// The storm: 10,000 sensors offline, the events arriving as the broker delivers wills (one by one, spread over
// time), not in 1,000-event batches: at once (one event a batch, as fast as they come), and spread evenly over 10 s.
let stormSensors = 10_000
func stormYAML(_ storm: Int) -> String {
    """
    alerts: { storm: \(storm) }
    notifiers:
      backends: { audit: { type: file, path: AUDIT, queue_size: 200000 } }
      rules:
        power: { backends: [audit], events: [silent, offline], group_by: [sensor], group_wait: 1s, group_interval: 5s }
    """
}

/// The alerts the file's messages name so far: the lines written since the last look read, not the whole file
/// again (parsing 10,000 lines every 50 ms was a fifth of the process's CPU in `perf`, counted as the router's).
final class Named {
    let path: String
    private var offset = 0
    private var ids = Set<String>()

    init(_ path: String) { self.path = path }

    var count: Int {
        guard let handle = FileHandle(forReadingAtPath: path) else { return ids.count }
        defer { try? handle.close() }
        try? handle.seek(toOffset: UInt64(offset))
        let data = (try? handle.readToEnd()) ?? Data()
        // Only whole lines: the backend may be writing the next.
        guard let end = data.lastIndex(of: 10) else { return ids.count }
        for line in data[data.startIndex...end].split(separator: 10) {
            guard let object = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any] else { continue }
            ids.formUnion(object["alerts"] as? [String] ?? [])
        }
        offset += end - data.startIndex + 1
        return ids.count
    }
}

struct StormRun {
    var messages: Int
    /// From the first event to the first message, and to the message that named the last alert.
    var first: Double
    var last: Double
    var cpu: Double
}

/// Hands the router the storm's events one at a time, spread evenly over `spread` seconds (in steps of 10 ms), and
/// waits until the file names every alert.
func storm(_ yaml: String, spread: Double) async throws -> StormRun {
    let directory = NSTemporaryDirectory() + "alert-bench-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let audit = directory + "/audit.jsonl"
    var logger = Logger(label: "bench")
    logger.logLevel = .error
    let router = try NotificationRouter(
        configuration: NotifierConfiguration.parse(yaml.replacingOccurrences(of: "AUDIT", with: audit)),
        stateDirectory: directory, logger: logger)
    let task = Task { await router.run() }
    try await Task.sleep(for: .milliseconds(300))
    let (t0, c0) = (ContinuousClock.now, cpuSeconds())
    func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
    // The first message is watched for while the events still come.
    let firstSeen = Task { () -> Double in
        while lineCount(audit) == 0 && !Task.isCancelled { try? await Task.sleep(for: .milliseconds(20)) }
        return seconds(ContinuousClock.now - t0)
    }
    let steps = max(1, Int(spread * 100))
    let perStep = (stormSensors + steps - 1) / steps
    var sent = 0
    for step in 0..<steps {
        let time = Timestamp.now
        for sensor in sent..<min(stormSensors, sent + perStep) {
            // One event a batch, as the journal hands a message it took on its own.
            router.submit(
                [
                    SensorEvent(
                        id: SensorEvent.id(sensor: String(format: "%012x", sensor), sequence: 1), kind: .silent,
                        sensor: "s\(sensor)", topic: "bench/s\(sensor)", oldStatus: "closed", newStatus: "offline",
                        time: time)
                ], through: sensor + 1)
        }
        sent = min(stormSensors, sent + perStep)
        if spread > 0 { try await Task.sleep(until: t0 + .milliseconds(10 * (step + 1))) }
    }
    let named = Named(audit)
    while named.count < stormSensors { try await Task.sleep(for: .milliseconds(50)) }
    let last = seconds(ContinuousClock.now - t0)
    let first = await firstSeen.value
    let result = StormRun(messages: lineCount(audit), first: first, last: last, cpu: cpuSeconds() - c0)
    task.cancel()
    await task.value
    return result
}

print("\n## The storm: \(stormSensors) sensors offline\n")
print(
    "group_by sensor (one group each: the worst case), group_wait 1 s, group_interval 5 s; one event a batch, at once or spread evenly over 10 s; the time from the first event to the first message and to the message naming the last alert; median of \(runs) runs.\n"
)
print("| | arriving | messages | first message | every alert told | CPU seconds |")
print("|---|---|---|---|---|---|")
let guards = [("storm guard (storm: 20)", 20), ("no storm guard", 1_000_000)]
for (name, guardLimit) in only == "storm-guard" ? Array(guards.prefix(1)) : guards {
    for (arriving, spread) in [("at once", 0.0), ("over 10 s", 10.0)] {
        var results: [StormRun] = []
        for _ in 0..<runs { results.append(try await storm(stormYAML(guardLimit), spread: spread)) }
        print(
            String(
                format: "| %@ | %@ | %d | %.2f s | %.2f s | %.2f |", name, arriving, results.last!.messages,
                median(results.map(\.first)), median(results.map(\.last)), median(results.map(\.cpu))))
    }
}
