import Foundation
import HubCore
import ServiceLifecycle
import UnixSignals

/// Answers `hubctl`'s requests to write what hubd holds before it reads the files (`WriteRequest`: SIGUSR1): the
/// statuses for the registry, the alert book's files, the rows for the history, each after the journal has handed
/// over everything it took. The answer names this process once the signal is trapped, so `hubctl` never signals a
/// hubd that would die of it (an older one, or one still starting).
final class WriteRequestAnswerer: Service, Sendable {
    private let directory: String
    private let journal: Journal
    private let writes: [@Sendable () async -> Void]

    /// `writes`: each writer's "write what you hold now", in order.
    init(directory: String, journal: Journal, writes: [@Sendable () async -> Void]) {
        self.directory = directory
        self.journal = journal
        self.writes = writes
        WriteRequest.forget(in: directory)
    }

    func run() async {
        let signals = await UnixSignalsSequence(trapping: .sigusr1)
        await cancelWhenGracefulShutdown {
            var answered = 0
            WriteRequest.answer(in: self.directory, pid: getpid(), count: answered)
            for await _ in signals {
                await self.journal.flushed()
                for write in self.writes { await write() }
                answered += 1
                WriteRequest.answer(in: self.directory, pid: getpid(), count: answered)
            }
        }
    }
}
