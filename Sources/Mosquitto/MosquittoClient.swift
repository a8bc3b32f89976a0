import CMosquitto
import Logging

/// An MQTT client over libmosquitto whose operations complete on the broker's acknowledgement.
///
/// One client makes one connection: `connect()` once, then it reconnects by itself with a bounded back-off,
/// restoring every registered subscription each time, until `disconnect()`. A new broker address means a
/// new client. Received messages arrive on `messages`, connection changes on `events`.
///
/// ```swift
/// let client = MosquittoClient(configuration: .init(host: "localhost"), logger: logger)
/// try await client.connect()
/// try await client.subscribe("kitchen", qos: .atLeastOnce)
/// for await message in client.messages { print(message.topic, message.payloadString ?? "") }
/// ```
public final class MosquittoClient: Sendable {
    /// The configuration the client was made with.
    public let configuration: MosquittoConfiguration
    /// Every message the broker delivers, in arrival order. One consumer; ends when the client closes.
    public let messages: MQTTMessages
    /// Connection changes. One consumer; ends after `.closed`.
    public let events: ConnectionEvents

    let core: ClientCore

    /// Makes a client; nothing touches the network until `connect()`.
    /// - Parameters:
    ///   - configuration: where the broker is and how to talk to it.
    ///   - logger: receives libmosquitto's log lines and the client's own.
    public init(configuration: MosquittoConfiguration, logger: Logger) {
        let buffer = MessageBuffer(limit: configuration.messageBufferLimit)
        // Bounded, for a client whose events nobody reads: the newest (ending with `.closed`) are kept.
        let (eventStream, eventContinuation) = AsyncStream.makeStream(
            of: ConnectionEvent.self, bufferingPolicy: .bufferingNewest(256))
        self.configuration = configuration
        self.messages = MQTTMessages(buffer: buffer)
        self.events = ConnectionEvents(stream: eventStream)
        self.core = ClientCore(
            configuration: configuration,
            logger: logger,
            messages: buffer,
            events: eventContinuation
        )
    }

    deinit {
        core.requestStop()
    }

    /// Connects and waits for the broker's CONNACK.
    ///
    /// Throws if this first attempt fails (refused, unreachable, TLS, timeout) and leaves the client closed;
    /// once connected, later connection losses are repaired in the background.
    /// - Returns: whether the broker still held a session for this client id.
    @discardableResult
    public func connect() async throws(MosquittoError) -> Bool {
        try await core.connect()
    }

    /// Sends DISCONNECT (so the will is not published), stops the network thread and frees libmosquitto's
    /// handle. Operations still waiting fail with `.closed`. Waits at most `shutdownTimeout`.
    public func disconnect() async {
        await core.disconnect()
    }

    /// Subscribes to one topic filter and waits for the broker's SUBACK.
    ///
    /// The filter joins the client's subscription set, restored after every reconnect. Called while the
    /// client is reconnecting, it waits for the reconnect. A timeout does not undo the subscription.
    /// - Returns: the QoS the broker granted.
    @discardableResult
    public func subscribe(_ filter: String, qos: MQTTQoS = .atLeastOnce) async throws(MosquittoError) -> MQTTQoS {
        let granted = try await core.subscribe([filter], qos: qos)
        return granted[filter] ?? qos
    }

    /// Subscribes to many filters at once (batched SUBSCRIBE packets) and waits for every SUBACK.
    /// - Returns: the QoS the broker granted per filter.
    @discardableResult
    public func subscribe(_ filters: [String], qos: MQTTQoS = .atLeastOnce) async throws(MosquittoError)
        -> [String: MQTTQoS]
    {
        try await core.subscribe(filters, qos: qos)
    }

    /// Removes filters from the subscription set and waits for the broker's UNSUBACK.
    public func unsubscribe(_ filters: [String]) async throws(MosquittoError) {
        try await core.unsubscribe(filters)
    }

    /// Removes one filter from the subscription set and waits for the broker's UNSUBACK.
    public func unsubscribe(_ filter: String) async throws(MosquittoError) {
        try await core.unsubscribe([filter])
    }

    /// Publishes a message. QoS 1 and 2 complete on the broker's acknowledgement (and are queued and resent
    /// across a reconnect); QoS 0 completes once libmosquitto has written it, and fails while disconnected. Waits
    /// at most `timeout` (the configuration's `operationTimeout` when nil), enforced by the network thread.
    public func publish(
        topic: String,
        payload: [UInt8],
        qos: MQTTQoS = .atLeastOnce,
        retain: Bool = false,
        timeout: Duration? = nil
    ) async throws(MosquittoError) {
        try await core.publish(topic: topic, payload: payload, qos: qos, retain: retain, timeout: timeout)
    }

    /// Publishes without waiting: `answered` is told once, on the network thread, when the broker has the message
    /// (nil; for QoS 0, once it is written), when `timeout` passes first (the configuration's `operationTimeout`
    /// when nil), or when the client closes; at once, on the caller's thread, when it can't be queued. No task and no
    /// timer: hubd's `mqtt` backend starts its attempts so, from the pipeline's thread.
    public func publish(
        topic: String, payload: [UInt8], qos: MQTTQoS = .atLeastOnce, retain: Bool = false, timeout: Duration? = nil,
        answered: @escaping @Sendable (MosquittoError?) -> Void
    ) {
        do throws(MosquittoError) {
            _ = try core.startPublish(
                topic: topic, payload: payload, qos: qos, retain: retain, timeout: timeout, answered: answered)
        } catch {
            answered(error)
        }
    }

    /// Publishes a UTF-8 text payload.
    public func publish(
        topic: String,
        payload: String,
        qos: MQTTQoS = .atLeastOnce,
        retain: Bool = false,
        timeout: Duration? = nil
    ) async throws(MosquittoError) {
        try await core.publish(topic: topic, payload: Array(payload.utf8), qos: qos, retain: retain, timeout: timeout)
    }

    /// Whether the client is connected to the broker now.
    public var isConnected: Bool { core.state.withLock { $0.isConnected } }

    /// Whether the client was stopped (`disconnect()`, or its network thread died): it connects no more.
    public var isClosed: Bool {
        core.state.withLock { $0.phase == .closing || $0.phase == .closed }
    }

    /// How many QoS 1/2 messages the broker may have sent this client unacknowledged before it waits, when the
    /// client knows: the Receive Maximum while MQTT 5 is spoken (libmosquitto's 20 when none is configured), which
    /// Mosquitto takes in place of its `max_inflight_messages`. Nil in MQTT 3.1.1, where that setting of the broker's
    /// is all there is (20 by default; 1 where someone wanted strict order). A consumer that puts off confirmations
    /// confirms well before this many, and not at all when it is nil.
    public var receiveWindow: Int? {
        core.currentVersion == .v5 ? core.configuration.receiveMaximum ?? 20 : nil
    }

    /// Whether the client holds acknowledgements until `confirm(through:)` (`holdsAcknowledgements`).
    public var holdsAcknowledgements: Bool { core.configuration.holdsAcknowledgements }

    /// Says that every message up to `number` (`MQTTMessage.number`) is kept: with `holdsAcknowledgements`, the
    /// broker gets their acknowledgements now. Call it in order; a lower number than before changes nothing. Only
    /// QoS 1/2 messages need it (QoS 0 ones have no acknowledgement).
    public func confirm(through number: Int) {
        core.gate.confirm(through: number)
    }

    /// Takes the client's messages on its network thread, instead of iterating `messages`: `consumer` gets each
    /// burst the thread read, in arrival order, before the thread writes their acknowledgements. A consumer that
    /// keeps them at once and calls `confirm(through:)` before it returns lets them be acknowledged in the same pass,
    /// without waking the network thread again: no hand-off between threads at all. `consumer` must not wait for
    /// anything this client's network thread does (a publish's or a subscription's answer). Returns once the client
    /// has closed and `consumer` has had every message.
    ///
    /// **Confirming later.** `consumer` returns nil when it has confirmed the burst, or the instant by which it will
    /// have: a consumer that makes messages durable in shared batches (one `fsync` for everything that came within
    /// some milliseconds) keeps the burst and says when. The thread then reads on, handing over the bursts that
    /// come meanwhile, and writes nothing (the acknowledgements are queued in order with every other packet): it
    /// calls `due` on the network thread at the earliest instant named, when another thread queues a packet (a
    /// publish must not wait), or when the connection drops or the client stops, and `due` confirms. At most the
    /// confirmation timeout later, and well inside the keepalive: `due` should come within seconds.
    public func consumeOnNetworkThread(
        _ consumer: @escaping @Sendable ([MQTTMessage]) -> ContinuousClock.Instant?,
        due: @escaping @Sendable () -> Void = {}
    ) async {
        let core = self.core
        await core.messageBuffer.consumeOnNetworkThread({ consumer(Array($0)) }, due: due) { waiting in
            // Messages that arrived before: the thread hands them over, waiting for their confirmation (held ones)
            // or at its next pass.
            guard waiting else { return }
            core.gate.nudge()
            core.wake.signal()
        }
    }

    /// The subscription set: what the client restores after every reconnect.
    public var subscriptions: [String: MQTTQoS] { core.subscriptions }

    /// Counters since the client was made.
    public var statistics: MosquittoStatistics { core.statistics }

    /// Connects, runs `body`, and disconnects whether `body` returns or throws.
    public static func withConnection<Result: Sendable>(
        configuration: MosquittoConfiguration,
        logger: Logger,
        _ body: (MosquittoClient) async throws -> Result
    ) async throws -> Result {
        let client = MosquittoClient(configuration: configuration, logger: logger)
        do {
            try await client.connect()
            let result = try await body(client)
            await client.disconnect()
            return result
        } catch {
            await client.disconnect()
            throw error
        }
    }
}

/// What a client has counted since it was made.
public struct MosquittoStatistics: Sendable, Hashable {
    /// Messages received from the broker.
    public var received: UInt64
    /// Received messages dropped because the consumer fell more than `messageBufferLimit` behind.
    public var dropped: UInt64
    /// Successful reconnects after the first connection.
    public var reconnects: UInt64
}
