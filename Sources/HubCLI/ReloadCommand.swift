import ArgumentParser
import Foundation
import HubCore

extension HubctlCommand {
    /// `hubctl reload`: SIGHUP to the hubd of this state directory.
    struct Reload: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "reload",
            abstract: "Have hubd read hubd.yaml again (its notifiers, rules, quiet hours, log level…).",
            discussion: """
                Sends SIGHUP to the hubd running on this state directory (the pid in its hubd.lock), as \
                `systemctl reload hubd` does. An invalid file is refused and the running configuration kept; hubd's \
                log says what changed and which keys only apply at a restart. Exits 0 when hubd was asked, 3 when \
                no hubd runs here, 77 when hubd is another user's (run with sudo).
                """)

        @OptionGroup var state: StateOptions

        func run() async throws {
            let directory = try await state.state()
            guard let pid = InstanceLock.holder(directory: directory.path), Self.isHubd(pid) else {
                Failure.printError("no hubd is running on the state directory \(directory.path)")
                throw ExitCode(3)
            }
            guard kill(pid, SIGHUP) == 0 else {
                let code = errno
                Failure.printError("cannot signal hubd (pid \(pid)): \(String(cString: strerror(code)))")
                throw ExitCode(code == EPERM ? Failure.permissionDenied : Failure.ioError)
            }
            print("Asked hubd (pid \(pid)) to read its configuration again; its log says what changed.")
        }

        /// Whether `pid` is a hubd that holds the lock still (not a pid reused since).
        static func isHubd(_ pid: Int32) -> Bool {
            guard pid > 0, kill(pid, 0) == 0 || errno == EPERM,
                let name = try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8)
            else { return false }
            return name.trimmingCharacters(in: .whitespacesAndNewlines) == "hubd"
        }
    }
}
