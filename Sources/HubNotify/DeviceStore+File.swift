import Crypto
import Foundation
import HubCore

/// devices.json: its entries, sealing and opening addresses, the key, and changes under the lock.
extension DeviceStore {
    struct File: Codable, Equatable {
        var schemaVersion = DeviceStore.schemaVersion
        var devices: [Entry] = []

        /// One device as stored: the address sealed, the choice in the clear.
        struct Entry: Codable, Equatable {
            var id: String
            /// `apns` or `webpush`.
            var kind: String
            /// The token, or the subscription as JSON, sealed with AES-GCM, as hex.
            var sealed: String
            var choice: DeviceChoice
            var added: Timestamp

            init(id: String, kind: String, sealed: String, choice: DeviceChoice, added: Timestamp) {
                self.id = id
                self.kind = kind
                self.sealed = sealed
                self.choice = choice
                self.added = added
            }

            enum CodingKeys: String, CodingKey {
                case id, kind, sealed, choice, added
                /// Schema 1: the sealed APNs token, and nothing else but the id and `added`.
                case token
            }

            init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: CodingKeys.self)
                id = try container.decode(String.self, forKey: .id)
                added = try container.decode(Timestamp.self, forKey: .added)
                kind = try container.decodeIfPresent(String.self, forKey: .kind) ?? "apns"
                sealed =
                    try container.decodeIfPresent(String.self, forKey: .sealed)
                    ?? container.decode(String.self, forKey: .token)
                choice = try container.decodeIfPresent(DeviceChoice.self, forKey: .choice) ?? .everything
            }

            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(id, forKey: .id)
                try container.encode(kind, forKey: .kind)
                try container.encode(sealed, forKey: .sealed)
                try container.encode(choice, forKey: .choice)
                try container.encode(added, forKey: .added)
            }
        }
    }

    func seal(_ address: Address, key: SymmetricKey) throws(DeviceError) -> String {
        do {
            let plain: [UInt8]
            switch address {
            case .apns(let token): plain = Array(token.utf8)
            case .webPush(let subscription): plain = Array(try JSONEncoder().encode(subscription))
            }
            return try AES.GCM.seal(plain, using: key).combined!.hexString
        } catch {
            throw .crypto("\(error)")
        }
    }

    func open(_ entry: File.Entry, key: SymmetricKey) throws(DeviceError) -> Address {
        guard let bytes = [UInt8](hex: entry.sealed) else { throw .damaged(path, "an address is not hexadecimal") }
        let plain: Data
        do {
            plain = try AES.GCM.open(AES.GCM.SealedBox(combined: bytes), using: key)
        } catch {
            throw .damaged(path, "an address does not decrypt with \(keyPath) (was the key replaced?)")
        }
        switch entry.kind {
        case "apns":
            return .apns(token: String(decoding: plain, as: UTF8.self))
        case "webpush":
            guard let subscription = try? JSONDecoder().decode(WebPushSubscription.self, from: plain) else {
                throw .damaged(path, "device \(entry.id) is not a Web Push subscription")
            }
            return .webPush(subscription)
        default:
            throw .damaged(path, "device \(entry.id) is of a kind this hub doesn't know: \(entry.kind)")
        }
    }

    func readFile() throws(DeviceError) -> File? {
        guard let data = FileManager.default.contents(atPath: path) else {
            if FileManager.default.fileExists(atPath: path) { throw .system(path: path, "permission denied") }
            return nil
        }
        let file: File
        do {
            file = try JSONDecoder().decode(File.self, from: data)
        } catch {
            throw .damaged(path, "\(error)")
        }
        guard file.schemaVersion <= Self.schemaVersion else {
            throw .damaged(
                path, "schemaVersion \(file.schemaVersion) is newer than this hub reads (\(Self.schemaVersion))")
        }
        return file
    }

    func loadKey(create: Bool) throws(DeviceError) -> SymmetricKey {
        if let data = FileManager.default.contents(atPath: keyPath) {
            guard data.count == 32 else { throw .damaged(keyPath, "the key is not 32 bytes") }
            return SymmetricKey(data: data)
        }
        guard create else { throw .system(path: keyPath, "missing: the devices can't be decrypted without it") }
        let key = SymmetricKey(size: .bits256)
        let bytes = key.withUnsafeBytes { Array($0) }
        do {
            try replaceFileAtomically(at: keyPath, with: bytes)
        } catch {
            throw .system(path: keyPath, "\(error)")
        }
        return key
    }

    /// Runs `change` on the file under the lock and writes it (as the current schema) when the devices changed.
    func update<T>(_ change: (inout File, SymmetricKey) throws(DeviceError) -> T) throws(DeviceError) -> T {
        let lock: Int32
        do {
            try createDirectory(directory)
            lock = try acquireLock(path + ".lock", directory: directory)
        } catch {
            throw .system(path: path, "\(error)")
        }
        defer { close(lock) }
        var file = try readFile() ?? File()
        // A new key for a file that has tokens would leave them unreadable for good.
        let key = try loadKey(create: file.devices.isEmpty)
        let before = file.devices
        let result = try change(&file, key)
        if file.devices != before {
            file.schemaVersion = Self.schemaVersion
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            do {
                try replaceFileAtomically(at: path, with: Array(try encoder.encode(file)) + [10])
            } catch {
                throw .system(path: path, "\(error)")
            }
        }
        return result
    }
}

/// Why a device can't be added, changed, listed or removed.
public enum DeviceError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The token is not a device token.
    case invalidToken(String)
    /// The Web Push subscription is not one a browser makes.
    case invalidSubscription(String)
    /// The choice of sensors or events names something that isn't.
    case invalidChoice(String)
    /// The file or key can't be read as it should.
    case damaged(String, String)
    /// A system call failed.
    case system(path: String, String)
    /// Encryption failed.
    case crypto(String)

    public var description: String {
        switch self {
        case .invalidToken(let reason): return "invalid device token: \(reason)"
        case .invalidSubscription(let reason): return "invalid Web Push subscription: \(reason)"
        case .invalidChoice(let reason): return "invalid choice: \(reason)"
        case .damaged(let path, let reason): return "\(path) is damaged: \(reason)"
        case .system(let path, let reason): return "\(path): \(reason)"
        case .crypto(let reason): return "encryption failed: \(reason)"
        }
    }
}

extension Sequence where Element == UInt8 {
    var hexString: String {
        let digits = Array("0123456789abcdef".utf8)
        var bytes: [UInt8] = []
        for byte in self {
            bytes.append(digits[Int(byte >> 4)])
            bytes.append(digits[Int(byte & 0xf)])
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

extension Array where Element == UInt8 {
    init?(hex: String) {
        let utf8 = Array(hex.utf8)
        guard utf8.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count / 2)
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case 48...57: return c - 48
            case 97...102: return c - 87
            case 65...70: return c - 55
            default: return nil
            }
        }
        var index = 0
        while index < utf8.count {
            guard let high = nibble(utf8[index]), let low = nibble(utf8[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        self = bytes
    }
}

/// HMAC-SHA256 of `body` under `key`, as lowercase hex.
func hmacSHA256Hex(key: [UInt8], _ body: [UInt8]) -> String {
    HMAC<SHA256>.authenticationCode(for: body, using: SymmetricKey(data: key)).hexString
}
