/// A result delivered once, by whoever comes first: the network thread with the broker's acknowledgement,
/// a timer, the caller's cancellation, or shutdown.
final class Completion<Value: Sendable>: Sendable {
    private struct State {
        var result: Result<Value, MosquittoError>?
        var continuation: CheckedContinuation<Result<Value, MosquittoError>, Never>?
    }

    private let state = Locked(State())

    /// Delivers `result` unless another one came first; returns whether this one won.
    @discardableResult
    func complete(_ result: Result<Value, MosquittoError>) -> Bool {
        let (won, continuation) = state.withLock { state in
            guard state.result == nil else {
                return (false, CheckedContinuation<Result<Value, MosquittoError>, Never>?.none)
            }
            state.result = result
            defer { state.continuation = nil }
            return (true, state.continuation)
        }
        continuation?.resume(returning: result)
        return won
    }

    /// Waits for the result, at most `timeout`; a timeout or cancellation completes it with an error.
    func value(operation: String, timeout: Duration) async throws(MosquittoError) -> Value {
        let timer = Task { [weak self] in
            try? await Task.sleep(for: timeout)
            guard !Task.isCancelled else { return }
            self?.complete(.failure(.timeout(operation: operation, after: timeout)))
        }
        defer { timer.cancel() }
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<Value, MosquittoError>, Never>) in
                let ready = state.withLock { state -> Result<Value, MosquittoError>? in
                    if let result = state.result { return result }
                    state.continuation = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            complete(.failure(.cancelled(operation: operation)))
        }
        return try result.get()
    }
}
