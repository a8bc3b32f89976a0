import Foundation
import HubCore
import HubSupport
import Logging

/// The last error any service met, for `hubctl status` and the status file; each is logged as it is recorded.
final class ErrorRecorder: Sendable {
    private let last = Locked<AgentStatus.LastError?>(nil)
    private let logger: Logger

    init(logger: Logger) {
        self.logger = logger
    }

    func record(_ message: String) {
        logger.error("\(message)")
        last.withLock { $0 = AgentStatus.LastError(time: Date(), message: message) }
    }

    var lastError: AgentStatus.LastError? { last.withLock { $0 } }
}
