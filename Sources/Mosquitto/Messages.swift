/// A message received from the broker; topic and payload were copied out of libmosquitto's buffers.
public struct MQTTMessage: Sendable, Hashable {
    public var topic: String
    public var payload: [UInt8]
    public var qos: MQTTQoS
    /// True when the broker sent a stored retained message (typically right after subscribing).
    public var retain: Bool
    /// Counts the messages a client received, from 1: what `MosquittoClient.confirm(through:)` takes.
    public var number: Int
    /// The broker's packet id for a QoS 1/2 message (0 for QoS 0): a message the broker sends again to the session
    /// (it had no acknowledgement) comes with the same one, to whichever connection holds the session then.
    public var packetID: Int
    /// The first message since the client connected to a session the broker had just made (CONNACK's session
    /// present flag clear: the first connection of a clean or forgotten session, a broker restarted without
    /// persistence): packet ids start again, so those recorded for an earlier session mean nothing now.
    public var sessionIsNew: Bool

    public init(
        topic: String, payload: [UInt8], qos: MQTTQoS, retain: Bool, number: Int = 0, packetID: Int = 0,
        sessionIsNew: Bool = false
    ) {
        self.sessionIsNew = sessionIsNew
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retain = retain
        self.number = number
        self.packetID = packetID
    }

    /// The payload as text when it is valid UTF-8.
    public var payloadString: String? { String(validating: payload, as: UTF8.self) }
}

/// A change in the client's connection, in the order it happened.
public enum ConnectionEvent: Sendable, Hashable {
    /// The broker accepted the connection (the first one or a reconnect).
    case connected(sessionPresent: Bool)
    /// After a reconnect, every registered subscription was sent again and the broker answered.
    /// `refused` lists filters the broker no longer allows; they were dropped from the client's set.
    case subscriptionsRestored(count: Int, refused: [String])
    /// The connection dropped unexpectedly; the client reconnects by itself.
    case disconnected(MosquittoError)
    /// A reconnect attempt failed; the next one comes after `retryIn`.
    case reconnectFailed(MosquittoError, retryIn: Duration)
    /// The client stopped for good: `nil` after `disconnect()`, the error when the network thread died of one.
    case closed(MosquittoError?)
}

/// The connection changes of a client, as an `AsyncSequence`. It has one consumer and ends after `.closed`.
public struct ConnectionEvents: AsyncSequence, Sendable {
    public typealias Element = ConnectionEvent
    let stream: AsyncStream<ConnectionEvent>

    public func makeAsyncIterator() -> AsyncStream<ConnectionEvent>.Iterator { stream.makeAsyncIterator() }
}
