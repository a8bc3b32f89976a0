import CPseudoTerminal
import Foundation
import HubSupport
import SDS011
import Synchronization

/// An SDS011 on a pseudo-terminal, speaking the real protocol: active and query reporting, sleep and work, the
/// working period, the firmware version, the device id; and, for tests, garbage on the line and unplugging.
///
/// The port appears at `linkPath` (a symlink to the pty's `/dev/pts/N`), the way udev gives a USB adapter a
/// stable name; `unplug()` removes it and hangs the line up, `plugIn()` brings a new one back at the same path.
public final class SDS011Simulator: Sendable {
    public struct State: Sendable {
        public var pm25: Double = 12.3
        public var pm10: Double = 20.1
        public var device = SDS011DeviceID(high: 0xA1, low: 0x60)
        public var firmware: (UInt8, UInt8, UInt8) = (15, 7, 10)
        /// Active mode: a data frame every `activeInterval` while working.
        public var active = true
        public var working = true
        public var workingPeriod: UInt8 = 0
        public var activeInterval: Duration = .seconds(1)
        /// Noise sent before each frame: a stray `AA`, a broken frame, random bytes.
        public var garbage = false
        /// Commands received, for tests to check.
        public var commands: [UInt8] = []
        /// Queries answered.
        public var queries = 0
        public init() {}
    }

    public let linkPath: String
    /// `Locked`, not `Mutex`: ThreadSanitizer misreads `Mutex`'s hand-offs on Linux (`make tsan` reported a race
    /// between `unplug` and the reading thread, both under the lock).
    private let state = Locked(State())
    private let line = Locked<Line?>(nil)
    private let lines = Atomic<Int>(0)
    private let stopFlag = Atomic<Bool>(false)

    struct Line: Sendable {
        var master: Int32
        var slave: Int32
        var generation: Int
    }

    /// Starts a simulated sensor whose port is `linkPath`.
    public init(linkPath: String, configure: (inout State) -> Void = { _ in }) throws {
        self.linkPath = linkPath
        state.withLock { configure(&$0) }
        try plugIn()
        let thread = Thread { [self] in
            // Named from inside: Foundation on Linux drops a name set before `start`.
            Thread.current.name = "sds011-simulator"
            run()
        }
        thread.start()
    }

    deinit { stop() }

    /// Changes what the sensor reports or how it behaves.
    public func update(_ change: (inout State) -> Void) {
        state.withLock { change(&$0) }
    }

    public var current: State { state.withLock { $0 } }

    /// Pulls the plug: the port path disappears and whoever has it open reads EIO.
    public func unplug() {
        unlink(linkPath)
        line.withLock { line in
            if let current = line {
                close(current.master)
                close(current.slave)
            }
            line = nil
        }
    }

    /// Plugs a sensor back in at the same path (a new pty). Reporting mode and working period survive, as on the
    /// real sensor; sleep does not.
    public func plugIn() throws {
        var name = [CChar](repeating: 0, count: 128)
        let master = sensorhub_open_pseudo_terminal(&name, name.count)
        guard master >= 0 else {
            throw SimulatorError("cannot make a pseudo-terminal: \(String(cString: strerror(errno)))")
        }
        let slavePath = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        // Held open, so the line stays up between the clients that come and go, and set raw, so nothing written
        // to it is echoed back to us as a command.
        let slave = open(slavePath, O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard slave >= 0 else { throw SimulatorError("cannot open \(slavePath): \(String(cString: strerror(errno)))") }
        var settings = termios()
        tcgetattr(slave, &settings)
        cfmakeraw(&settings)
        tcsetattr(slave, TCSANOW, &settings)
        unlink(linkPath)
        guard symlink(slavePath, linkPath) == 0 else {
            throw SimulatorError("cannot link \(linkPath): \(String(cString: strerror(errno)))")
        }
        state.withLock { $0.working = true }
        let generation = lines.add(1, ordering: .relaxed).newValue
        line.withLock { line in
            line = Line(master: master, slave: slave, generation: generation)
        }
    }

    public func stop() {
        stopFlag.store(true, ordering: .relaxed)
        unplug()
    }

    // MARK: - The sensor

    private func run() {
        var buffer: [UInt8] = []
        var nextReport = ContinuousClock.now
        while !stopFlag.load(ordering: .relaxed) {
            guard let current = line.withLock({ $0 }) else {
                usleep(10_000)
                continue
            }
            // Poll outside the lock (a stale descriptor only makes it return early); read and write under it, and
            // only while the line is still this one: once unplugged, its descriptor numbers may belong to someone
            // else's file (another test's pty), which a late read would steal from.
            var descriptor = pollfd(fd: current.master, events: Int16(POLLIN), revents: 0)
            _ = poll(&descriptor, 1, 10)
            let received = withLine(current) { master -> [UInt8] in
                var bytes = [UInt8](repeating: 0, count: 256)
                let count = read(master, &bytes, bytes.count)
                return count > 0 ? Array(bytes[0..<count]) : []
            }
            guard let received else {
                buffer.removeAll()
                continue
            }
            buffer += received
            while let command = Self.nextCommand(&buffer) { handle(command, current) }
            let (active, working, interval) = state.withLock { ($0.active, $0.working, $0.activeInterval) }
            if active && working && ContinuousClock.now >= nextReport {
                send(.data(reading()), current)
                nextReport = .now + interval
            }
        }
    }

    /// Takes the first well-formed command (`AA B4 … CS AB`, 19 bytes) out of `buffer`, skipping noise.
    static func nextCommand(_ buffer: inout [UInt8]) -> [UInt8]? {
        while let start = buffer.firstIndex(of: 0xAA) {
            if start > 0 { buffer.removeFirst(start) }
            guard buffer.count >= 19 else { return nil }
            let frame = Array(buffer[0..<19])
            let checksum = UInt8(truncatingIfNeeded: frame[2...16].reduce(0) { $0 + Int($1) })
            if frame[1] == 0xB4 && frame[18] == 0xAB && frame[17] == checksum {
                buffer.removeFirst(19)
                return frame
            }
            buffer.removeFirst()
        }
        buffer.removeAll()
        return nil
    }

    /// Runs `body` with the master descriptor under the line's lock, if `current` is still the line plugged in.
    private func withLine<T>(_ current: Line, _ body: (Int32) -> T) -> T? {
        line.withLock { line in
            guard let line, line.generation == current.generation else { return nil }
            return body(line.master)
        }
    }

    private func handle(_ frame: [UInt8], _ current: Line) {
        let command = frame[2]
        let set = frame[3] == 1
        let value = frame[4]
        let target = SDS011DeviceID(high: frame[15], low: frame[16])
        let reply: SDS011Frame? = state.withLock { state in
            state.commands.append(command)
            guard target == .all || target == state.device else { return nil }
            func answer(_ values: (UInt8, UInt8, UInt8)) -> SDS011Frame {
                .reply(Reply(command: command, values: values, device: state.device))
            }
            switch command {
            case SDS011Command.Code.reportingMode:
                if set { state.active = value == 0 }
                return answer((frame[3], state.active ? 0 : 1, 0))
            case SDS011Command.Code.query:
                guard state.working else { return nil }
                state.queries += 1
                return .data(
                    Reading(
                        pm25Tenths: UInt16((state.pm25 * 10).rounded()),
                        pm10Tenths: UInt16((state.pm10 * 10).rounded()),
                        device: state.device))
            case SDS011Command.Code.deviceID:
                state.device = SDS011DeviceID(high: frame[13], low: frame[14])
                return answer((0, 0, 0))
            case SDS011Command.Code.sleepWork:
                if set { state.working = value == 1 }
                return answer((frame[3], state.working ? 1 : 0, 0))
            case SDS011Command.Code.workingPeriod:
                if set { state.workingPeriod = min(value, 30) }
                return answer((frame[3], state.workingPeriod, 0))
            case SDS011Command.Code.firmware:
                return answer(state.firmware)
            default:
                return nil
            }
        }
        if let reply { send(reply, current) }
    }

    private func reading() -> Reading {
        state.withLock {
            Reading(
                pm25Tenths: UInt16(($0.pm25 * 10).rounded()), pm10Tenths: UInt16(($0.pm10 * 10).rounded()),
                device: $0.device)
        }
    }

    private func send(_ frame: SDS011Frame, _ current: Line) {
        var bytes = frame.encode()
        if state.withLock({ $0.garbage }) {
            // A stray head, a frame cut short, and a frame with a bad checksum, before the real one.
            var bad = frame.encode()
            bad[8] &+= 1
            bytes = [0x00, 0xAA, 0x13] + Array(frame.encode().prefix(6)) + bad + bytes
        }
        _ = withLine(current) { master in bytes.withUnsafeBytes { write(master, $0.baseAddress!, $0.count) } }
    }
}

struct SimulatorError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
