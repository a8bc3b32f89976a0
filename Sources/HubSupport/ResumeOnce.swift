/// A continuation resumed exactly once, by whichever comes first: the work it waits for, or cancellation.
package final class ResumeOnce: Sendable {
    private let state = Locked<(continuation: CheckedContinuation<Void, Never>?, resumed: Bool)>((nil, false))

    package init() {}

    package func set(_ continuation: CheckedContinuation<Void, Never>) {
        let resumeNow = state.withLock { state -> Bool in
            if state.resumed { return true }
            state.continuation = continuation
            return false
        }
        if resumeNow { continuation.resume() }
    }

    package func resume() {
        let continuation = state.withLock { state -> CheckedContinuation<Void, Never>? in
            defer { state = (nil, true) }
            return state.continuation
        }
        continuation?.resume()
    }
}
