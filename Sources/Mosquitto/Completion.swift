import Foundation
import HubSupport

/// A result delivered once (the broker's acknowledgement, a failure, shutdown), awaited by any number of waiters,
/// each with its own deadline.
///
/// A waiter that times out or is cancelled stops waiting; the operation itself is not settled by that, because
/// the broker may still answer (a timed-out QoS 1 publish can still arrive).
final class Completion<Value: Sendable>: Sendable {
    typealias Waiter = CheckedContinuation<Result<Value, MosquittoError>, Never>

    private struct State {
        var result: Result<Value, MosquittoError>?
        var waiters: [UUID: Waiter] = [:]
        /// Set when its deadline passed (`expire`): every wait ends with it, the result stays open.
        var expired: MosquittoError?
        /// Told once: the result, or the error `expire` ended the waits with.
        var observer: (@Sendable (Result<Value, MosquittoError>) -> Void)?
    }

    private let state = Locked(State())

    /// Delivers `result` unless another one came first; returns whether this one won.
    @discardableResult
    func complete(_ result: Result<Value, MosquittoError>) -> Bool {
        let told = state.withLock { state -> ([Waiter], (@Sendable (Result<Value, MosquittoError>) -> Void)?)? in
            guard state.result == nil else { return nil }
            state.result = result
            defer { (state.waiters, state.observer) = ([:], nil) }
            return (Array(state.waiters.values), state.observer)
        }
        guard let (waiters, observer) = told else { return false }
        for waiter in waiters { waiter.resume(returning: result) }
        observer?(result)
        return true
    }

    /// Tells `observer` the result once, on the thread that delivers it (or the error `expire` gives), at once when
    /// either came already. One observer.
    func observe(_ observer: @escaping @Sendable (Result<Value, MosquittoError>) -> Void) {
        let known = state.withLock { state -> Result<Value, MosquittoError>? in
            if let result = state.result { return result }
            if let expired = state.expired { return .failure(expired) }
            state.observer = observer
            return nil
        }
        if let known { observer(known) }
    }

    /// Waits for the result, at most `timeout`.
    func value(operation: String, timeout: Duration) async throws(MosquittoError) -> Value {
        let id = UUID()
        let timer = Task { [weak self] in
            try? await Task.sleep(for: timeout)
            guard !Task.isCancelled else { return }
            self?.stopWaiting(id, with: .timeout(operation: operation, after: timeout))
        }
        defer { timer.cancel() }
        return try await value(operation: operation, id: id)
    }

    /// Ends every wait, now and later, with `error`, leaving the result open: the operation's deadline passed
    /// (`Deadlines`), and the broker may still answer it (a timed-out QoS 1 publish can still arrive).
    func expire(_ error: MosquittoError) {
        let (waiters, observer) = state.withLock {
            state -> ([Waiter], (@Sendable (Result<Value, MosquittoError>) -> Void)?) in
            guard state.result == nil else { return ([], nil) }
            state.expired = error
            defer { (state.waiters, state.observer) = ([:], nil) }
            return (Array(state.waiters.values), state.observer)
        }
        for waiter in waiters { waiter.resume(returning: .failure(error)) }
        observer?(.failure(error))
    }

    /// Waits for the result, or until `expire`.
    func value(operation: String, id: UUID = UUID()) async throws(MosquittoError) -> Value {
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (waiter: Waiter) in
                let ready = state.withLock { state -> Result<Value, MosquittoError>? in
                    if let result = state.result { return result }
                    if let expired = state.expired { return .failure(expired) }
                    // Cancelled before the wait began: the cancellation handler found no waiter to end.
                    if Task.isCancelled { return .failure(.cancelled(operation: operation)) }
                    state.waiters[id] = waiter
                    return nil
                }
                if let ready { waiter.resume(returning: ready) }
            }
        } onCancel: {
            stopWaiting(id, with: .cancelled(operation: operation))
        }
        return try result.get()
    }

    /// Ends one waiter's wait with `error`, leaving the result open for the others.
    private func stopWaiting(_ id: UUID, with error: MosquittoError) {
        state.withLock { $0.waiters.removeValue(forKey: id) }?.resume(returning: .failure(error))
    }
}
