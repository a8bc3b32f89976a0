import Foundation
import HubCore
import HubNotify
import Logging

extension Hub {
    /// The logs kept in memory in low wear (`MemoryLogs`), linked from the state directory: the registry's status
    /// log and the alert book's.
    static let memoryLogs = [DefaultsStore.statusLogName, AlertFiles.logName]

    /// systemd's `RuntimeDirectory` (the first, when it names several), where the status file goes: set by the unit
    /// (`RuntimeDirectory=sensorhub`, a tmpfs under /run).
    static func runtimeDirectory(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        guard let value = environment["RUNTIME_DIRECTORY"], let first = value.split(separator: ":").first else {
            return nil
        }
        return String(first)
    }

    /// Puts the logs where `state.low_wear` says, moving what they hold: into the runtime directory (systemd's
    /// `RuntimeDirectory`, a tmpfs) in low wear, back into the state directory otherwise (a hub that ran in low wear
    /// before, when its runtime directory is still there). Returns the journal's directory.
    static func placeLogs(
        lowWear: Bool, state: String, runtime: String?, logger: Logger
    ) throws -> String {
        guard lowWear else {
            for name in memoryLogs { try MemoryLogs.restore(name, in: state) }
            if let runtime { try MemoryLogs.move(Journal.fileName, from: runtime, to: state) }
            return state
        }
        guard let runtime else {
            let error = ConfigurationError.invalid(
                file: nil, key: "state.low_wear", line: nil,
                reason: "the logs are kept in memory, and no directory for them is named: run hubd from its systemd "
                    + "unit (RuntimeDirectory=sensorhub) or set RUNTIME_DIRECTORY to a directory on a tmpfs")
            logger.critical("cannot keep the logs in memory", metadata: ["error": "\(error)"])
            throw error
        }
        for directory in [state, runtime] {
            try FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        try MemoryLogs.move(Journal.fileName, from: state, to: runtime)
        for name in memoryLogs { try MemoryLogs.keep(name, in: runtime, linkedFrom: state) }
        logger.info(
            "low wear: the journal and the logs are kept in memory", metadata: ["runtime_directory": "\(runtime)"])
        return runtime
    }
}
