import Dispatch

extension DispatchQueue {
    /// Runs blocking work (file writes with `fsync`, `flock`) on this queue and waits for it without holding one of
    /// Swift's cooperative threads, of which a 2-core machine has two: a store write that blocks one of them for
    /// 200 ms stalls the ingest and the notifications behind it.
    package func run<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            self.async { continuation.resume(returning: body()) }
        }
    }
}
