import DequeModule
import HubSupport
import Synchronization

/// The hand-off of received messages from the network thread to the one consumer of `MQTTMessages`.
///
/// Built for bursts. The network thread appends under a short lock; the consumer takes everything pending in
/// one swap and then iterates without any lock. Waking a waiting consumer costs more than receiving a message,
/// so the network thread wakes it once per burst: `push` only marks the wake as due, and the network thread
/// calls `flush` when the socket has nothing more to read (or `wakeBatch` messages are waiting).
/// (`AsyncStream`, taking its lock and waking per element, cost a third of the receive rate.)
final class MessageBuffer: Sendable {
    private struct State {
        var pending = Deque<MQTTMessage>()
        var waiter: CheckedContinuation<Deque<MQTTMessage>?, Never>?
        var finished = false
        /// The consumer that takes each batch on the network thread (`consumeOnNetworkThread`), and what waits for
        /// the end.
        var direct: Direct?
        /// When that consumer is to be told its confirmations are due: the earliest it named and has not been told.
        var confirmationsDue: ContinuousClock.Instant?
    }

    private struct Direct {
        let consumer: @Sendable (Deque<MQTTMessage>) -> ContinuousClock.Instant?
        /// Told that the confirmations it put off are due.
        let due: @Sendable () -> Void
        let end: CheckedContinuation<Void, Never>
    }

    private let state = Locked(State())
    private let limit: Int
    /// Set when a message waits for a consumer that is asleep.
    let wakeDue = Atomic<Bool>(false)
    /// A burst longer than this wakes the consumer without waiting for its end.
    static let wakeBatch = 64

    init(limit: Int) {
        self.limit = max(1, limit)
    }

    private typealias HandOff = (CheckedContinuation<Deque<MQTTMessage>?, Never>, Deque<MQTTMessage>)

    /// Adds a message; returns false when the buffer was full and the oldest message was dropped for it.
    @discardableResult
    func push(_ message: MQTTMessage) -> Bool {
        var kept = true
        let handOff = state.withLock { state -> HandOff? in
            guard !state.finished else { return nil }
            if state.pending.count >= limit {
                state.pending.removeFirst()
                kept = false
            }
            state.pending.append(message)
            // A consumer on the network thread takes the burst where the thread flushes, outside libmosquitto's
            // callback.
            if state.direct != nil { wakeDue.store(true, ordering: .relaxed) }
            guard state.waiter != nil else { return nil }
            guard state.pending.count >= Self.wakeBatch else {
                wakeDue.store(true, ordering: .relaxed)
                return nil
            }
            return Self.handOff(&state)
        }
        if let (waiter, batch) = handOff { waiter.resume(returning: batch) }
        return kept
    }

    /// Wakes a waiting consumer with what is pending; on the network thread, a consumer there takes it now (and may
    /// put off confirming it: `confirmationsDue`).
    func flush() {
        var direct: (@Sendable (Deque<MQTTMessage>) -> ContinuousClock.Instant?)?
        var batch = Deque<MQTTMessage>()
        let handOff = state.withLock { state -> HandOff? in
            guard !state.pending.isEmpty else { return nil }
            if let consumer = state.direct?.consumer {
                direct = consumer
                swap(&batch, &state.pending)
                return nil
            }
            guard state.waiter != nil else { return nil }
            return Self.handOff(&state)
        }
        if let (waiter, batch) = handOff { waiter.resume(returning: batch) }
        guard let due = direct?(batch) else { return }
        state.withLock { state in state.confirmationsDue = min(state.confirmationsDue ?? due, due) }
    }

    /// When the consumer on the network thread is to confirm what it put off, at the latest; nil when nothing is put
    /// off.
    var confirmationsDue: ContinuousClock.Instant? { state.withLock { $0.confirmationsDue } }

    /// Tells the consumer on the network thread that what it put off confirming is due now (a deadline it named has
    /// come, or the thread has something else to write, or stops).
    func confirmationsAreDue() {
        let due = state.withLock { state -> (@Sendable () -> Void)? in
            guard state.confirmationsDue != nil else { return nil }
            state.confirmationsDue = nil
            return state.direct?.due
        }
        due?()
    }

    /// Hands every batch to `consumer` on the network thread, from now until the client closes; returns then.
    /// `consumer` returns when, at the latest, it will have confirmed the batch (nil: it has); `due` is called then
    /// if it has not. `registered` is told, once `consumer` is in place, whether messages wait already (the network
    /// thread is to be woken for them).
    func consumeOnNetworkThread(
        _ consumer: @escaping @Sendable (Deque<MQTTMessage>) -> ContinuousClock.Instant?,
        due: @escaping @Sendable () -> Void, registered: @Sendable (Bool) -> Void
    ) async {
        await withCheckedContinuation { (end: CheckedContinuation<Void, Never>) in
            let waiting = state.withLock { state -> Bool? in
                guard !state.finished else { return nil }
                precondition(
                    state.waiter == nil && state.direct == nil, "MQTTMessages has one consumer; it is being taken twice"
                )
                state.direct = Direct(consumer: consumer, due: due, end: end)
                if !state.pending.isEmpty { wakeDue.store(true, ordering: .relaxed) }
                return !state.pending.isEmpty
            }
            guard let waiting else { return end.resume() }
            registered(waiting)
        }
    }

    private static func handOff(_ state: inout State) -> HandOff {
        let waiter = state.waiter!
        state.waiter = nil
        defer { state.pending = [] }
        return (waiter, state.pending)
    }

    /// No more messages: the consumer gets what is pending, is told that what it put off confirming is due, then
    /// gets the end.
    func finish() {
        var direct: Direct?
        var batch = Deque<MQTTMessage>()
        let handOff = state.withLock {
            state -> (CheckedContinuation<Deque<MQTTMessage>?, Never>, Deque<MQTTMessage>?)? in
            state.finished = true
            if let consumer = state.direct {
                direct = consumer
                swap(&batch, &state.pending)
                state.direct = nil
                state.confirmationsDue = nil
                return nil
            }
            guard let waiter = state.waiter else { return nil }
            state.waiter = nil
            defer { state.pending = [] }
            return (waiter, state.pending.isEmpty ? nil : state.pending)
        }
        if let (waiter, batch) = handOff { waiter.resume(returning: batch) }
        if let direct {
            if !batch.isEmpty { _ = direct.consumer(batch) }
            direct.due()
            direct.end.resume()
        }
    }

    /// Everything pending, waiting for at least one message; `nil` at the end or when the task is cancelled.
    func take() async -> Deque<MQTTMessage>? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Deque<MQTTMessage>?, Never>) in
                let ready = state.withLock { state -> Deque<MQTTMessage>?? in
                    if !state.pending.isEmpty {
                        defer { state.pending = [] }
                        return .some(state.pending)
                    }
                    if state.finished || Task.isCancelled { return .some(nil) }
                    precondition(
                        state.waiter == nil && state.direct == nil,
                        "MQTTMessages has one consumer; it is being iterated twice")
                    state.waiter = continuation
                    wakeDue.store(false, ordering: .relaxed)
                    return .none
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            let waiter = state.withLock { state in
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume(returning: nil)
        }
    }
}

/// The messages a client receives, as an `AsyncSequence`. It has one consumer and ends when the client closes.
public struct MQTTMessages: AsyncSequence, Sendable {
    public typealias Element = MQTTMessage
    let buffer: MessageBuffer

    public func makeAsyncIterator() -> Iterator { Iterator(buffer: buffer) }

    public struct Iterator: AsyncIteratorProtocol {
        let buffer: MessageBuffer
        var batch = Deque<MQTTMessage>()

        public mutating func next() async -> MQTTMessage? {
            if let message = batch.popFirst() { return message }
            guard let taken = await buffer.take() else { return nil }
            batch = taken
            return batch.popFirst()
        }

        /// Every message received and not taken yet, waiting for at least one; `nil` at the end. For a consumer that
        /// makes messages durable in batches (a cluster's group commit).
        public mutating func nextBatch() async -> [MQTTMessage]? {
            if !batch.isEmpty {
                defer { batch = [] }
                return Array(batch)
            }
            return await buffer.take().map(Array.init)
        }
    }
}
