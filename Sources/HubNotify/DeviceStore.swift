import Crypto
import Foundation
import HubCore

/// The phones that get push notifications: APNs device tokens, encrypted at rest and de-duplicated.
///
/// `devices.json` in the state directory holds each token sealed with AES-GCM (a random 12-byte nonce, then the
/// ciphertext and tag, as hex), under a 256-bit key in `device-key` (mode 0600, made on first use). A device's id
/// is an HMAC of its token under that key: stable, unique, and telling nothing about the token. Changes are made
/// under `flock` and written crash-safely, like the registry.
public struct DeviceStore: Sendable {
    public static let fileName = "devices.json"
    public static let keyFileName = "device-key"

    public let directory: String
    public var path: String { directory + "/" + Self.fileName }
    var keyPath: String { directory + "/" + Self.keyFileName }

    public init(directory: String) {
        self.directory = directory
    }

    /// One registered device, decrypted.
    public struct Device: Sendable, Hashable {
        public var id: String
        public var token: String
        public var added: Timestamp

        /// The token as lists show it: enough to recognise, not enough to use.
        public var maskedToken: String { "\(token.prefix(8))…\(token.suffix(4))" }
    }

    struct File: Codable {
        var schemaVersion = 1
        var devices: [Entry] = []

        struct Entry: Codable {
            var id: String
            var token: String
            var added: Timestamp
        }
    }

    /// Checks and normalises a token: hexadecimal, 32 to 100 bytes (APNs tokens are 32 today; Apple says they may
    /// grow).
    public static func normalise(_ token: String) throws(DeviceError) -> String {
        let hex = token.trimmingCharacters(in: .whitespacesAndNewlines).replacingOccurrences(of: " ", with: "")
            .lowercased()
        guard !hex.isEmpty, hex.allSatisfy({ $0.isHexDigit && $0.isASCII }) else {
            throw .invalidToken("a device token is hexadecimal digits (0-9, a-f)")
        }
        guard hex.count % 2 == 0, (64...200).contains(hex.count) else {
            throw .invalidToken("a device token is 64 to 200 hexadecimal digits; this one has \(hex.count)")
        }
        return hex
    }

    /// Every device that decrypts; `undecryptable` counts those that don't (a replaced key), which are skipped.
    public func devices() throws(DeviceError) -> [Device] {
        try readDevices().devices
    }

    func readDevices() throws(DeviceError) -> (devices: [Device], undecryptable: Int) {
        guard let file = try readFile() else { return ([], 0) }
        guard !file.devices.isEmpty else { return ([], 0) }
        let key = try loadKey(create: false)
        var devices: [Device] = []
        var undecryptable = 0
        for entry in file.devices {
            if let token = try? open(entry.token, key: key) {
                devices.append(Device(id: entry.id, token: token, added: entry.added))
            } else {
                undecryptable += 1
            }
        }
        return (devices, undecryptable)
    }

    /// Adds `token` unless it is there already; returns the device and whether it was new.
    @discardableResult
    public func add(_ token: String, now: Timestamp = .now) throws(DeviceError) -> (device: Device, added: Bool) {
        let token = try Self.normalise(token)
        return try update { file, key throws(DeviceError) in
            let id = Self.id(of: token, key: key)
            if let entry = file.devices.first(where: { $0.id == id }) {
                return (Device(id: id, token: token, added: entry.added), false)
            }
            let sealed: String
            do {
                sealed = try AES.GCM.seal(Array(token.utf8), using: key).combined!.hexString
            } catch {
                throw .crypto("\(error)")
            }
            file.devices.append(.init(id: id, token: sealed, added: now))
            return (Device(id: id, token: token, added: now), true)
        }
    }

    /// Removes the device with this id or token; `false` when there was none.
    @discardableResult
    public func remove(_ idOrToken: String) throws(DeviceError) -> Bool {
        guard FileManager.default.fileExists(atPath: path) else { return false }
        return try update { file, key throws(DeviceError) in
            let wanted = idOrToken.trimmingCharacters(in: .whitespaces).lowercased()
            let id = (try? Self.normalise(wanted)).map { Self.id(of: $0, key: key) } ?? wanted
            let before = file.devices.count
            file.devices.removeAll { $0.id == id }
            return file.devices.count != before
        }
    }

    // MARK: - Files

    static func id(of token: String, key: SymmetricKey) -> String {
        String(HMAC<SHA256>.authenticationCode(for: Array(token.utf8), using: key).hexString.prefix(16))
    }

    private func open(_ sealed: String, key: SymmetricKey) throws(DeviceError) -> String {
        guard let bytes = [UInt8](hex: sealed) else { throw .damaged(path, "a token is not hexadecimal") }
        do {
            let box = try AES.GCM.SealedBox(combined: bytes)
            return String(decoding: try AES.GCM.open(box, using: key), as: UTF8.self)
        } catch {
            throw .damaged(path, "a token does not decrypt with \(keyPath) (was the key replaced?)")
        }
    }

    private func readFile() throws(DeviceError) -> File? {
        guard let data = FileManager.default.contents(atPath: path) else {
            if FileManager.default.fileExists(atPath: path) { throw .system(path: path, "permission denied") }
            return nil
        }
        do {
            return try JSONDecoder().decode(File.self, from: data)
        } catch {
            throw .damaged(path, "\(error)")
        }
    }

    private func loadKey(create: Bool) throws(DeviceError) -> SymmetricKey {
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

    private func update<T>(_ change: (inout File, SymmetricKey) throws(DeviceError) -> T) throws(DeviceError) -> T {
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
        let before = file.devices.map(\.id)
        let result = try change(&file, key)
        if file.devices.map(\.id) != before {
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

/// Why a device can't be added, listed or removed.
public enum DeviceError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The token is not a device token.
    case invalidToken(String)
    /// The file or key can't be read as it should.
    case damaged(String, String)
    /// A system call failed.
    case system(path: String, String)
    /// Encryption failed.
    case crypto(String)

    public var description: String {
        switch self {
        case .invalidToken(let reason): return "invalid device token: \(reason)"
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
