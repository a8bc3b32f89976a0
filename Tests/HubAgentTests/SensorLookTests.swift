import HubCore
import HubNotify
import Testing

@testable import HubAgent

/// How the dashboard shows a sensor (issue 53): its state, its device's flags and its room, decided in one place.
@Suite struct SensorLookTests {
    func sensor(_ name: String, _ status: String, _ attributes: SensorAttributes = []) -> Sensor {
        Sensor(name: name, topic: name, status: status, added: .now, attributes: attributes)
    }

    func setup() throws -> AlertBook.Setup {
        try NotifierConfiguration.parse(
            """
            alerts:
              sensors:
                "front door": { labels: { room: hall } }
            notifiers:
              backends:
                phone: { type: file, path: /dev/null }
              rules:
                doors: { sensors: ["* door"], events: [changed], statuses: [open], backends: [phone], group_wait: 0s }
            """
        ).alertSetup
    }

    @Test func eachStateAndItsRoom() throws {
        let setup = try setup()
        let open = SensorLook(sensor("front door", "open"), firing: [], setup: setup)
        #expect(open.state == .alert && open.room == "hall")
        #expect(SensorLook(sensor("front door", "closed"), firing: [], setup: setup).state == .fine)
        // A firing alert of any kind (offline, a threshold) makes it red too.
        #expect(SensorLook(sensor("cellar", "21.5"), firing: ["cellar"], setup: setup).state == .alert)
        #expect(SensorLook(sensor("cellar", "offline"), firing: [], setup: setup).state == .offline)
        #expect(SensorLook(sensor("cellar", Sensor.waiting), firing: [], setup: setup).state == .waiting)
        #expect(SensorLook(sensor("cellar", "open"), firing: [], setup: nil).state == .fine, "no rule: no alarm")
        #expect(SensorLook(sensor("cellar", "open"), firing: [], setup: setup).room == nil)
    }

    @Test func aLowBatteryAndAWeakLinkAreFlagged() {
        let flags = SensorLook.flags([
            .init(name: "battery", value: .number(12)), .init(name: "linkquality", value: .number(18)),
            .init(name: "note", value: .string("x")),
        ])
        #expect(flags == ["battery 12 %", "weak signal (link quality 18)"])
        #expect(SensorLook.flags([.init(name: "battery", value: .number(21)), .init(name: "linkquality", value: .number(31))]).isEmpty)
        #expect(SensorLook.flags([.init(name: "battery_low", value: .bool(true))]) == ["battery low"])
        #expect(SensorLook.flags([.init(name: "rssi", value: .number(-85))]) == ["weak signal (-85 dBm)"])
        #expect(SensorLook.flags([.init(name: "rssi", value: .number(-60))]).isEmpty)
    }
}
