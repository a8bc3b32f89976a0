import CMosquitto
import Foundation
import HubSupport
import Logging
import Synchronization

/// The libmosquitto handle, shared between the network thread and callers.
///
/// libmosquitto documents publish/subscribe/unsubscribe/disconnect as safe to call from other threads once
/// `mosquitto_threaded_set` is on; `ClientCore.withHandle` keeps the handle alive while such a call runs.
struct Handle: @unchecked Sendable {
    let pointer: OpaquePointer
}

/// The state behind a `MosquittoClient`: the network thread, libmosquitto's callbacks and the bookkeeping that
/// ties each operation to the broker's acknowledgement.
///
/// Threading rules, from reading libmosquitto 2.0.11 (`lib/loop.c`, `lib/packet_mosq.c`, `lib/actions.c`):
/// - one thread of ours runs the loop (`loopPass`: `mosquitto_loop`'s calls); every callback runs on it, under libmosquitto's callback mutex;
/// - callbacks only copy data, update `state` under its lock and hand results to continuations: they never block
///   and never call libmosquitto (what a CONNACK sets off runs on the network thread after the pass);
/// - no libmosquitto function is ever called while `state`'s lock is held, so callbacks (which take that lock)
///   can't deadlock with callers (which take libmosquitto's internal locks);
/// - `mosquitto_destroy` runs on the network thread after its loop ended and no caller is inside libmosquitto.
///
/// Why not `mosquitto_loop_start`: its thread exits silently on TLS, AUTH, DNS and protocol errors and offers no
/// way to learn that it died, and its back-off sleep can't be cut short. Our loop around `mosquitto_loop` and
/// `mosquitto_reconnect_async` retries what retrying can fix, reports every failure, stops promptly, and
/// never blocks in a TCP connect, so stopping it is bounded.
final class ClientCore: Sendable {
    let configuration: MosquittoConfiguration
    let logger: Logger
    let state = Locked(State())
    let messageBuffer: MessageBuffer
    let eventContinuation: AsyncStream<ConnectionEvent>.Continuation
    let received = Atomic<UInt64>(0)
    /// The number of the last message handed to the consumer (`MQTTMessage.number`).
    let delivered = Atomic<Int>(0)
    /// The number of the last QoS 1/2 message handed to the consumer: what the network thread waits to be confirmed
    /// (a QoS 0 message has no acknowledgement to hold).
    let deliveredHeld = Atomic<Int>(0)
    /// Where the network thread waits for the consumer's confirmations (`holdsAcknowledgements`).
    let gate = AcknowledgementGate()
    /// When the publishes waiting for the broker give up, enforced by the network thread.
    let deadlines = Deadlines()
    /// Wakes the network thread's poll (`loopPass`) when another thread queues a packet or asks it to stop.
    let wake = WakeDescriptor()
    /// Set once the client is asked to stop; read by the network thread after every packet.
    let stopRequested = Atomic<Bool>(false)
    /// Set by a CONNACK that found no session at the broker; the next message received takes it
    /// (`MQTTMessage.sessionIsNew`).
    let sessionStartedAnew = Atomic<Bool>(false)
    /// Set by the CONNACK callback; the network thread then runs `connectionAccepted` outside the callback.
    let connackArrived = Atomic<Bool>(false)
    /// Whether libmosquitto's log callback should be on; the network thread applies changes between loops.
    let wantsLibraryLog = Atomic<Bool>(true)
    /// The broker's Server Keep Alive from the last CONNACK, in seconds (MQTT 5), which libmosquitto adopts in place
    /// of the configured keepalive (`idleWait` follows it); 0 when the broker set none.
    let serverKeepAlive = Atomic<Int>(0)
    let dropped = Atomic<UInt64>(0)
    /// Whether MQTT 5 is spoken: as configured, until a broker refuses it (`fallsBackToV311`).
    let speaksV5: Atomic<Bool>
    /// Wakes the network thread from its back-off wait when the client is asked to stop.
    let wakeup = DispatchSemaphore(value: 0)
    let exited = Completion<Void>()
    /// Restore batches carry at most this many filters (one SUBSCRIBE packet each).
    static let batchSize = 500

    init(
        configuration: MosquittoConfiguration,
        logger: Logger,
        messages: MessageBuffer,
        events: AsyncStream<ConnectionEvent>.Continuation
    ) {
        self.configuration = configuration
        self.speaksV5 = Atomic(configuration.protocolVersion == .v5)
        self.logger = logger
        self.messageBuffer = messages
        self.eventContinuation = events
        if wake.descriptor < 0 {
            // Out of descriptors: the network thread then sees a queued packet or a stop only when its poll times out.
            logger.error(
                "cannot make the MQTT network thread's wake pipe; packets and a stop wait for its poll to time out",
                metadata: ["error": "\(String(cString: strerror(wake.failure)))"])
        }
    }

    var subscriptions: [String: MQTTQoS] { state.withLock { $0.subscriptions } }

    var statistics: MosquittoStatistics {
        MosquittoStatistics(
            received: received.load(ordering: .relaxed),
            dropped: dropped.load(ordering: .relaxed),
            reconnects: state.withLock { $0.reconnects }
        )
    }

    var endpoint: String { "\(configuration.host):\(configuration.port)" }

    // MARK: - Connect and disconnect

    func connect() async throws(MosquittoError) -> Bool {
        try configuration.validate()
        let completion = Completion<Bool>()
        try state.withLock { state throws(MosquittoError) in
            switch state.phase {
            case .idle:
                state.phase = .connecting
                state.connectCompletion = completion
            case .closing, .closed:
                throw MosquittoError.invalidConfiguration(
                    "this client was disconnected; make a new MosquittoClient to connect again")
            case .connecting, .connected, .reconnecting:
                throw MosquittoError.invalidConfiguration("connect() was already called on this client")
            }
        }
        let handle: Handle
        do {
            handle = try makeHandle()
        } catch {
            finishWithoutThread(error)
            throw error
        }
        state.withLock { $0.handle = handle }
        let thread = Thread { [self] in
            Thread.current.name = networkThreadName
            runNetworkLoop(handle)
        }
        thread.start()
        do {
            return try await completion.value(
                operation: "connect to \(endpoint)",
                timeout: configuration.operationTimeout
            )
        } catch {
            // A failed first attempt leaves nothing running behind the caller's back.
            requestStop()
            throw error
        }
    }

    func disconnect() async {
        requestStop()
        do {
            try await exited.value(operation: "stop the MQTT network thread", timeout: configuration.shutdownTimeout)
        } catch {
            logger.warning(
                "the MQTT network thread did not stop in time; it will free its resources when it does",
                metadata: ["broker": "\(endpoint)", "error": "\(error)"]
            )
        }
    }

    /// Asks the network thread to disconnect and end. Returns at once; safe to call more than once.
    ///
    /// The network thread sends DISCONNECT itself: `mosquitto_disconnect` marks the client disconnected at once,
    /// and if the network thread then reads any packet before writing DISCONNECT, libmosquitto drops the socket
    /// instead (a protocol error in that state) and the broker publishes the will of a client that left cleanly.
    func requestStop() {
        let neverStarted = state.withLock { state -> Bool in
            switch state.phase {
            case .idle:
                state.phase = .closed
                return true
            case .closing, .closed:
                return false
            case .connecting, .connected, .reconnecting:
                state.phase = .closing
                return false
            }
        }
        if neverStarted {
            // There is no thread to end the streams.
            finishStreams(error: nil)
            exited.complete(.success(()))
            return
        }
        stopRequested.store(true, ordering: .releasing)
        gate.release()
        wake.signal()
        wakeup.signal()
    }

    /// Ends a client whose handle could not be made: nothing to stop, only streams to finish.
    private func finishWithoutThread(_ error: MosquittoError) {
        let completion = state.withLock { state in
            state.phase = .closed
            defer { state.connectCompletion = nil }
            return state.connectCompletion
        }
        completion?.complete(.failure(error))
        finishStreams(error: nil)
        exited.complete(.success(()))
    }

    func finishStreams(error: MosquittoError?) {
        messageBuffer.finish()
        eventContinuation.yield(.closed(error))
        eventContinuation.finish()
    }

    // MARK: - Effects: completions and events delivered outside the lock

    enum Effect {
        case finish(Completion<[String: MQTTQoS]>, Result<[String: MQTTQoS], MosquittoError>)
        case published(Completion<Void>)
        case fail(Completion<Void>, MosquittoError)
        case event(ConnectionEvent)
    }

    func perform(_ effects: [Effect]) {
        for effect in effects {
            switch effect {
            case .finish(let completion, let result): completion.complete(result)
            case .published(let completion): completion.complete(.success(()))
            case .fail(let completion, let error): completion.complete(.failure(error))
            case .event(let event): eventContinuation.yield(event)
            }
        }
    }
}
