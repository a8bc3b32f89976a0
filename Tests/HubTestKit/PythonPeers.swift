import Foundation

/// The tests' independent peers written in Python — Apprise's URL parser, an SMTP server, a Web Push decryptor… —
/// pinned in `Tests/Peers/requirements.txt` and installed by `scripts/peer-venv` into `.build/peer-venv` (`make
/// test` makes it first; a test run alone makes it here, once). A peer that can't be had fails the test that needs
/// it: it is never skipped.
public enum PythonPeers {
    /// The package's folder.
    public static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The venv's interpreter, the venv made first when it is not there yet (or its requirements changed).
    public static func python() async throws -> String {
        let script = root.appendingPathComponent("scripts/peer-venv").path
        let made = try await runProcess(script, [], environment: ProcessInfo.processInfo.environment)
        let venv = made.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
        guard made.status == 0, !venv.isEmpty else {
            throw TestKitError("scripts/peer-venv failed (status \(made.status)):\n\(made.standardError)")
        }
        return venv + "/bin/python"
    }

    /// Runs `script` (a path from the package's folder) with the venv's interpreter.
    public static func run(_ script: String, _ arguments: [String], input: String? = nil) async throws
        -> ProcessOutput
    {
        try await runProcess(
            try await python(), [root.appendingPathComponent(script).path] + arguments, input: input,
            environment: ProcessInfo.processInfo.environment)
    }
}
