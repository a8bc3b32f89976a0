import Foundation
import HubCore
import Logging
import SDS011

/// Drives the SDS011 on its serial port: query mode, a reading every interval (the average of a few samples a
/// second apart), sleep in between to spare the laser when the interval allows a warm-up, and the reading
/// published as the hub's own topic. A sensor unplugged mid-run is reopened with back-off.
struct SDS011Reader: Sendable {
    let settings: HubConfiguration.SDS011Settings
    let logger: Logger
    /// Makes sure the registry has the sensor and returns its topic; `nil` when it can't (logged).
    let register: @Sendable (SDS011DeviceID) -> String?
    /// Publishes retained at QoS 1 over the hub's connection.
    let publish: @Sendable (String, [UInt8]) async throws -> Void
    /// Counts bytes the decoder skipped since the last call (discarded bytes, bad checksums).
    let countNoise: @Sendable (_ discardedBytes: Int, _ badChecksums: Int) -> Void

    func run() async {
        guard let path = settings.port else { return }
        var backoff: Duration = .seconds(1)
        var lastError: String?
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
            do {
                try await read(client)
            } catch let error as SDS011Error {
                logger.warning("the SDS011 went away; reopening", metadata: ["port": "\(path)", "error": "\(error)"])
                lastError = error.description
            } catch {
                // Cancelled.
            }
            await client.close()
        }
    }

    private func read(_ client: SDS011Client) async throws {
        let (version, device) = try await client.perform { device throws(SDS011Error) in
            try device.setQueryMode(true)
            try device.setWorking(true)
            return try device.firmware()
        }
        logger.notice(
            "SDS011 ready",
            metadata: ["port": "\(client.path)", "id": "\(device)", "firmware": "\(version)"])
        guard let topic = register(device) else { return }
        // Sleeping between readings only pays when there is time to warm up again.
        let sampling = Duration.seconds(settings.samples)
        let dutyCycle = settings.interval >= settings.warmUp + sampling + .seconds(5)
        var noise = (discarded: 0, bad: 0)
        var noiseLog = LogThrottle()
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
            let seen = try await client.perform { device in
                (discarded: device.discardedBytes, bad: device.badChecksums)
            }
            if seen.discarded > noise.discarded {
                countNoise(seen.discarded - noise.discarded, seen.bad - noise.bad)
                if let skipped = noiseLog.note(seen.discarded - noise.discarded) {
                    logger.warning(
                        "the SDS011's line carried bytes that were not frames; skipped them",
                        metadata: [
                            "port": "\(client.path)", "skipped_bytes": "\(skipped)",
                            "bad_checksums_total": "\(seen.bad)",
                        ])
                }
                noise = seen
            }
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
}
