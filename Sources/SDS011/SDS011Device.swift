import Foundation

/// Talks to one SDS011 on a serial port: commands and their replies, queried and active readings.
///
/// Synchronous and blocking (a command waits for its reply); `SDS011Client` runs it on a queue of its own for
/// async code. Replies and data frames can arrive interleaved: data frames seen while waiting for a reply are
/// kept for `nextReading`, and stale replies are skipped.
public final class SDS011Device: @unchecked Sendable {
    public let port: SerialPort
    private var decoder = SDS011Decoder()
    private var readings: [Reading] = []
    /// How long a command waits for its reply.
    public var replyTimeout: Duration = .seconds(3)

    public init(path: String) throws(SDS011Error) {
        port = try SerialPort(path: path)
    }

    public var path: String { port.path }
    /// Bytes the decoder threw away (noise, bad frames).
    public var discardedBytes: Int { decoder.discardedBytes }
    /// Whole frames whose checksum did not match (the line corrupts data).
    public var badChecksums: Int { decoder.badChecksums }

    public func close() { port.close() }

    // MARK: Commands

    /// Sends `command` and returns the sensor's reply to it.
    @discardableResult
    public func send(_ command: SDS011Command, to device: SDS011DeviceID = .all) throws(SDS011Error) -> Reply {
        try port.write(command.encode(for: device))
        let deadline = ContinuousClock.now + replyTimeout
        while true {
            for frame in try frames(until: deadline) {
                switch frame {
                case .reply(let reply) where reply.command == command.code: return reply
                case .reply: continue  // an answer to something earlier
                case .data(let reading): readings.append(reading)
                }
            }
            guard ContinuousClock.now < deadline else {
                throw .timeout(path: path, what: "\(command)")
            }
        }
    }

    /// Asks for a reading (query mode) and returns it.
    public func query(from device: SDS011DeviceID = .all) throws(SDS011Error) -> Reading {
        readings.removeAll()
        try port.write(SDS011Command.query.encode(for: device))
        let deadline = ContinuousClock.now + replyTimeout
        while true {
            for frame in try frames(until: deadline) {
                if case .data(let reading) = frame { return reading }
            }
            guard ContinuousClock.now < deadline else { throw .timeout(path: path, what: "a query") }
        }
    }

    /// The next reading the sensor sends by itself (active mode), or `nil` after `timeout`.
    public func nextReading(timeout: Duration) throws(SDS011Error) -> Reading? {
        if !readings.isEmpty { return readings.removeFirst() }
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            for frame in try frames(until: deadline) {
                if case .data(let reading) = frame { readings.append(reading) }
            }
            if !readings.isEmpty { return readings.removeFirst() }
        }
        return nil
    }

    /// Query mode (`true`): the sensor speaks only when asked.
    public func setQueryMode(_ query: Bool) throws(SDS011Error) {
        try send(.setReportingMode(active: !query))
    }

    /// Sleep (`false`: laser and fan off) or work. A sleeping sensor still answers this command.
    public func setWorking(_ working: Bool) throws(SDS011Error) {
        try send(.setWorking(working))
    }

    /// Sets the working period (0 continuous, 1–30 minutes) and returns what the sensor confirmed.
    @discardableResult
    public func setWorkingPeriod(_ minutes: Int) throws(SDS011Error) -> Int {
        Int(try send(.setWorkingPeriod(minutes: UInt8(clamping: minutes))).values.1)
    }

    public func workingPeriod() throws(SDS011Error) -> Int {
        Int(try send(.getWorkingPeriod).values.1)
    }

    /// The firmware date (`15-07-10`) and the device id.
    public func firmware() throws(SDS011Error) -> (version: String, device: SDS011DeviceID) {
        let reply = try send(.firmwareVersion)
        let (year, month, day) = reply.values
        return (String(format: "%02d-%02d-%02d", year, month, day), reply.device)
    }

    /// Whether it reports by itself (`true`) or waits to be asked.
    public func isActiveMode() throws(SDS011Error) -> Bool {
        try send(.getReportingMode).values.1 == 0
    }

    private func frames(until deadline: ContinuousClock.Instant) throws(SDS011Error) -> [SDS011Frame] {
        let remaining = deadline - .now
        guard remaining > .zero else { return [] }
        let bytes = try port.read(timeout: min(remaining, .milliseconds(200)))
        return bytes.isEmpty ? [] : decoder.feed(bytes)
    }
}

/// An `SDS011Device` for async code: every blocking call runs on the device's own serial queue.
public final class SDS011Client: Sendable {
    private let device: SDS011Device
    private let queue: DispatchQueue

    /// Opens the sensor on `path` (on the queue, as opening a tty can block).
    public static func open(path: String) async throws(SDS011Error) -> SDS011Client {
        let queue = DispatchQueue(label: "sensorhub.sds011")
        let result: Result<SDS011Device, SDS011Error> = await withCheckedContinuation { continuation in
            queue.async {
                do throws(SDS011Error) {
                    continuation.resume(returning: .success(try SDS011Device(path: path)))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
        }
        return SDS011Client(device: try result.get(), queue: queue)
    }

    private init(device: SDS011Device, queue: DispatchQueue) {
        self.device = device
        self.queue = queue
    }

    public var path: String { device.path }

    /// Runs `body` with the device on its queue.
    public func perform<T: Sendable>(_ body: @escaping @Sendable (SDS011Device) throws(SDS011Error) -> T)
        async throws(SDS011Error) -> T
    {
        let device = self.device
        let result: Result<T, SDS011Error> = await withCheckedContinuation { continuation in
            queue.async {
                do throws(SDS011Error) {
                    continuation.resume(returning: .success(try body(device)))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
        }
        return try result.get()
    }

    public func close() async {
        let device = self.device
        await withCheckedContinuation { continuation in
            queue.async {
                device.close()
                continuation.resume()
            }
        }
    }
}
