import Foundation
import HubCore
import HubSupport
import Logging
import SDS011
import ServiceLifecycle

/// A source: drives the SDS011 on its serial port (query mode, a reading every interval, the average of a few
/// samples a second apart, sleep in between to spare the laser when the interval allows a warm-up) and publishes
/// each reading, retained, to its own topic, so that it comes back in like any sensor's. It adds itself to the
/// registry as a particulate sensor. A sensor unplugged mid-run is reopened with back-off.
final class SDS011Source: Service, Sendable {
    let settings: HubConfiguration.SDS011Settings
    let store: any RegistryStore
    let logger: Logger
    let errors: ErrorRecorder
    /// Publishes retained at QoS 1 over the hub's connection.
    let publish: @Sendable (String, [UInt8]) async throws -> Void
    /// What the serial line carried that was not a frame, since start.
    private let line = Locked(AgentStatus.SerialLine())
    /// In a cluster, only the holder of `sds011:<name>` opens the port.
    private let gate: DutyGate

    init(
        settings: HubConfiguration.SDS011Settings, store: any RegistryStore, keeper: LeaseKeeper?,
        errors: ErrorRecorder, logger: Logger, publish: @escaping @Sendable (String, [UInt8]) async throws -> Void
    ) {
        self.settings = settings
        gate = DutyGate(keeper: keeper, duty: .sds011(settings.name))
        self.store = store
        self.errors = errors
        var logger = logger
        logger[metadataKey: "sensor"] = "\(settings.name)"
        self.logger = logger
        self.publish = publish
    }

    /// Skipped bytes and bad checksums, for `hubctl status` (zero until the line carries noise: it shows the line
    /// is watched).
    var serialLine: AgentStatus.SerialLine { line.withLock { $0 } }

    func run() async {
        await cancelWhenGracefulShutdown { await self.gate.run { await self.readUntilCancelled() } }
    }

    private func readUntilCancelled() async {
        guard let path = settings.port else { return }
        var backoff: Duration = .seconds(1)
        var lastError: String?
        var noise = Noise()
        while !Task.isCancelled {
            let client: SDS011Client
            do {
                client = try await SDS011Client.open(path: path)
            } catch {
                // Say it once; then quietly keep trying (it may be plugged in later).
                if error.description != lastError {
                    logger.error(
                        "cannot open the SDS011; retrying", metadata: ["port": "\(path)", "error": "\(error)"])
                    lastError = error.description
                }
                guard (try? await Task.sleep(for: backoff)) != nil else { return }
                backoff = min(backoff * 2, .seconds(30))
                continue
            }
            backoff = .seconds(1)
            lastError = nil
            // The decoder's counts start again with each opening (the log's pace goes on).
            noise.discarded = 0
            noise.bad = 0
            do {
                try await read(client, &noise)
            } catch let error as SDS011Error {
                logger.warning("the SDS011 went away; reopening", metadata: ["port": "\(path)", "error": "\(error)"])
                lastError = error.description
            } catch {
                // Cancelled.
            }
            // What a failing line carried before it failed counts too (a loose wire is the likely cause).
            try? await count(&noise, on: client)
            await client.close()
        }
    }

    /// The decoder's counts already passed on, and when the last line about them was logged.
    struct Noise {
        var discarded = 0
        var bad = 0
        var log = LogThrottle()
    }

    /// Passes on what the decoder skipped since the last call; logs it now and then.
    private func count(_ noise: inout Noise, on client: SDS011Client) async throws {
        let seen = try await client.perform { device in
            (discarded: device.discardedBytes, bad: device.badChecksums)
        }
        guard seen.discarded > noise.discarded else { return }
        line.withLock {
            $0.discardedBytes += seen.discarded - noise.discarded
            $0.badChecksums += seen.bad - noise.bad
        }
        if let skipped = noise.log.note(seen.discarded - noise.discarded) {
            logger.warning(
                "the SDS011's line carried bytes that were not frames; skipped them",
                metadata: [
                    "port": "\(client.path)", "skipped_bytes": "\(skipped)", "bad_checksums_total": "\(seen.bad)",
                ])
        }
        noise.discarded = seen.discarded
        noise.bad = seen.bad
    }

    private func read(_ client: SDS011Client, _ noise: inout Noise) async throws {
        let (version, device) = try await client.perform { device throws(SDS011Error) in
            try device.setQueryMode(true)
            try device.setWorking(true)
            return try device.firmware()
        }
        logger.notice(
            "SDS011 ready",
            metadata: ["port": "\(client.path)", "id": "\(device)", "firmware": "\(version)"])
        guard let topic = await register(device) else { return }
        // Sleeping between readings only pays when there is time to warm up again.
        let sampling = Duration.seconds(settings.samples)
        let dutyCycle = settings.interval >= settings.warmUp + sampling + .seconds(5)
        while !Task.isCancelled {
            let start = ContinuousClock.now
            if dutyCycle {
                try await client.perform { device throws(SDS011Error) in try device.setWorking(true) }
                try await Task.sleep(for: settings.warmUp)
            }
            var samples: [Reading] = []
            for index in 0..<settings.samples {
                samples.append(try await client.perform { device throws(SDS011Error) in try device.query() })
                if index < settings.samples - 1 { try await Task.sleep(for: .seconds(1)) }
            }
            if dutyCycle {
                try await client.perform { device throws(SDS011Error) in try device.setWorking(false) }
            }
            // A loose wire or a noisy line shows as skipped bytes: counted each round, logged now and then.
            try await count(&noise, on: client)
            let mean = samples.mean
            let reading = ParticulateReading(pm25: mean.pm25, pm10: mean.pm10, time: .now, device: device.description)
            do {
                try await publish(topic, Array(reading.json.utf8))
                logger.debug("SDS011 reading", metadata: ["pm25": "\(reading.pm25!)", "pm10": "\(reading.pm10!)"])
            } catch {
                logger.warning("could not publish the SDS011 reading", metadata: ["error": "\(error)"])
            }
            try await Task.sleep(until: start + settings.interval)
        }
    }

    /// Adds the SDS011 to the registry as a particulate sensor (once), and returns the topic its readings go to.
    private func register(_ device: SDS011DeviceID) async -> String? {
        await SourceSensor.register(
            name: settings.name, topic: settings.topic.replacingOccurrences(of: "{id}", with: device.description),
            kind: .particulate, source: "the SDS011", store: store, errors: errors, logger: logger)
    }
}
