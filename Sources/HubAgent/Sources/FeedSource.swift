import AsyncHTTPClient
import Foundation
import HubCore
import HubNotify
import HubSupport
import Logging
import NIOCore
import NIOHTTP1
import ServiceLifecycle

/// A source: polls the regional air-quality feeds of `feeds:` (Singapore's NEA, OpenAQ, generic JSON) and publishes
/// each region's new reading, retained, to `sensorhub/feeds/<feed>/<region>`, where it comes in like any sensor's.
/// Each region is a numeric virtual sensor it adds to the registry once.
///
/// Idempotent: the ledger (`feeds.json`, written crash-safely) remembers each region's newest published feed
/// timestamp, so a repeated poll, a restart, or an older document served again publishes nothing. Requests are
/// conditional when the server gave an `ETag` or `Last-Modified`; a failing feed is retried with back-off, logged
/// now and then, and counted.
final class FeedSource: Service, Sendable {
    let feeds: [FeedSettings]
    let store: any RegistryStore
    /// In a cluster, each feed is polled by the holder of its duty only.
    let keeper: LeaseKeeper?
    let errors: ErrorRecorder
    let logger: Logger
    let ledgerPath: String
    /// Publishes retained at QoS 1 over the hub's connection.
    let publish: @Sendable (String, [UInt8]) async throws -> Void
    private let ledger: Locked<FeedLedger>
    private let counters: Locked<[String: AgentStatus.FeedCounters]>
    /// The largest document taken.
    static let maximumDocument = 4 * 1024 * 1024

    init(
        feeds: [FeedSettings], stateDirectory: String, store: any RegistryStore, keeper: LeaseKeeper?,
        errors: ErrorRecorder, logger: Logger, publish: @escaping @Sendable (String, [UInt8]) async throws -> Void
    ) {
        self.feeds = feeds
        self.keeper = keeper
        self.store = store
        self.errors = errors
        self.logger = logger
        self.publish = publish
        ledgerPath = stateDirectory + "/" + FeedLedger.fileName
        var loaded = FeedLedger()
        if let data = FileManager.default.contents(atPath: ledgerPath) {
            do {
                loaded = try FeedLedger(json: Array(data))
            } catch {
                // Starting afresh republishes each region's current reading once: better than publishing none.
                logger.error(
                    "\(FeedLedger.fileName) can't be read; starting a new one", metadata: ["error": "\(error)"])
            }
        }
        ledger = Locked(loaded)
        counters = Locked(Dictionary(uniqueKeysWithValues: feeds.map { ($0.name, AgentStatus.FeedCounters()) }))
    }

    /// Each feed's counters, for `hubctl status` and `/metrics`.
    var statistics: [String: AgentStatus.FeedCounters] { counters.withLock { $0 } }

    func run() async {
        var configuration = HTTPClient.Configuration()
        configuration.redirectConfiguration = .follow(max: 3, allowCycles: false)
        configuration.connectionPool.retryConnectionEstablishment = false
        let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                for feed in self.feeds {
                    // In a cluster, each feed is polled by the holder of `feed:<name>` only.
                    let gate = DutyGate(keeper: self.keeper, duty: .feed(feed.name))
                    group.addTask { await gate.run { await Poller(source: self, feed: feed, client: client).run() } }
                }
            }
        }
        try? await client.shutdown()
    }

    fileprivate func count(_ feed: String, _ change: (inout AgentStatus.FeedCounters) -> Void) {
        counters.withLock { change(&$0[feed, default: .init()]) }
    }

    /// Publishes the readings the ledger has not seen, oldest first; returns how many were older than the ledger's.
    fileprivate func publishNew(
        _ readings: [FeedReading], of feed: FeedSettings, registered: inout Set<String>
    ) async -> Int {
        var older = 0
        for reading in readings.sorted(by: { $0.time < $1.time }) {
            guard let slug = FeedReading.slug(reading.region) else {
                count(feed.name) { $0.rejected += 1 }
                continue
            }
            switch ledger.withLock({ $0.verdict(feed: feed.name, region: slug, time: reading.time) }) {
            case .repeated:
                count(feed.name) { $0.repeated += 1 }
                continue
            case .older:
                count(feed.name) { $0.older += 1 }
                older += 1
                continue
            case .new:
                break
            }
            if !registered.contains(slug) {
                guard await register(slug, of: feed) else { continue }
                registered.insert(slug)
            }
            do {
                try await publish(feed.topic(region: slug), Array(reading.json.utf8))
            } catch {
                // Not in the ledger: the next poll tries again.
                logger.warning(
                    "could not publish a feed reading", metadata: ["feed": "\(feed.name)", "error": "\(error)"])
                return older
            }
            // After the publish: a crash in between republishes this one reading once, rather than lose it.
            let bytes = ledger.withLock { ledger in
                ledger.record(feed: feed.name, region: slug, time: reading.time)
                return ledger.json
            }
            do {
                try replaceFileAtomically(at: ledgerPath, with: bytes)
            } catch {
                errors.record("could not write \(FeedLedger.fileName): \(error)")
            }
            count(feed.name) { $0.published += 1 }
        }
        return older
    }

    /// Adds the region's sensor to the registry (once); `false` when it can't be.
    private func register(_ slug: String, of feed: FeedSettings) async -> Bool {
        let name = feed.sensorName(region: slug)
        let topic = feed.topic(region: slug)
        let format = ValueFormat(
            path: try? ValuePath("value"), unit: feed.unit, range: FeedReading.plausibleIndex, bands: feed.bands)
        do {
            let existing = try await store.update { document throws(RegistryError) -> Sensor? in
                if let sensor = document.sensor(named: name) { return sensor }
                try document.addSensor(named: name, topic: topic, kind: .numeric, format: format)
                return nil
            }
            if let existing, existing.topic != topic {
                logger.warning(
                    "a sensor of that name has another topic; the feed's region is not published",
                    metadata: [
                        "sensor": "\(existing.name)", "its_topic": "\(existing.topic)", "feed_topic": "\(topic)",
                    ])
                return false
            }
            if existing == nil {
                logger.notice(
                    "added a feed region to the registry",
                    metadata: ["feed": "\(feed.name)", "sensor": "\(name)", "topic": "\(topic)"])
            }
            return true
        } catch {
            errors.record("could not add the feed region \(name) to the registry: \(error)")
            return false
        }
    }
}

/// One feed's polling loop and what it keeps between polls: the validators and last bodies of its documents.
private struct Poller {
    let source: FeedSource
    let feed: FeedSettings
    let client: HTTPClient

    /// A document as last fetched: its body and the validators to send next time.
    struct Cached {
        var body: [UInt8]
        var etag: String?
        var lastModified: String?
    }

    /// An answer that is not the document.
    struct HTTPFailure: Error, CustomStringConvertible {
        var description: String
        /// How long a 429 or 503 asked to wait (`Retry-After`).
        var retryAfter: Duration?
    }

    func run() async {
        var cache: [String: Cached] = [:]
        var locations: [Int: OpenAQFeed.Location] = [:]
        var registered: Set<String> = []
        var log = LogThrottle(every: .seconds(300))
        var backwards = LogThrottle(every: .seconds(300))
        var failures = 0
        var retryAfter: Duration?
        let name = feed.name
        while !Task.isCancelled {
            let start = ContinuousClock.now
            source.count(name) { $0.polls += 1 }
            do {
                if let parse = try await poll(&cache, &locations) {
                    if !parse.rejected.isEmpty {
                        source.count(name) {
                            $0.rejected += parse.rejected.count
                            $0.lastProblem = parse.rejected[0].description
                        }
                        if let count = log.note(parse.rejected.count) {
                            source.logger.warning(
                                "a feed had readings that were refused",
                                metadata: ["feed": "\(name)", "refused": "\(count)", "first": "\(parse.rejected[0])"])
                        }
                    }
                    let older = await source.publishNew(parse.readings, of: feed, registered: &registered)
                    if older > 0, let count = backwards.note(older) {
                        source.logger.warning(
                            "a feed's timestamp went backwards; its older readings are not published",
                            metadata: ["feed": "\(name)", "readings": "\(count)"])
                    }
                } else {
                    source.count(name) { $0.notModified += 1 }
                }
                failures = 0
                retryAfter = nil
            } catch is CancellationError {
                return
            } catch {
                failures += 1
                retryAfter = (error as? HTTPFailure)?.retryAfter
                source.count(name) {
                    $0.failures += 1
                    $0.lastProblem = "\(error)"
                }
                if let count = log.note() {
                    source.logger.warning(
                        "a feed could not be read; retrying with back-off",
                        metadata: ["feed": "\(name)", "error": "\(error)", "problems": "\(count)"])
                }
            }
            // A Retry-After counts from its answer, which came after the poll's start.
            let from = retryAfter == nil ? start : ContinuousClock.now
            let delay = feed.delay(after: failures, retryAfter: retryAfter)
            guard (try? await Task.sleep(until: from + delay)) != nil else { return }
        }
    }

    /// Fetches and reads the feed's documents; `nil` when none of them changed.
    func poll(_ cache: inout [String: Cached], _ locations: inout [Int: OpenAQFeed.Location]) async throws -> FeedParse?
    {
        switch feed.format {
        case .nea:
            var changed = false
            for url in feed.urls { changed = try await fetch(url, into: &cache) || changed }
            guard changed else { return nil }
            return try NEAFeed.parse(feed.urls.compactMap { cache[$0]?.body })
        case .json:
            guard try await fetch(feed.urls[0], into: &cache), let format = feed.json else { return nil }
            return try format.parse(cache[feed.urls[0]]!.body)
        case .openaq:
            var result = FeedParse()
            var changed = false
            for id in feed.locations {
                let base = "\(feed.urls[0])/v3/locations/\(id)"
                if locations[id] == nil {
                    _ = try await fetch(base, into: &cache)
                    locations[id] = try OpenAQFeed.location(cache[base]!.body)
                    cache[base] = nil
                }
                guard try await fetch(base + "/latest", into: &cache) else { continue }
                changed = true
                let parse = try OpenAQFeed.latest(cache[base + "/latest"]!.body, at: locations[id]!)
                result.readings += parse.readings
                result.rejected += parse.rejected
            }
            return changed ? result : nil
        }
    }

    /// GETs `url`, conditionally when it was fetched before; `false` for 304 Not Modified.
    func fetch(_ url: String, into cache: inout [String: Cached]) async throws -> Bool {
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: "User-Agent", value: "SensorHub/\(SensorHubVersion.current)")
        request.headers.add(name: "Accept", value: "application/json")
        if let key = feed.apiKey { request.headers.add(name: "X-API-Key", value: key) }
        if let cached = cache[url] {
            if let etag = cached.etag { request.headers.add(name: "If-None-Match", value: etag) }
            if let date = cached.lastModified { request.headers.add(name: "If-Modified-Since", value: date) }
        }
        let timeout = TimeAmount.milliseconds(Int64(feed.timeout / .milliseconds(1)))
        let response = try await client.execute(request, timeout: timeout)
        let status = Int(response.status.code)
        if status == 304, cache[url] != nil { return false }
        guard status == 200 else {
            let header = response.headers.first(name: "Retry-After")
            let retry = header.map { ", Retry-After \($0)" } ?? ""
            throw HTTPFailure(
                description: "\(url): HTTP \(status) \(response.status.reasonPhrase)\(retry)",
                retryAfter: status == 429 || status == 503 ? HTTPDelivery.retryAfter(header) : nil)
        }
        let body = try await response.body.collect(upTo: FeedSource.maximumDocument)
        cache[url] = Cached(
            body: Array(buffer: body), etag: response.headers.first(name: "ETag"),
            lastModified: response.headers.first(name: "Last-Modified"))
        return true
    }
}
