/// The SDS011's serial protocol (Nova Fitness "Laser Dust Sensor Control Protocol V1.3"): commands from the host
/// (19 bytes), data and reply frames from the sensor (10 bytes), each with a checksum.
public enum SDS011Frame: Sendable, Hashable {
    /// A reading: `AA C0 pm25lo pm25hi pm10lo pm10hi id1 id2 cs AB`.
    case data(Reading)
    /// An answer to a command: `AA C5 cmd b3 b4 b5 id1 id2 cs AB`.
    case reply(Reply)

    public static let head: UInt8 = 0xAA
    public static let tail: UInt8 = 0xAB
    static let dataCommand: UInt8 = 0xC0
    static let replyCommand: UInt8 = 0xC5
    static let hostCommand: UInt8 = 0xB4
}

/// The device id the sensor reports with every frame (two bytes, shown as hex: `A160`).
public struct SDS011DeviceID: Sendable, Hashable, CustomStringConvertible {
    public var high: UInt8
    public var low: UInt8

    /// Every sensor on the line.
    public static let all = SDS011DeviceID(high: 0xFF, low: 0xFF)

    public init(high: UInt8, low: UInt8) {
        self.high = high
        self.low = low
    }

    /// Four hex digits, as the sensor's label and `hubctl sds011 info` show it.
    public init?(_ text: String) {
        guard text.count == 4, let value = UInt16(text, radix: 16) else { return nil }
        self.init(high: UInt8(value >> 8), low: UInt8(value & 0xFF))
    }

    public var description: String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(high >> 4)], digits[Int(high & 15)], digits[Int(low >> 4)], digits[Int(low & 15)]])
    }
}

/// One PM2.5 / PM10 measurement in µg/m³ (0.0–999.9, one decimal).
public struct Reading: Sendable, Hashable {
    /// Tenths of µg/m³, as the sensor sends them.
    public var pm25Tenths: UInt16
    public var pm10Tenths: UInt16
    public var device: SDS011DeviceID

    public init(pm25Tenths: UInt16, pm10Tenths: UInt16, device: SDS011DeviceID) {
        self.pm25Tenths = pm25Tenths
        self.pm10Tenths = pm10Tenths
        self.device = device
    }

    public var pm25: Double { Double(pm25Tenths) / 10 }
    public var pm10: Double { Double(pm10Tenths) / 10 }
}

extension Collection where Element == Reading {
    /// The mean PM2.5 and PM10 of several samples, to the sensor's own 0.1 µg/m³ (zero when there are none).
    public var mean: (pm25: Double, pm10: Double) {
        guard !isEmpty else { return (0, 0) }
        let count = Double(self.count)
        func average(_ value: (Reading) -> Double) -> Double { (map(value).reduce(0, +) / count * 10).rounded() / 10 }
        return (average(\.pm25), average(\.pm10))
    }
}

/// What the sensor answered to a command.
public struct Reply: Sendable, Hashable {
    /// The command answered (`SDS011Command.Code`).
    public var command: UInt8
    /// Bytes 3, 4 and 5: the command's values.
    public var values: (UInt8, UInt8, UInt8)
    public var device: SDS011DeviceID

    public init(command: UInt8, values: (UInt8, UInt8, UInt8), device: SDS011DeviceID) {
        self.command = command
        self.values = values
        self.device = device
    }

    public static func == (lhs: Reply, rhs: Reply) -> Bool {
        lhs.command == rhs.command && lhs.values == rhs.values && lhs.device == rhs.device
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(command)
        hasher.combine(values.0)
        hasher.combine(values.1)
        hasher.combine(values.2)
        hasher.combine(device)
    }
}

/// A command from the host.
public enum SDS011Command: Sendable, Hashable {
    /// Report by itself every second (`active`) or only when asked (`query`). Survives power-off.
    case setReportingMode(active: Bool)
    case getReportingMode
    /// Ask for a data frame (query mode).
    case query
    /// Give the sensor a new id.
    case setDeviceID(SDS011DeviceID)
    /// Sleep (laser and fan off) or work.
    case setWorking(Bool)
    case getWorking
    /// 0: continuous; 1–30: work 30 s every n minutes. Survives power-off.
    case setWorkingPeriod(minutes: UInt8)
    case getWorkingPeriod
    case firmwareVersion

    public enum Code {
        public static let reportingMode: UInt8 = 2
        public static let query: UInt8 = 4
        public static let deviceID: UInt8 = 5
        public static let sleepWork: UInt8 = 6
        public static let firmware: UInt8 = 7
        public static let workingPeriod: UInt8 = 8
    }

    /// The command's code, which its reply repeats (a query is answered by a data frame).
    public var code: UInt8 {
        switch self {
        case .setReportingMode, .getReportingMode: Code.reportingMode
        case .query: Code.query
        case .setDeviceID: Code.deviceID
        case .setWorking, .getWorking: Code.sleepWork
        case .setWorkingPeriod, .getWorkingPeriod: Code.workingPeriod
        case .firmwareVersion: Code.firmware
        }
    }

    /// The 19 bytes for `device` (every sensor by default).
    public func encode(for device: SDS011DeviceID = .all) -> [UInt8] {
        var data = [UInt8](repeating: 0, count: 15)  // D1…D15
        data[0] = code
        switch self {
        case .setReportingMode(let active): (data[1], data[2]) = (1, active ? 0 : 1)
        case .getReportingMode, .getWorking, .getWorkingPeriod: data[1] = 0
        case .query, .firmwareVersion: break
        case .setDeviceID(let new): (data[11], data[12]) = (new.high, new.low)
        case .setWorking(let working): (data[1], data[2]) = (1, working ? 1 : 0)
        case .setWorkingPeriod(let minutes): (data[1], data[2]) = (1, minutes)
        }
        data[13] = device.high
        data[14] = device.low
        let checksum = UInt8(truncatingIfNeeded: data.reduce(0) { $0 + Int($1) })
        return [SDS011Frame.head, SDS011Frame.hostCommand] + data + [checksum, SDS011Frame.tail]
    }
}

extension SDS011Frame {
    /// The 10 bytes of a sensor frame (the simulator sends these).
    public func encode() -> [UInt8] {
        var body: [UInt8]
        let command: UInt8
        switch self {
        case .data(let reading):
            command = Self.dataCommand
            body = [
                UInt8(reading.pm25Tenths & 0xFF), UInt8(reading.pm25Tenths >> 8), UInt8(reading.pm10Tenths & 0xFF),
                UInt8(reading.pm10Tenths >> 8), reading.device.high, reading.device.low,
            ]
        case .reply(let reply):
            command = Self.replyCommand
            body = [reply.command, reply.values.0, reply.values.1, reply.values.2, reply.device.high, reply.device.low]
        }
        let checksum = UInt8(truncatingIfNeeded: body.reduce(0) { $0 + Int($1) })
        return [Self.head, command] + body + [checksum, Self.tail]
    }
}

/// Finds frames in a byte stream that may hold garbage, partial frames and bad checksums.
///
/// A candidate starts at `AA` followed by `C0` or `C5` and must end with `AB` and a matching checksum; anything
/// else costs one byte, and the search resumes at the next `AA`, so a bad frame never swallows the good one
/// after it. Rejected bytes are counted.
public struct SDS011Decoder: Sendable {
    private var buffer: [UInt8] = []
    /// Bytes skipped as garbage or in bad frames.
    public private(set) var discardedBytes = 0
    /// Frames whose checksum did not match.
    public private(set) var badChecksums = 0

    public init() {}

    /// Adds `bytes` and returns every complete frame now found, in order.
    public mutating func feed(_ bytes: some Sequence<UInt8>) -> [SDS011Frame] {
        buffer.append(contentsOf: bytes)
        var frames: [SDS011Frame] = []
        var index = 0
        while buffer.count - index >= 2 {
            guard buffer[index] == SDS011Frame.head,
                buffer[index + 1] == SDS011Frame.dataCommand || buffer[index + 1] == SDS011Frame.replyCommand
            else {
                index += 1
                discardedBytes += 1
                continue
            }
            guard buffer.count - index >= 10 else { break }
            let frame = buffer[index..<index + 10]
            let body = frame.dropFirst(2).prefix(6)
            let checksum = UInt8(truncatingIfNeeded: body.reduce(0) { $0 + Int($1) })
            guard frame[index + 9] == SDS011Frame.tail, frame[index + 8] == checksum else {
                if frame[index + 9] == SDS011Frame.tail { badChecksums += 1 }
                index += 1
                discardedBytes += 1
                continue
            }
            let b = Array(body)
            let device = SDS011DeviceID(high: b[4], low: b[5])
            if frame[index + 1] == SDS011Frame.dataCommand {
                frames.append(
                    .data(
                        Reading(
                            pm25Tenths: UInt16(b[1]) << 8 | UInt16(b[0]), pm10Tenths: UInt16(b[3]) << 8 | UInt16(b[2]),
                            device: device)))
            } else {
                frames.append(.reply(Reply(command: b[0], values: (b[1], b[2], b[3]), device: device)))
            }
            index += 10
        }
        buffer.removeFirst(index)
        // A stream of garbage with no head must not grow the buffer.
        if buffer.count > 64 { buffer.removeFirst(buffer.count - 10) }
        return frames
    }

    /// Forgets a partial frame (after a gap, a reopen).
    public mutating func reset() { buffer.removeAll() }
}
