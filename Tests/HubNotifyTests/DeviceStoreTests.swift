import Crypto
import Foundation
import HubCore
import HubTestKit
import Testing

@testable import HubNotify

@Suite struct DeviceStoreTests {
    let token = String(repeating: "0f", count: 32)

    /// A Web Push subscription is sealed whole (the endpoint too), identified by its endpoint, and keeps its id,
    /// `added` and choice when the browser registers again.
    @Test func webPushSubscriptionsAreSealedAndKeepTheirChoice() throws {
        let directory = try TemporaryDirectory()
        let store = DeviceStore(directory: directory.path)
        let subscription = try WebPushSubscription(json: PushFixtures.subscription())
        let doors = DeviceChoice(sensors: ["door*"], kinds: [.changed])
        let first = try store.add(.webPush(subscription), choice: doors, now: Timestamp(millisecondsSince1970: 1000))
        #expect(first.added && first.device.choice == doors && first.device.address.kind == "webpush")
        #expect(first.device.address.masked == "updates.push.services.mozilla.com")
        let file = try String(contentsOfFile: store.path, encoding: .utf8)
        #expect(!file.contains("mozilla") && !file.contains(PushFixtures.p256dh) && file.contains("door*"))
        #expect(file.contains(#""schemaVersion" : 2"#))

        // Registered again without a choice: the same device, its choice kept.
        let again = try store.add(.webPush(subscription))
        #expect(!again.added && again.device.id == first.device.id && again.device.choice == doors)
        #expect(again.device.added == Timestamp(millisecondsSince1970: 1000))
        // With a choice: that choice. A token beside it is a second device.
        #expect(try store.add(.webPush(subscription), choice: .everything).device.choice == .everything)
        try store.add(.apns(token: token), choice: doors)
        let devices = try store.devices()
        #expect(devices.map(\.address.kind).sorted() == ["apns", "webpush"])
        #expect(devices.first { $0.token == token }?.choice == doors)
        #expect(devices.first { $0.subscription == subscription }?.choice == .everything)

        #expect(try store.remove(PushFixtures.endpoint))
        #expect(try store.devices().map(\.token) == [token])
    }

    /// setChoice by id or token; nil for a device that isn't there; a bad choice is refused before anything changes.
    @Test func choicesAreSetAndChecked() throws {
        let directory = try TemporaryDirectory()
        let store = DeviceStore(directory: directory.path)
        #expect(try store.setChoice("0123456789abcdef", .everything) == nil)
        let device = try store.add(.apns(token: token)).device
        #expect(device.choice == .everything)
        let kitchen = DeviceChoice(sensors: [" kitchen ", "kitchen"], kinds: [.offline])
        #expect(
            try store.setChoice(device.id, kitchen)?.choice == DeviceChoice(sensors: ["kitchen"], kinds: [.offline]))
        #expect(try store.setChoice(token, .everything)?.choice == .everything)
        #expect(try store.setChoice("0123456789abcdef", kitchen) == nil)
        #expect(throws: DeviceError.invalidChoice("an empty sensor name or glob; name sensors like kitchen or door*")) {
            try store.setChoice(device.id, DeviceChoice(sensors: [" "]))
        }
        #expect(throws: DeviceError.self) {
            try store.setChoice(device.id, DeviceChoice(kinds: [.init(rawValue: "x")]))
        }
        #expect(try store.devices().first?.choice == .everything)
    }

    /// A schema 1 file (APNs tokens only, as hubd wrote before choices) is read as devices that want everything,
    /// and written back as schema 2 on the first change.
    @Test func aSchemaOneFileKeepsWorking() throws {
        let directory = try TemporaryDirectory()
        let key = SymmetricKey(size: .bits256)
        try key.withUnsafeBytes { Data($0) }.write(to: URL(fileURLWithPath: directory.file(DeviceStore.keyFileName)))
        let sealed = try AES.GCM.seal(Array(token.utf8), using: key).combined!.hexString
        let id = DeviceStore.id(of: token, key: key)
        let added = Timestamp(millisecondsSince1970: 1_700_000_000_000)
        let v1 = """
            {
              "devices" : [ { "added" : "\(added.iso8601)", "id" : "\(id)", "token" : "\(sealed)" } ],
              "schemaVersion" : 1
            }
            """
        let store = DeviceStore(directory: directory.path)
        try v1.write(toFile: store.path, atomically: true, encoding: .utf8)

        let devices = try store.devices()
        #expect(devices.count == 1)
        #expect(devices.first?.id == id && devices.first?.token == token && devices.first?.choice == .everything)
        #expect(devices.first?.added == added)
        // Adding it again changes nothing, so the file stays as it was.
        #expect(try store.add(.apns(token: token)).added == false)
        #expect(try String(contentsOfFile: store.path, encoding: .utf8) == v1)

        #expect(try store.setChoice(id, DeviceChoice(sensors: ["door*"]))?.token == token)
        let file = try String(contentsOfFile: store.path, encoding: .utf8)
        #expect(file.contains(#""schemaVersion" : 2"#) && file.contains(#""kind" : "apns""#) && !file.contains(token))
        #expect(try store.devices().first?.choice.sensors == ["door*"])
        #expect(try store.devices().first?.added == added)

        // A file from a newer hub is not read as if it were this one's.
        try v1.replacingOccurrences(of: "\"schemaVersion\" : 1", with: "\"schemaVersion\" : 3")
            .write(toFile: store.path, atomically: true, encoding: .utf8)
        #expect(throws: DeviceError.self) { try store.devices() }
    }

    /// The browser's subscription JSON is checked field by field, each error naming the field.
    @Test func subscriptionsAreChecked() throws {
        func error(_ json: [String: Any]) -> String {
            do {
                _ = try WebPushSubscription(json: json)
                return "no error"
            } catch {
                return error.description
            }
        }
        var json = PushFixtures.subscription()
        #expect(error(json) == "no error")
        json["endpoint"] = "http://push.example.com/x"
        #expect(error(json).contains("https"))
        json["endpoint"] = "http://127.0.0.1:8080/push/1"
        #expect(error(json) == "no error")
        json["endpoint"] = "not a url"
        #expect(error(json).contains("endpoint"))
        json["endpoint"] = nil
        #expect(error(json).contains("\"endpoint\""))
        json = PushFixtures.subscription()
        json["keys"] = ["p256dh": "AAAA", "auth": PushFixtures.auth]
        #expect(error(json).contains("keys.p256dh"))
        json["keys"] = ["p256dh": PushFixtures.p256dh, "auth": "AAAA"]
        #expect(error(json).contains("keys.auth"))
        json["keys"] = ["p256dh": PushFixtures.p256dh]
        #expect(error(json).contains("keys.auth"))
        json["keys"] = nil
        #expect(error(json).contains("\"keys\""))

        // Either base64 alphabet, padded or not: kept as base64url without padding.
        let padded = Data([4] + (1...64).map { UInt8($0) }).base64EncodedString()
        let subscription = try WebPushSubscription(
            endpoint: PushFixtures.endpoint, p256dh: padded, auth: PushFixtures.auth)
        #expect(subscription.p256dh == PushFixtures.p256dh)
    }

    /// A device's choice: globs as rules read them, kinds, and `test` always.
    @Test func choiceWantsWhatItNames() throws {
        let choice = try DeviceChoice.everything.replacing(
            sensors: ["door*", "kitchen"], events: ["changed", "offline"])
        #expect(choice.wants(event("Door front")))
        #expect(choice.wants(event("kitchen", kind: .offline)))
        #expect(!choice.wants(event("kitchen", kind: .recovered)))
        #expect(!choice.wants(event("garage")))
        #expect(choice.wants(event("garage", kind: .test)))
        #expect(DeviceChoice.everything.wants(event("anything", kind: .threshold)))
        // Only the part given changes; aliases as in rules.
        let edited = try choice.replacing(events: ["recovery"])
        #expect(edited.sensors == ["door*", "kitchen"] && edited.kinds == [.recovered])
        #expect(try choice.replacing(sensors: []).sensors.isEmpty)
        #expect(throws: DeviceError.self) { try choice.replacing(events: ["opened"]) }
        #expect(throws: DeviceError.self) { try choice.replacing(events: ["test"]) }
        #expect(throws: DeviceError.self) { try choice.replacing(sensors: [""]) }
        // Stored as "sensors" and "events", the words hubctl and the API use.
        let json = String(decoding: try JSONEncoder().encode(choice), as: UTF8.self)
        #expect(json.contains(#""events":["changed","offline"]"#))
    }
}
