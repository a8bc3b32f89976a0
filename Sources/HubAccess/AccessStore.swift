import Foundation
import HubCore
import HubSupport

/// `access.json` in the state directory, read and changed whole: a change takes the file's lock
/// (`access.json.lock`), reads it, applies the change and replaces it atomically (0600), so hubctl and hubd never lose
/// each other's changes and a crash leaves the old file or the new one.
public struct AccessStore: Sendable {
    public static let fileName = "access.json"
    public let path: String
    let directory: String

    public init(directory: String) {
        self.directory = directory
        path = "\(directory)/\(Self.fileName)"
    }

    /// The accounts; none yet is an empty document.
    public func read() throws(AccessError) -> AccessDocument {
        guard let data = FileManager.default.contents(atPath: path) else {
            if FileManager.default.fileExists(atPath: path) {
                throw .store("cannot read \(path): permission denied — run as the user that owns the state directory")
            }
            return AccessDocument()
        }
        do {
            return try JSONDecoder().decode(AccessDocument.self, from: data)
        } catch {
            throw .store(
                "\(path) is not a valid accounts file (\(error)); it was left as it is: correct it, or move it aside "
                    + "to start with no accounts")
        }
    }

    /// Applies `change` to the file under its lock; nothing is written when the change throws or changes nothing.
    public func update<T>(_ change: (inout AccessDocument) throws(AccessError) -> T) throws(AccessError) -> T {
        do {
            try createDirectory(directory)
        } catch {
            throw .store(error.description)
        }
        let lock: Int32
        do {
            lock = try acquireLock(path + ".lock", directory: directory)
        } catch {
            throw .store(error.description)
        }
        defer { close(lock) }
        let before = try read()
        var document = before
        let result = try change(&document)
        guard document != before else { return result }
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            try replaceFileAtomically(at: path, with: Array(try encoder.encode(document)))
        } catch let error as StoreError {
            throw .store(error.description)
        } catch {
            throw .store("cannot write \(path): \(error)")
        }
        return result
    }
}

/// The accounts as hubd checks requests against them: read again only when the file changed (one `stat` a
/// request), so a user removed or a token revoked with hubctl is refused from the next request.
public final class AccessCache: Sendable {
    public let store: AccessStore
    private let state = Locked<(key: FileKey?, document: AccessDocument)>((nil, AccessDocument()))

    public init(store: AccessStore) { self.store = store }

    struct FileKey: Equatable {
        var device: UInt64
        var inode: UInt64
        var size: Int64
        var modified: timespec

        static func == (a: FileKey, b: FileKey) -> Bool {
            a.device == b.device && a.inode == b.inode && a.size == b.size
                && a.modified.tv_sec == b.modified.tv_sec && a.modified.tv_nsec == b.modified.tv_nsec
        }
    }

    /// The accounts now. An unreadable file (edited by hand) is no accounts at all, with why, for the log: nobody is
    /// let in by what can't be read.
    public func document() -> (document: AccessDocument, error: AccessError?) {
        var status = stat()
        let key: FileKey? =
            stat(store.path, &status) == 0
            ? FileKey(
                device: UInt64(status.st_dev), inode: UInt64(status.st_ino), size: Int64(status.st_size),
                modified: status.st_mtim) : nil
        if let cached = state.withLock({ $0.key == key && key != nil ? $0.document : nil }) { return (cached, nil) }
        guard key != nil else {
            state.withLock { $0 = (nil, AccessDocument()) }
            return (AccessDocument(), nil)
        }
        do {
            let document = try store.read()
            state.withLock { $0 = (key, document) }
            return (document, nil)
        } catch {
            state.withLock { $0 = (nil, AccessDocument()) }
            return (AccessDocument(), error)
        }
    }
}
