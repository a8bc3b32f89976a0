import Foundation
import HubCore
import HubTestKit
import Mosquitto
import Testing

/// A corpus of hostile payloads against a running hubd: no crash, nothing stored, each one counted by reason.
@Suite struct HostilePayloadTests {
    @Test func hostilePayloadsAreCountedNotStored() async throws {
        try await withBroker { broker in
            let hub = try RunningHub()
            try await hub.prepare(broker, sensors: ["door"])
            let add = try await hub.hubctl.run("sensors", "add", "air", "--kind", "particulate")
            #expect(add.status == 0)
            try await hub.startAndWaitUntilReady()
            try await publish(broker, [("door", Array("closed".utf8)), ("air", Array(#"{"pm25":5,"pm10":9}"#.utf8))])
            try await eventually("first statuses") { try hub.sensor("door")?.status == "closed" }

            var random = SystemRandomNumberGenerator()
            let binary = (0..<4096).map { _ in UInt8.random(in: 0...255, using: &random) } + [0xFF]
            let door: [[UInt8]] = [
                binary,  // not UTF-8
                [0xC3, 0x28], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80],  // bad sequence, surrogate, > U+10FFFF
                Array(repeating: UInt8(ascii: "A"), count: 256 * 1024),  // 256 KiB
                Array(String(repeating: "[", count: 100_000).utf8),  // deeply nested, and long
                [], Array(" \t\r\n ".utf8),  // empty
                Array("open\u{1B}[2J".utf8), Array("a\0b".utf8), Array("line\nbreak".utf8), Array("x\u{85}y".utf8),
            ]
            let air: [[UInt8]] = [
                Array(String(repeating: "[", count: 200).utf8),  // deep JSON, short enough to be parsed
                Array(#"{"pm25":"NaN"}"#.utf8), Array(#"{"pm25":-1}"#.utf8), Array(#"{"pm25":1e400}"#.utf8),
                Array(#"{"SDS0X1":{"PM2.5":{"x":1}}}"#.utf8), Array("open".utf8), Array("[1,2,3]".utf8),
            ]
            try await publish(broker, door.map { ("door", $0) } + air.map { ("air", $0) })
            try await eventually("every hostile payload counted", within: .seconds(20)) {
                let rejected = hub.status?.counters.rejected ?? [:]
                return rejected["not valid UTF-8"] == 4 && rejected["longer than sensors.max_status_length"] == 2
                    && rejected["empty"] == 2 && rejected["contains control characters"] == 4
                    && rejected[
                        "not a particulate reading (the hub's JSON, Tasmota's, or a number; with a position on the Earth if any)"
                    ] == 7
            }
            // Still alive and working; nothing hostile stored.
            try await publish(broker, [("door", Array("open".utf8))])
            try await eventually("a good status after them") { try hub.sensor("door")?.status == "open" }
            #expect(try hub.sensor("air")?.status == "Good")
            #expect(hub.child.map { kill($0.pid, 0) == 0 } == true)
            await hub.stop()
        }
    }
}
