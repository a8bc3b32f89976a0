import HubSupport

/// An attempt on the remote that took longer than it may.
public struct RemoteTimeout: Error, CustomStringConvertible {
    public let limit: Duration
    public var description: String { "no answer from the remote database within \(limit)" }
}

/// Runs `body` and returns its result, or throws `RemoteTimeout` after `limit` (or `CancellationError` when the
/// calling task is cancelled) without waiting for it any longer; a result that comes after that goes to `late` (a
/// connection made too late is closed there).
///
/// Not structured concurrency on purpose: PostgresNIO 1.33's `query` on a connection the server has just closed
/// waits on a promise nothing fulfils (the write fails on the closed channel with no promise attached) and ignores
/// cancellation, so a task group would wait for it forever. Here the caller moves on (and drops the connection); the
/// stuck task is cancelled and, at worst, stays parked. `PostgresRemote.send` checks `isClosed` first, so this is
/// only the backstop for a close that races the check, for a server that stops answering without closing, and for a
/// shutdown that must not wait for either.
func bounded<T: Sendable>(
    _ limit: Duration, late: @escaping @Sendable (T) async -> Void = { _ in },
    _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    let waiter = Locked<CheckedContinuation<T, any Error>?>(nil)
    let tasks = Locked<[Task<Void, Never>]>([])
    let take: @Sendable () -> CheckedContinuation<T, any Error>? = {
        waiter.withLock { continuation in
            defer { continuation = nil }
            return continuation
        }
    }
    /// Resumes the caller with `result` unless it was resumed already; returns whether it was this one.
    @discardableResult
    @Sendable func finish(_ result: Result<T, any Error>) -> Bool {
        guard let continuation = take() else { return false }
        continuation.resume(with: result)
        for task in tasks.withLock({ $0 }) { task.cancel() }
        return true
    }
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { continuation in
            waiter.withLock { $0 = continuation }
            guard !Task.isCancelled else {
                finish(.failure(CancellationError()))
                return
            }
            let work = Task {
                do {
                    let value = try await body()
                    if !finish(.success(value)) { await late(value) }
                } catch {
                    finish(.failure(error))
                }
            }
            let timer = Task {
                try? await Task.sleep(for: limit)
                if !Task.isCancelled { finish(.failure(RemoteTimeout(limit: limit))) }
            }
            tasks.withLock { $0 = [work, timer] }
        }
    } onCancel: {
        finish(.failure(CancellationError()))
    }
}
