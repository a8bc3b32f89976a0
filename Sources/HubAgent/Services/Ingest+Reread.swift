import Foundation
import HubCore
import HubSupport
import Logging
import Mosquitto

/// Per-sensor order in a cluster (docs/cluster.md). A shared subscription hands a sensor's consecutive messages to
/// different agents, each draining its own queue, so two statuses sent close together can be committed in the other
/// order. The step sees when that may have happened: catching up with a row another agent changed less than a second
/// before. A second after the last such sensor of a burst, the agent reads what the broker retains for them (the
/// sensor's last status, whichever agent took it) through a short plain subscription of its own, and applies it in a
/// step like a message: a sensor committed out of order ends on its last status again. A retained status older than
/// the row (a message committed after it was read) is left, and looked at again a second later.
extension Ingest {
    /// Sensors whose row another agent had changed less than this (ms) before this agent caught up with it.
    static let contentionWindow: Int64 = 1000
    /// The same while this agent works through a queue (a batch of several): it may have been held up for seconds
    /// (a busy machine, a paused process). Sensors that report every minute are not read again in a steady flow.
    static let laggingWindow: Int64 = 10_000
    /// Sensors put right in one step, at most: a re-read after a mass reconnection may cover thousands.
    static let rereadStep = 500

    /// Re-reads that found no retained status for a sensor before it is left alone (it does not retain them).
    static let rereadMisses = 3

    /// Notes `topics` as sensors whose order may be wrong, from now; `missed`: a re-read found no retained status
    /// for them (the broker was slow, or they retain none), counted up to `rereadMisses`.
    func noteContended(_ topics: [String], missed: [String: Int] = [:]) {
        guard !topics.isEmpty else { return }
        let now = ContinuousClock.now
        contended.withLock { contended in
            for topic in topics {
                let misses = missed[topic].map { $0 + 1 } ?? 0
                guard misses < Self.rereadMisses else { continue }
                contended[topic] = (now, max(misses, contended[topic]?.misses ?? 0))
            }
        }
    }

    /// Every second: the sensors whose last contention is a second old, read from the retained messages and put right.
    func rereadContended(_ shared: SharedIngest) async {
        guard let configuration = shared.rereadConfiguration else { return }
        await every(.seconds(1)) {
            let now = ContinuousClock.now
            let settled = self.contended.withLock { contended -> [String: Int] in
                let settled = contended.filter { now - $0.value.since >= .seconds(1) }.mapValues(\.misses)
                for topic in settled.keys { contended[topic] = nil }
                return settled
            }
            guard !settled.isEmpty else { return }
            await self.reread(settled, shared, configuration: configuration())
        }
    }

    private func reread(_ settled: [String: Int], _ shared: SharedIngest, configuration: MosquittoConfiguration)
        async
    {
        let topics = settled.keys.sorted()
        let replays: [(message: MQTTMessage, read: Timestamp)]
        do {
            replays = try await Self.retained(of: topics, configuration: configuration, logger: logger)
        } catch {
            errors?.record("could not read the retained statuses of \(topics.count) sensors: \(error)")
            noteContended(topics, missed: settled)
            return
        }
        // Not answered: looked at again, a few times (a sensor that retains nothing is left alone then).
        let answered = Set(replays.map(\.message.topic))
        noteContended(topics.filter { !answered.contains($0) }, missed: settled)
        for start in stride(from: 0, to: replays.count, by: Self.rereadStep) {
            await apply(Array(replays[start..<min(start + Self.rereadStep, replays.count)]), shared)
        }
    }

    /// Applies retained statuses in one step, each unless the row is newer than it.
    private func apply(_ replays: [(message: MQTTMessage, read: Timestamp)], _ shared: SharedIngest) async {
        let topics = replays.map(\.message.topic)
        let changed = tracker.withLock { tracker in
            Set(replays.flatMap { tracker.topicsChanged(byMessageOn: $0.message.topic) ?? [] })
        }
        do {
            let (results, fresh) = try await commit(changed, shared) { tracker, _ in
                let results = replays.map { replay -> (SensorTracker.Outcome, RecordedReading?)? in
                    let topic = replay.message.topic
                    // Committed since it was read: that message is newer than this one.
                    if let last = tracker.status(onTopic: topic)?.lastUpdated, replay.read < last { return nil }
                    let outcome = tracker.ingest(
                        topic: topic, payload: replay.message.payload, retained: true, time: .now, now: .now)
                    return (outcome, outcome.reading.map { tracker.recorded($0, topic: topic) })
                }
                return (results, results.flatMap { $0?.0.events ?? [] })
            }
            var skipped: [String] = []
            var corrected = 0
            for (replay, result) in zip(replays, results) {
                guard let (outcome, recorded) = result else {
                    skipped.append(replay.message.topic)
                    continue
                }
                if !outcome.events.isEmpty || outcome.reading != nil { corrected += 1 }
                account(outcome, of: replay.message, recorded: recorded, fresh: fresh)
            }
            noteContended(skipped)
            logger.info(
                "read the retained statuses of sensors two agents took messages of close together",
                metadata: [
                    "sensors": "\(topics.count)", "corrected": "\(corrected)", "newer_in_store": "\(skipped.count)",
                ])
        } catch {
            errors?.record("could not commit the retained statuses of \(topics.count) sensors: \(error)")
            noteContended(topics)
        }
    }

    /// The retained message of each of `topics` (those that have one), with when it was read: a client of its own
    /// subscribes to them plainly, takes what the broker replays (until each topic has answered, nothing came for
    /// half a second, or 5 s), and disconnects.
    static func retained(of topics: [String], configuration: MosquittoConfiguration, logger: Logger) async throws
        -> [(message: MQTTMessage, read: Timestamp)]
    {
        try await MosquittoClient.withConnection(configuration: configuration, logger: logger) { client in
            let received = Locked<(messages: [String: (MQTTMessage, Timestamp)], last: ContinuousClock.Instant)>(
                ([:], .now))
            let reader = Task {
                for await message in client.messages where message.retain {
                    received.withLock {
                        $0.messages[message.topic] = (message, .now)
                        $0.last = .now
                    }
                }
            }
            defer { reader.cancel() }
            for chunk in stride(from: 0, to: topics.count, by: 1000) {
                _ = try await client.subscribe(
                    Array(topics[chunk..<min(chunk + 1000, topics.count)]), qos: .atMostOnce)
            }
            received.withLock { $0.last = .now }
            let deadline = ContinuousClock.now + .seconds(5)
            while ContinuousClock.now < deadline {
                let (count, last) = received.withLock { ($0.messages.count, $0.last) }
                if count == topics.count || ContinuousClock.now - last >= .milliseconds(500) { break }
                try await Task.sleep(for: .milliseconds(50))
            }
            return received.withLock { $0.messages.values.map { (message: $0.0, read: $0.1) } }
                .sorted { $0.message.topic < $1.message.topic }
        }
    }
}
