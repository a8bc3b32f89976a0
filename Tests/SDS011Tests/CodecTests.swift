import Foundation
import Testing

@testable import SDS011

/// The datasheet's frames, byte for byte.
@Suite struct CodecTests {
    func hex(_ text: String) -> [UInt8] {
        text.split(separator: " ").flatMap { part -> [UInt8] in
            if part.hasPrefix("00x") { return [UInt8](repeating: 0, count: Int(part.dropFirst(3))!) }
            return [UInt8(part, radix: 16)!]
        }
    }

    @Test(arguments: [
        (SDS011Command.setReportingMode(active: true), "AA B4 02 01 00 00x10 FF FF 01 AB"),
        (.setReportingMode(active: false), "AA B4 02 01 01 00x10 FF FF 02 AB"),
        (.query, "AA B4 04 00x12 FF FF 02 AB"),
        (.setWorking(false), "AA B4 06 01 00 00x10 FF FF 05 AB"),
        (.setWorking(true), "AA B4 06 01 01 00x10 FF FF 06 AB"),
        (.setWorkingPeriod(minutes: 5), "AA B4 08 01 05 00x10 FF FF 0C AB"),
        (.firmwareVersion, "AA B4 07 00x12 FF FF 05 AB"),
    ])
    func commandsMatchTheDatasheet(command: SDS011Command, frame: String) {
        #expect(command.encode() == hex(frame))
        #expect(command.encode().count == 19)
    }

    @Test func setDeviceIDAddressesTheOldID() {
        let frame = SDS011Command.setDeviceID(SDS011DeviceID("A001")!).encode(for: SDS011DeviceID("A160")!)
        #expect(frame == hex("AA B4 05 00x10 A0 01 A1 60 A7 AB"))
    }

    @Test func dataFrameDecodesToTheWorkedExample() throws {
        var decoder = SDS011Decoder()
        let frames = decoder.feed(hex("AA C0 D4 04 3A 0A A1 60 1D AB"))
        guard case .data(let reading) = try #require(frames.first) else { Issue.record("not data"); return }
        #expect(reading.pm25 == 123.6 && reading.pm10 == 261.8)
        #expect(reading.device.description == "A160")
        #expect(SDS011Frame.data(reading).encode() == hex("AA C0 D4 04 3A 0A A1 60 1D AB"))
    }

    @Test(arguments: [
        ("AA C5 02 01 01 00 A1 60 05 AB", UInt8(2)),
        ("AA C5 05 00 00 00 A0 01 A6 AB", 5),
        ("AA C5 06 01 00 00 A1 60 08 AB", 6),
        ("AA C5 06 01 01 00 A1 60 09 AB", 6),
        ("AA C5 07 0F 07 0A A1 60 28 AB", 7),
    ])
    func repliesMatchTheDatasheet(frame: String, command: UInt8) throws {
        var decoder = SDS011Decoder()
        let frames = decoder.feed(hex(frame))
        guard case .reply(let reply) = try #require(frames.first) else { Issue.record("not a reply"); return }
        #expect(reply.command == command)
        #expect(SDS011Frame.reply(reply).encode() == hex(frame))
    }

    @Test func roundTripsEveryValue() {
        var decoder = SDS011Decoder()
        for tenths in stride(from: UInt16(0), through: 9999, by: 37) {
            let reading = Reading(
                pm25Tenths: tenths, pm10Tenths: 9999 - tenths, device: SDS011DeviceID(high: 1, low: 2))
            #expect(decoder.feed(SDS011Frame.data(reading).encode()) == [.data(reading)])
        }
    }

    /// Garbage, a partial frame, a bad checksum, a stray head: each good frame after them still comes out, and a
    /// frame split across reads is put together.
    @Test func resynchronisesWithoutLosingTheNextGoodFrame() {
        let good = hex("AA C0 D4 04 3A 0A A1 60 1D AB")
        var bad = good
        bad[8] = 0x1E
        let reply = hex("AA C5 07 0F 07 0A A1 60 28 AB")
        let stream = [0x00, 0xFF, 0xAA] + good.prefix(4) + bad + good + [0xAA, 0xAA] + reply + [0x13] + good
        var decoder = SDS011Decoder()
        var frames: [SDS011Frame] = []
        for chunk in stride(from: 0, to: stream.count, by: 3) {
            frames += decoder.feed(stream[chunk..<min(chunk + 3, stream.count)])
        }
        #expect(frames.count == 3)
        #expect(frames.map(\.isData) == [true, false, true])
        #expect(decoder.badChecksums == 1)
        #expect(decoder.discardedBytes > 0)
    }

    @Test func noiseAloneDoesNotGrowTheBuffer() {
        var decoder = SDS011Decoder()
        for _ in 0..<1000 { #expect(decoder.feed((0..<100).map { _ in UInt8.random(in: 0...0xA9) }).isEmpty) }
    }
}

extension SDS011Frame {
    var isData: Bool { if case .data = self { true } else { false } }
}
