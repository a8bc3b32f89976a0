import Foundation
import SDS011
import SDS011Simulator
import Testing

/// The driver against the simulator on a real pseudo-terminal.
@Suite struct DeviceTests {
    func temporaryLink() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("ttySDS-\(UUID().uuidString)").path
    }

    @Test func commandsAndQueries() throws {
        let link = temporaryLink()
        let simulator = try SDS011Simulator(linkPath: link) {
            $0.pm25 = 27.4; $0.pm10 = 40.0
        }
        defer { simulator.stop() }
        let device = try SDS011Device(path: link)
        defer { device.close() }
        try device.setQueryMode(true)
        #expect(try device.isActiveMode() == false)
        let reading = try device.query()
        #expect(reading.pm25 == 27.4 && reading.pm10 == 40.0 && reading.device.description == "A160")
        let firmware = try device.firmware()
        #expect(firmware.version == "15-07-10" && firmware.device.description == "A160")
        #expect(try device.setWorkingPeriod(5) == 5)
        #expect(try device.workingPeriod() == 5)
        try device.setWorking(false)
        #expect(!simulator.current.working)
        #expect(throws: SDS011Error.self) { _ = try device.query() }  // asleep: no data
        try device.setWorking(true)
        #expect(try device.query().pm25 == 27.4)
        #expect(simulator.current.commands.contains(SDS011Command.Code.sleepWork))
    }

    /// Active mode with noise on the line: readings and command replies interleave; all come through.
    @Test func activeModeWithGarbageAndInterleavedReplies() throws {
        let link = temporaryLink()
        let simulator = try SDS011Simulator(linkPath: link) {
            $0.garbage = true
            $0.activeInterval = .milliseconds(50)
        }
        defer { simulator.stop() }
        let device = try SDS011Device(path: link)
        defer { device.close() }
        #expect(try device.nextReading(timeout: .seconds(3))?.pm25 == 12.3)
        #expect(try device.firmware().version == "15-07-10")  // amid data frames
        for _ in 0..<5 { #expect(try device.nextReading(timeout: .seconds(3))?.pm10 == 20.1) }
        #expect(device.discardedBytes > 0)
    }

    @Test func clearErrorsForMissingBusyAndUnplugged() throws {
        #expect(throws: SDS011Error.noDevice(path: "/nonexistent/ttyUSB0")) {
            try SDS011Device(path: "/nonexistent/ttyUSB0")
        }
        #expect(throws: SDS011Error.notATerminal(path: "/dev/null")) { try SDS011Device(path: "/dev/null") }
        let link = temporaryLink()
        let simulator = try SDS011Simulator(linkPath: link)
        defer { simulator.stop() }
        let device = try SDS011Device(path: link)
        #expect(throws: SDS011Error.busy(path: link)) { try SDS011Device(path: link) }
        try device.setQueryMode(true)
        simulator.unplug()
        #expect {
            _ = try device.query()
        } throws: { error in
            if case .unplugged = error as? SDS011Error { return true }
            return false
        }
        device.close()
        #expect(throws: SDS011Error.noDevice(path: link)) { try SDS011Device(path: link) }
        try simulator.plugIn()
        let again = try SDS011Device(path: link)
        defer { again.close() }
        #expect(try again.isActiveMode() == false)  // the reporting mode survived the unplug
        #expect(try again.query().pm25 == 12.3)
        let message = SDS011Error.permissionDenied(path: "/dev/ttyUSB0", group: "dialout").description
        #expect(message.contains("join the 'dialout' group"))
    }
}
