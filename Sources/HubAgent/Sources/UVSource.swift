import Foundation
import HubCore
import HubNotify
import HubSupport
import Logging
import ServiceLifecycle

/// A source: the clear-sky UV index for `uv:`'s place, computed every interval and published, retained, to its own
/// topic, so that it comes back in like any sensor's. It adds itself to the registry as a numeric sensor with WHO's
/// bands (its status is the band). With `uv.temis` it reads the ozone column and the week's forecast from the
/// TEMIS page, at most every `temis_refresh`; when the page fails the last good one is kept — in the state
/// directory too, so a restart keeps it — and the payload says so (`temis_failures`, `temis_error`).
final class UVSource: Service, Sendable {
    /// The page kept in the state directory: the last one that was read, as it came.
    static let pageFile = "uv-temis.html"

    let settings: UVSettings
    let place: GeoPoint
    let store: any RegistryStore
    let stateDirectory: String
    let logger: Logger
    let errors: ErrorRecorder
    /// Publishes retained at QoS 1 over the hub's connection.
    let publish: @Sendable (String, [UInt8]) async throws -> Void
    private let counters = Locked(AgentStatus.TEMISCounters())
    /// In a cluster, only the holder of `uv:<name>` publishes.
    private let gate: DutyGate

    init(
        settings: UVSettings, place: GeoPoint, store: any RegistryStore, stateDirectory: String, keeper: LeaseKeeper?,
        errors: ErrorRecorder, logger: Logger, publish: @escaping @Sendable (String, [UInt8]) async throws -> Void
    ) {
        self.settings = settings
        gate = DutyGate(keeper: keeper, duty: .uv(settings.name))
        self.place = place
        self.store = store
        self.stateDirectory = stateDirectory
        self.errors = errors
        var logger = logger
        logger[metadataKey: "sensor"] = "\(settings.name)"
        self.logger = logger
        self.publish = publish
    }

    var pagePath: String { stateDirectory + "/" + Self.pageFile }

    /// The TEMIS page's fetches, for `hubctl status` and `/metrics`; `nil` when no page is read.
    var statistics: AgentStatus.TEMISCounters? {
        settings.temisURL == nil ? nil : counters.withLock { $0 }
    }

    func run() async throws {
        let http = try settings.temisURL.map { _ in try HTTPDelivery(caFile: nil, timeout: .seconds(30)) }
        await cancelWhenGracefulShutdown {
            await self.gate.run {
                guard let topic = await self.register() else { return }
                await self.publishUntilCancelled(topic: topic, http: http)
            }
        }
        await http?.shutdown()
    }

    /// The TEMIS page in hand, and how fetching it went.
    struct TEMIS {
        var page: TEMISPage?
        var status = UVSourceReading.TEMISStatus()
        var next = ContinuousClock.now
        var log = LogThrottle(every: .seconds(3600))
    }

    private func publishUntilCancelled(topic: String, http: HTTPDelivery?) async {
        var temis = TEMIS()
        if http != nil { temis = kept() }
        while !Task.isCancelled {
            let start = ContinuousClock.now
            if let http, let url = settings.temisURL, start >= temis.next { await fetch(url, with: http, into: &temis) }
            let reading = UVSourceReading(settings: settings, place: place, now: Date(), page: temis.page)
            let payload = reading.payload(temis: http == nil ? nil : temis.status)
            do {
                try await publish(topic, Array(payload.utf8))
                logger.debug(
                    "published the UV index",
                    metadata: [
                        "uvi": "\(reading.index)", "ozone": "\(reading.ozone)",
                        "ozone_source": "\(reading.ozoneSource.rawValue)",
                    ])
            } catch {
                logger.warning("could not publish the UV index", metadata: ["error": "\(error)"])
            }
            guard (try? await Task.sleep(until: start + settings.interval)) != nil else { return }
        }
    }

    /// The page kept by the last run, if any: read as it was, fetched when it was written.
    private func kept() -> TEMIS {
        var temis = TEMIS()
        guard let bytes = FileManager.default.contents(atPath: pagePath) else { return temis }
        do {
            temis.page = try TEMISPage(html: bytes, place: place)
            let written = (try? FileManager.default.attributesOfItem(atPath: pagePath)[.modificationDate]) as? Date
            temis.status.fetched = written
            counters.withLock { $0.lastGoodFetch = written }
            if let written {
                // Fetched again once it is as old as the refresh allows.
                let age = Duration.seconds(max(0, Date().timeIntervalSince(written)))
                temis.next = .now + max(.zero, settings.temisRefresh - age)
            }
        } catch {
            logger.warning("the kept TEMIS page can't be read; fetching it again", metadata: ["error": "\(error)"])
        }
        return temis
    }

    /// Fetches and reads the page; on success keeps it (and its file), on failure keeps the last good one and
    /// tries again after the interval, backing off to the refresh.
    private func fetch(_ url: String, with http: HTTPDelivery, into temis: inout TEMIS) async {
        let problem: String
        counters.withLock { $0.fetches += 1 }
        do {
            let answer = try await http.get(url, limit: TEMISPage.maximumSize + 1)
            if answer.status == 200 {
                let bytes = Array(answer.body.utf8)
                let page = try TEMISPage(html: bytes, place: place)
                temis.page = page
                temis.status = UVSourceReading.TEMISStatus(fetched: Date())
                counters.withLock { $0.lastGoodFetch = temis.status.fetched }
                temis.next = .now + settings.temisRefresh
                do {
                    try replaceFileAtomically(at: pagePath, with: bytes)
                } catch {
                    logger.warning("could not keep the TEMIS page", metadata: ["error": "\(error)"])
                }
                logger.info("read the TEMIS page", metadata: ["days": "\(page.days.count)"])
                return
            }
            problem = "HTTP \(answer.status)"
        } catch {
            problem = "\(error)"
        }
        temis.status.failures += 1
        temis.status.lastError = problem
        counters.withLock {
            $0.failures += 1
            $0.lastError = problem
        }
        let retry = settings.interval * (1 << min(temis.status.failures - 1, 16))
        temis.next = .now + min(retry, settings.temisRefresh)
        if let count = temis.log.note() {
            logger.warning(
                "the TEMIS page failed; keeping the last good values",
                metadata: [
                    "url": "\(url)", "error": "\(problem)", "failures": "\(count)",
                    "kept_from": "\(temis.status.fetched.map { Timestamp($0).iso8601 } ?? "none")",
                ])
        }
    }

    /// Adds the UV index to the registry as a numeric sensor with WHO's bands (once), and returns the topic its
    /// readings go to.
    private func register() async -> String? {
        let format = ValueFormat(path: try? ValuePath("uvi"), unit: "UVI", decimals: 1, range: 0...100, bands: .whoUV)
        return await SourceSensor.register(
            name: settings.name, topic: settings.resolvedTopic, kind: .numeric, format: format, source: "the UV index",
            store: store, errors: errors, logger: logger)
    }
}
