import CPseudoTerminal
import Foundation
import HubAccess
import HubTestKit
import Testing

/// `hubctl users` and `hubctl tokens` as a person runs them: the password asked twice on a real pseudo-terminal,
/// never echoed; weak ones refused saying why; a token printed once and never listed.
@Suite(.timeLimit(.minutes(2)))
struct HubctlUsersTests {
    /// hubctl on a pseudo-terminal: what it writes to the terminal, and its exit status, given `answers` to type
    /// after each prompt it prints.
    func onATerminal(_ hubctl: Hubctl, _ arguments: [String], answers: [(prompt: String, typed: String)]) async throws
        -> (screen: String, status: Int32?)
    {
        var name = [CChar](repeating: 0, count: 128)
        let master = sensorhub_open_pseudo_terminal(&name, name.count)
        #expect(master >= 0)
        defer { close(master) }
        let path = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let slave = open(path, O_RDWR | O_NOCTTY | O_CLOEXEC)
        #expect(slave >= 0)
        let child = try ChildProcess(
            hubctl.executable, arguments, environment: hubctl.environment, standardInput: slave, standardOutput: slave,
            standardError: slave)
        close(slave)
        var screen = ""
        func read(until text: String, within: Duration = .seconds(10)) async throws {
            let deadline = ContinuousClock.now + within
            var buffer = [UInt8](repeating: 0, count: 4096)
            while !screen.contains(text) {
                let count = Glibc.read(master, &buffer, buffer.count)
                if count > 0 {
                    screen += String(decoding: buffer[..<count], as: UTF8.self)
                } else {
                    guard ContinuousClock.now < deadline else {
                        throw TestKitError("no '\(text)' on the terminal within \(within): \(screen)")
                    }
                    try await Task.sleep(for: .milliseconds(20))
                }
            }
        }
        for (prompt, typed) in answers {
            try await read(until: prompt)
            let before = screen.count
            _ = Array((typed + "\n").utf8).withUnsafeBytes { write(master, $0.baseAddress!, $0.count) }
            // What the terminal shows after the prompt: never the password.
            try await Task.sleep(for: .milliseconds(100))
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = Glibc.read(master, &buffer, buffer.count)
            if count > 0 { screen += String(decoding: buffer[..<count], as: UTF8.self) }
            #expect(!screen.dropFirst(before).contains(typed), "the password was echoed: \(screen)")
        }
        let status = await child.wait(timeout: .seconds(20))
        var buffer = [UInt8](repeating: 0, count: 4096)
        while case let count = Glibc.read(master, &buffer, buffer.count), count > 0 {
            screen += String(decoding: buffer[..<count], as: UTF8.self)
        }
        return (screen, status)
    }

    @Test func aPasswordIsAskedTwiceWithoutEchoAndKeptHashed() async throws {
        let hubctl = try Hubctl()
        let differ = try await onATerminal(
            hubctl, ["users", "add", "ben", "--role", "member"],
            answers: [("Password for ben: ", "first pass phrase"), ("Again: ", "second pass phrase")])
        #expect(differ.status == 64 && differ.screen.contains("The two passwords differ"), "\(differ.screen)")
        let added = try await onATerminal(
            hubctl, ["users", "add", "ben", "--role", "member"],
            answers: [("Password for ben: ", "first pass phrase"), ("Again: ", "first pass phrase")])
        #expect(added.status == 0 && added.screen.contains("Added ben (member)"), "\(added.screen)")
        let file = try String(contentsOfFile: hubctl.state.file("access.json"), encoding: .utf8)
        #expect(file.contains("$argon2id$") && !file.contains("first pass phrase"))
        let document = try AccessStore(directory: hubctl.state.path).read()
        let stored = try #require(document.user(named: "ben")?.password)
        #expect(PasswordHash.verify("first pass phrase", against: stored))
        var status = stat()
        #expect(stat(hubctl.state.file("access.json"), &status) == 0 && status.st_mode & 0o777 == 0o600)
    }

    @Test func accountsAndTokensFromTheCommandLine() async throws {
        let hubctl = try Hubctl()
        let weak = try await hubctl.run(["users", "add", "ana", "--role", "admin"], input: "ana12345678\n")
        #expect(weak.status == 64 && weak.standardError.contains("must not contain the user's name"))
        let short = try await hubctl.run(["users", "add", "ana", "--role", "admin"], input: "short\n")
        #expect(short.status == 64 && short.standardError.contains("at least 10 characters"))
        let badName = try await hubctl.run(["users", "add", "Ana Smith", "--role", "admin"], input: "x\n")
        #expect(badName.status == 64 && badName.standardError.contains("is not a user name"))
        #expect(try await hubctl.run(["users", "add", "ana", "--role", "admin"], input: "tall tree 42\n").status == 0)
        let again = try await hubctl.run(["users", "add", "ana", "--role", "viewer"], input: "tall tree 42\n")
        #expect(again.status == 64 && again.standardError.contains("there is already a user 'ana'"))
        #expect(try await hubctl.run("users", "role", "ana", "member").standardOutput == "ana is now a member.\n")
        let list = try await hubctl.run("users", "list")
        #expect(list.standardOutput.contains("ana   member  0"), "\(list.standardOutput)")
        #expect(try await hubctl.run("users", "passwd", "nobody").status == 64)

        let made = try await hubctl.run("tokens", "add", "grafana", "--scope", "read", "--expires", "30d")
        let token = made.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(made.status == 0 && token.hasPrefix("shub_") && token.count == 46, "\(made.standardOutput)")
        #expect(made.standardError.contains("shown this once"))
        let tokens = try await hubctl.run("tokens", "list")
        #expect(tokens.standardOutput.contains("grafana") && !tokens.standardOutput.contains(token.suffix(20)))
        #expect(!(try String(contentsOfFile: hubctl.state.file("access.json"), encoding: .utf8)).contains(token))
        #expect(try await hubctl.run("tokens", "revoke", "grafana").status == 0)
        #expect(try await hubctl.run("tokens", "revoke", "grafana").status == 64)
        let removed = try await hubctl.run("users", "remove", "ana")
        #expect(removed.standardOutput.contains("No admin is left"), "\(removed.standardOutput)")
    }
}
