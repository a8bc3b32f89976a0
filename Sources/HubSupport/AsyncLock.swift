/// One holder at a time, in order of arrival, waiting without blocking a thread: for a resource async callers take
/// turns on (a database connection, on which two transactions must not interleave).
package final class AsyncLock: Sendable {
    private let state = Locked<(held: Bool, waiting: [CheckedContinuation<Void, Never>])>((false, []))

    package init() {}

    /// Runs `body` holding the lock.
    package func withLock<T>(_ body: () async throws -> T) async rethrows -> T {
        await acquire()
        defer { release() }
        return try await body()
    }

    private func acquire() async {
        await withCheckedContinuation { continuation in
            let now = state.withLock { state -> Bool in
                guard state.held else {
                    state.held = true
                    return true
                }
                state.waiting.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    private func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.waiting.isEmpty else {
                state.held = false
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.resume()
    }
}
