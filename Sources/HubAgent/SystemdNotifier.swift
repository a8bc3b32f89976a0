import Foundation

/// Tells systemd how the agent is doing, the way `sd_notify` does but without libsystemd: one datagram per
/// message to the AF_UNIX socket named in `$NOTIFY_SOCKET` (a leading `@` is the abstract namespace).
public struct SystemdNotifier: Sendable {
    /// The socket, or `nil` when hubd does not run under systemd's `Type=notify` (then nothing is sent).
    public let socketPath: String?
    /// How often to send `WATCHDOG=1`: half of `$WATCHDOG_USEC`, when the watchdog is meant for this process.
    public let watchdogInterval: Duration?

    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        socketPath = environment["NOTIFY_SOCKET"].flatMap { $0.isEmpty ? nil : $0 }
        let pidMatches = environment["WATCHDOG_PID"].map { Int32($0) == getpid() } ?? true
        if pidMatches, let text = environment["WATCHDOG_USEC"], let microseconds = Int64(text), microseconds > 0 {
            watchdogInterval = .microseconds(microseconds / 2)
        } else {
            watchdogInterval = nil
        }
    }

    /// `READY=1` with a status line.
    public func ready(_ status: String) { send("READY=1\nSTATUS=\(status)") }

    public func status(_ status: String) { send("STATUS=\(status)") }

    public func watchdog() { send("WATCHDOG=1") }

    public func stopping() { send("STOPPING=1") }

    /// `RELOADING=1` with the monotonic time systemd asks for; `ready` follows once reloaded.
    public func reloading() {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        send("RELOADING=1\nMONOTONIC_USEC=\(Int64(now.tv_sec) * 1_000_000 + Int64(now.tv_nsec) / 1000)")
    }

    /// Sends one datagram; errors are ignored, as sd_notify does (systemd may not listen).
    public func send(_ message: String) {
        guard let socketPath else { return }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var path = Array(socketPath.utf8)
        if path.first == UInt8(ascii: "@") { path[0] = 0 }
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard path.count < capacity else { return }
        withUnsafeMutableBytes(of: &address.sun_path) { bytes in
            for (index, byte) in path.enumerated() { bytes[index] = byte }
        }
        // The abstract namespace counts the name's exact length; a path socket may include the terminator.
        let length = socklen_t(MemoryLayout<sa_family_t>.size + path.count + (path.first == 0 ? 0 : 1))
        let bytes = Array(message.utf8)
        _ = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bytes.withUnsafeBytes {
                    sendto(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL), socketAddress, length)
                }
            }
        }
    }
}
