import Foundation

/// An HTTP/1.1 exchange written byte for byte, with whatever headers a test chooses — a Host no client library would
/// send, an Origin a browser would, a cookie — read until the server closes (`Connection: close`).
public struct RawHTTP: Sendable {
    public struct Answer: Sendable, CustomStringConvertible {
        public var status: Int
        /// Header names lowercased, in order.
        public var headers: [(name: String, value: String)]
        public var body: String

        public func header(_ name: String) -> String? {
            headers.first { $0.name == name.lowercased() }?.value
        }

        public func headers(_ name: String) -> [String] {
            headers.filter { $0.name == name.lowercased() }.map(\.value)
        }

        /// The `{"error": …}` of a JSON answer, or the body.
        public var error: String {
            ((try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any])?["error"] as? String ?? body
        }

        public var description: String { "HTTP \(status): \(body.prefix(300))" }
    }

    public let host: String
    public let port: Int

    public init(host: String = "127.0.0.1", port: Int) {
        self.host = host
        self.port = port
    }

    public init(address: String) {
        let parts = address.split(separator: ":")
        self.init(host: String(parts.dropLast().joined(separator: ":")), port: Int(parts.last ?? "") ?? 0)
    }

    /// `host:port`, as a browser's Host header and Origin say it.
    public var authority: String { "\(host):\(port)" }
    public var origin: String { "http://\(authority)" }

    /// Sends `method path` with `headers` (a `Host` among them replaces the usual one) and `body`; the answer.
    public func send(
        _ method: String, _ path: String, headers: [(String, String)] = [], body: String? = nil
    ) async throws -> Answer {
        let (host, port) = (self.host, self.port)
        let authority = self.authority
        return try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                do {
                    continuation.resume(
                        returning: try Self.exchange(
                            host: host, port: port, authority: authority, method, path, headers, body))
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
    }

    private static func exchange(
        host: String, port: Int, authority: String, _ method: String, _ path: String, _ headers: [(String, String)],
        _ body: String?
    ) throws -> Answer {
        var text = "\(method) \(path) HTTP/1.1\r\n"
        if !headers.contains(where: { $0.0.lowercased() == "host" }) { text += "Host: \(authority)\r\n" }
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        if let body { text += "Content-Length: \(body.utf8.count)\r\n" }
        text += "Connection: close\r\n\r\n" + (body ?? "")
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestKitError("socket: \(errno)") }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        inet_pton(AF_INET, host, &address.sin_addr)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { throw TestKitError("cannot connect to \(host):\(port): errno \(errno)") }
        let bytes = Array(text.utf8)
        var sent = 0
        while sent < bytes.count {
            let count = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + sent, bytes.count - sent) }
            guard count > 0 else { throw TestKitError("write failed: errno \(errno)") }
            sent += count
        }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = read(fd, &buffer, buffer.count)
            if count <= 0 { break }
            received += buffer[..<count]
        }
        let answer = String(decoding: received, as: UTF8.self)
        guard let split = answer.range(of: "\r\n\r\n") else { throw TestKitError("no HTTP answer: \(answer)") }
        let head = answer[..<split.lowerBound].components(separatedBy: "\r\n")
        let status = Int(head.first?.split(separator: " ").dropFirst().first ?? "") ?? 0
        let fields = head.dropFirst().compactMap { line -> (String, String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (
                line[..<colon].lowercased(),
                line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            )
        }
        var content = String(answer[split.upperBound...])
        if fields.contains(where: { $0.0 == "transfer-encoding" && $0.1.lowercased() == "chunked" }) {
            content = dechunk(content)
        }
        return Answer(status: status, headers: fields, body: content)
    }

    private static func dechunk(_ text: String) -> String {
        var rest = Substring(text)
        var out = ""
        while let line = rest.range(of: "\r\n") {
            guard let size = Int(rest[..<line.lowerBound], radix: 16), size > 0 else { break }
            let start = line.upperBound
            let bytes = Array(rest[start...].utf8)
            out += String(decoding: bytes.prefix(size), as: UTF8.self)
            rest = Substring(String(decoding: bytes.dropFirst(size + 2), as: UTF8.self))
        }
        return out
    }
}
