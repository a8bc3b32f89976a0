import Foundation

/// Low wear (`state.low_wear`): hubd's logs kept in memory, in systemd's `RuntimeDirectory` (a tmpfs), so that an SD
/// card is written only when a log is folded into its file (the registry's document, the alert book) and when the
/// history commits. The registry's status log and the alert book's log are linked from the state directory under
/// their own names, so every reader (`hubctl`, the API, Home Assistant's entities) finds them where they always
/// were; the journal has no reader but hubd and lives in the memory directory itself. A crash or a restart keeps
/// them (the unit keeps the directory across restarts); a power cut loses them, and with them what was not folded
/// or committed yet.
public enum MemoryLogs {
    /// Where `path` points when it is a symbolic link (made absolute), else nil.
    public static func target(of path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink(path, &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        let target = String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return target.hasPrefix("/") ? target : (path as NSString).deletingLastPathComponent + "/" + target
    }

    /// Keeps the log `name` in `memory`, linked from `state`: what a file of that name in `state` held (a hub that
    /// ran without low wear) is copied there first, and so is what an earlier link's target held. Nothing is lost
    /// to a crash half-way: the file or the old target stays until the link replaces it.
    public static func keep(_ name: String, in memory: String, linkedFrom state: String) throws(StoreError) {
        let path = state + "/" + name
        let inMemory = memory + "/" + name
        let current = target(of: path)
        if current == inMemory { return }
        // A file of its own, or a link somewhere else: what it holds goes to memory.
        if let bytes = FileManager.default.contents(atPath: current ?? path) {
            try replaceFileAtomically(at: inMemory, with: Array(bytes), sync: false)
        }
        try link(path, to: inMemory)
        if let current { unlink(current) }
    }

    /// Puts the log `name` back in `state` as a file of its own, holding what its link's target held (nothing when
    /// the target is gone); nothing to do when it is no link.
    public static func restore(_ name: String, in state: String) throws(StoreError) {
        let path = state + "/" + name
        guard let current = target(of: path) else { return }
        if let bytes = FileManager.default.contents(atPath: current) {
            try replaceFileAtomically(at: path, with: Array(bytes))
        } else {
            unlink(path)
        }
        unlink(current)
    }

    /// Moves the file `name` from `directory` to `destination` (the journal, into memory or back), when there is
    /// one: the one hubd used last. Copied (over what `destination` held), then removed.
    public static func move(_ name: String, from directory: String, to destination: String) throws(StoreError) {
        let source = directory + "/" + name
        guard let bytes = FileManager.default.contents(atPath: source) else { return }
        try replaceFileAtomically(at: destination + "/" + name, with: Array(bytes))
        unlink(source)
    }

    /// Makes `path` a symbolic link to `target`, in one rename.
    public static func link(_ path: String, to target: String) throws(StoreError) {
        let temporary = "\(path).\(getpid()).link"
        unlink(temporary)
        guard symlink(target, temporary) == 0 else {
            throw .system(path: temporary, action: "make a link", errno: errno)
        }
        guard rename(temporary, path) == 0 else {
            let code = errno
            unlink(temporary)
            throw .system(path: path, action: "rename", errno: code)
        }
    }
}
