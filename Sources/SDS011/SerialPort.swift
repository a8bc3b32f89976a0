import Foundation

/// A serial port set to the SDS011's line: 9600 baud, 8 data bits, no parity, 1 stop bit, raw. Held with an
/// exclusive `flock`, so `hubctl sds011` and hubd can't talk to one sensor at once.
///
/// Blocking calls: use it from one thread (or serial queue) at a time.
public final class SerialPort: @unchecked Sendable {
    public let path: String
    private var fd: Int32

    /// Opens and configures `path`.
    public init(path: String) throws(SDS011Error) {
        self.path = path
        let fd = open(path, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            switch code {
            case ENOENT, ENODEV, ENXIO: throw .noDevice(path: path)
            case EACCES, EPERM: throw .permissionDenied(path: path, group: Self.group(of: path))
            default: throw .io(path: path, action: "open", errno: code)
            }
        }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            Glibc.close(fd)
            throw .busy(path: path)
        }
        guard isatty(fd) == 1 else {
            Glibc.close(fd)
            throw .notATerminal(path: path)
        }
        var settings = termios()
        guard tcgetattr(fd, &settings) == 0 else {
            let code = errno
            Glibc.close(fd)
            throw .io(path: path, action: "read the settings of", errno: code)
        }
        cfmakeraw(&settings)
        cfsetispeed(&settings, speed_t(B9600))
        cfsetospeed(&settings, speed_t(B9600))
        settings.c_cflag &= ~(tcflag_t(PARENB) | tcflag_t(CSTOPB) | tcflag_t(CSIZE) | tcflag_t(CRTSCTS))
        settings.c_cflag |= tcflag_t(CS8) | tcflag_t(CLOCAL) | tcflag_t(CREAD)
        withUnsafeMutableBytes(of: &settings.c_cc) { cc in
            cc[Int(VMIN)] = 0
            cc[Int(VTIME)] = 0
        }
        guard tcsetattr(fd, TCSANOW, &settings) == 0 else {
            let code = errno
            Glibc.close(fd)
            throw .io(path: path, action: "configure", errno: code)
        }
        tcflush(fd, TCIOFLUSH)
        self.fd = fd
    }

    deinit { close() }

    public func close() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }

    /// Writes all of `bytes`.
    public func write(_ bytes: [UInt8]) throws(SDS011Error) {
        var offset = 0
        let deadline = ContinuousClock.now + .seconds(2)
        while offset < bytes.count {
            let count = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if count >= 0 {
                offset += count
                continue
            }
            let code = errno
            if code == EINTR { continue }
            if code == EAGAIN && ContinuousClock.now < deadline {
                var descriptor = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                _ = poll(&descriptor, 1, 100)
                continue
            }
            throw failure("write to", code)
        }
    }

    /// What arrives within `timeout`: returns as soon as some bytes are there; empty when none came.
    public func read(timeout: Duration) throws(SDS011Error) -> [UInt8] {
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let milliseconds = Int32(
            max(
                0,
                min(timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000, 60_000))
        )
        let ready = poll(&descriptor, 1, milliseconds)
        if ready < 0 {
            if errno == EINTR { return [] }
            throw failure("read", errno)
        }
        if ready == 0 { return [] }
        var buffer = [UInt8](repeating: 0, count: 256)
        let count = Glibc.read(fd, &buffer, buffer.count)
        if count > 0 { return Array(buffer[0..<count]) }
        if count == 0 || descriptor.revents & Int16(POLLHUP | POLLERR) != 0 {
            throw .unplugged(path: path, reason: "the device hung up")
        }
        if errno == EAGAIN || errno == EINTR { return [] }
        throw failure("read", errno)
    }

    private func failure(_ action: String, _ code: Int32) -> SDS011Error {
        switch code {
        case EIO, ENXIO, ENODEV, EBADF: .unplugged(path: path, reason: String(cString: strerror(code)))
        default: .io(path: path, action: action, errno: code)
        }
    }

    /// The group that owns `path` (dialout on Debian), for the permission message.
    static func group(of path: String) -> String? {
        var status = stat()
        guard stat(path, &status) == 0, let group = getgrgid(status.st_gid) else { return nil }
        return String(cString: group.pointee.gr_name)
    }
}

/// Why the sensor can't be used, with what to do about it.
public enum SDS011Error: Error, Sendable, Hashable, CustomStringConvertible {
    /// Nothing at the path: not plugged in, or another name.
    case noDevice(path: String)
    /// The user may not open it.
    case permissionDenied(path: String, group: String?)
    /// Another process holds it (hubd, or another hubctl).
    case busy(path: String)
    /// The path is not a serial port.
    case notATerminal(path: String)
    /// The device went away while in use (EIO, ENXIO).
    case unplugged(path: String, reason: String)
    /// A system call failed.
    case io(path: String, action: String, errno: Int32)
    /// The sensor did not answer in time.
    case timeout(path: String, what: String)

    public var description: String {
        switch self {
        case .noDevice(let path):
            return
                "no device at \(path): is the SDS011 plugged in? (USB adapters show up as /dev/ttyUSB0, /dev/ttyUSB1, …;"
                + " ls /dev/serial/by-id/ shows stable names)"
        case .permissionDenied(let path, let group):
            let join =
                group.map { "join the '\($0)' group that owns it (sudo usermod -aG \($0) $USER, then log in again)" }
                ?? "get read and write access to it"
            return "permission denied opening \(path): \(join)"
        case .busy(let path):
            return "\(path) is in use by another process (hubd reads the sensor while it runs: stop it, or ask it)"
        case .notATerminal(let path):
            return "\(path) is not a serial port"
        case .unplugged(let path, let reason):
            return "\(path) went away (\(reason)): was it unplugged?"
        case .io(let path, let action, let code):
            return "cannot \(action) \(path): \(String(cString: strerror(code)))"
        case .timeout(let path, let what):
            return "no answer from the SDS011 on \(path) to \(what): is it an SDS011, powered, and at 9600 baud?"
        }
    }
}
