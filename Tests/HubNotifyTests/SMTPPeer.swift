import Foundation
import HubSupport
import HubTestKit

/// A real SMTP server for the email backend's tests: aiosmtpd, run by `Tests/Peers/smtp_peer.py` from the tests'
/// peer venv (`PythonPeers`), on a free loopback port; it reports what it got as JSON lines.
final class SMTPPeer: Sendable {
    let port: Int
    private let process: ChildProcess
    private let input: FileHandle
    private let records: Locked<[String]>

    private init(port: Int, process: ChildProcess, input: FileHandle, records: Locked<[String]>) {
        self.port = port
        self.process = process
        self.input = input
        self.records = records
    }

    /// Starts the peer: `tls` is `starttls`, `implicit` or `none`; `arguments` go to smtp_peer.py
    /// (`--password`, `--auth LOGIN`, `--no-8bitmime`, `--answers {json}`).
    static func start(tls: String, _ arguments: [String] = []) async throws -> SMTPPeer {
        let certificates = try await TestCertificates.shared()
        let stdin = try makePipe()
        let stdout = try makePipe()
        let process = try ChildProcess(
            try await PythonPeers.python(),
            [
                PythonPeers.root.appendingPathComponent("Tests/Peers/smtp_peer.py").path, "--tls", tls, "--cert",
                certificates.localhost.certificateFile, "--key", certificates.localhost.keyFile,
            ] + arguments,
            standardInput: stdin.read.fileDescriptor, standardOutput: stdout.write.fileDescriptor,
            standardError: FileHandle.standardError.fileDescriptor)
        try stdin.read.close()
        try stdout.write.close()
        // One reader for all it prints: the first line says its port, the rest is what it received.
        let records = Locked<[String]>([])
        let (ready, announce) = AsyncStream<Int?>.makeStream()
        let output = lines(of: stdout.read)
        Task {
            var first = true
            for await line in output {
                if first {
                    let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
                    announce.yield(object?["ready"] as? Int)
                    first = false
                } else {
                    records.withLock { $0.append(line) }
                }
            }
            announce.finish()
        }
        var announced = ready.makeAsyncIterator()
        guard let port = await announced.next() ?? nil else {
            process.send(SIGKILL)
            throw TestKitError("smtp_peer.py did not start (see its standard error above)")
        }
        let peer = SMTPPeer(port: port, process: process, input: stdin.write, records: records)
        return peer
    }

    /// What the peer reported of one kind (`message`, `mail`, `auth`), in order.
    func events(_ kind: String) -> [[String: Any]] {
        records.withLock { $0 }.compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }.filter { $0["event"] as? String == kind }
    }

    /// The messages it took (or answered with a scripted refusal), in order.
    var messages: [[String: Any]] { events("message") }

    /// The messages, once it has reported at least `count` (its report may come after the hub's delivery).
    func messages(_ count: Int) async throws -> [[String: Any]] {
        try await eventually("\(count) messages at the SMTP server") { messages.count >= count }
        return messages
    }

    func stop() async {
        try? input.close()
        if await process.wait(timeout: .seconds(5)) == nil {
            process.send(SIGKILL)
            await process.wait()
        }
    }
}
