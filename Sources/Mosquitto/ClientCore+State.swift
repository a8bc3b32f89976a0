import HubSupport

// The client's bookkeeping as values: the phases, what an outstanding message id stands for, the callers waiting on
// (un)subscribes, and the state the lock guards with the transitions that turn acknowledgements into effects. The
// class in ClientCore.swift does the I/O and calls these under its lock.
extension ClientCore {
    enum Phase {
        case idle, connecting, connected, reconnecting, closing, closed
    }

    /// Which packet an acknowledgement answers.
    enum PacketKind {
        case publish, subscribe, unsubscribe
    }

    /// A broker acknowledgement, as libmosquitto reported it.
    enum Ack {
        case published(reasonCode: Int32)
        case subscribed(granted: [Int32])
        case unsubscribed

        var kind: PacketKind {
            switch self {
            case .published: .publish
            case .subscribed: .subscribe
            case .unsubscribed: .unsubscribe
            }
        }
    }

    /// What an outstanding message id stands for.
    enum Inflight {
        case publish(topic: String, qos: MQTTQoS, completion: Completion<Void>)
        /// `waiter` is nil for the batches that restore subscriptions after a reconnect.
        case subscribe(filters: [String], qos: MQTTQoS, waiter: UInt64?, sequence: UInt64)
        case unsubscribe(filters: [String], waiter: UInt64?, sequence: UInt64)
        /// A packet sent again because its connection changed under it: a late acknowledgement is swallowed.
        case absorb(PacketKind)

        var kind: PacketKind {
            switch self {
            case .publish: .publish
            case .subscribe: .subscribe
            case .unsubscribe: .unsubscribe
            case .absorb(let kind): kind
            }
        }
    }

    /// A SUBSCRIBE or UNSUBSCRIBE waiting for a connection.
    struct PendingSend {
        enum Kind { case subscribe(MQTTQoS), unsubscribe }
        var kind: Kind
        var filters: [String]
        var waiter: UInt64
        var sequence: UInt64
    }

    /// A caller's subscribe or unsubscribe, possibly spread over several packets.
    struct Waiter {
        var remaining: Int
        var granted: [String: MQTTQoS] = [:]
        var refused: [String] = []
        let completion: Completion<[String: MQTTQoS]>
    }

    /// Progress of the subscriptions sent again after a reconnect.
    struct Restore {
        var remainingBatches: Int
        var count: Int
        var refused: [String] = []
    }

    struct State {
        var phase: Phase = .idle
        var handle: Handle?
        /// Callers currently inside a libmosquitto call with `handle`.
        var activeCalls = 0
        /// Bumped on every connect and disconnect: an id sent under another generation may have been lost.
        var generation: UInt64 = 0
        var everConnected = false
        /// True from the accepted CONNACK until the connection ends (unlike `phase`, also while closing).
        var isConnected = false
        var connectCompletion: Completion<Bool>?
        var subscriptions: [String: MQTTQoS] = [:]
        var inflight: [Int32: Inflight] = [:]
        /// Acknowledgements that arrived before the caller had recorded the message id (microseconds later).
        var early: [Int32: Ack] = [:]
        var waiters: [UInt64: Waiter] = [:]
        var pendingSends: [PendingSend] = []
        var nextID: UInt64 = 0
        var restore: Restore?
        /// Why the last connection or connection attempt ended, recorded by the callbacks for the network thread.
        var lastFailureReason: String?
        var lastFailureWasConnected = false
        var lastRefusal: MosquittoError?
        /// libmosquitto's error log lines since the last failure was reported (the last few).
        var loggedErrors: [String] = []
        var reconnects: UInt64 = 0
        /// A CONNACK that accepted the connection, with its session-present flag, not yet acted upon.
        var acceptedConnack: Bool?
        /// Failed attempts since the last successful connection; drives the back-off.
        var reconnectAttempt = 0
        var lastDropLog: ContinuousClock.Instant?
        var unconfirmedLog = LogThrottle()
        var droppedSinceLog: UInt64 = 0

        mutating func makeID() -> UInt64 {
            nextID &+= 1
            return nextID
        }
    }
}

extension ClientCore.PendingSend {
    var inflight: ClientCore.Inflight {
        switch kind {
        case .subscribe(let qos): .subscribe(filters: filters, qos: qos, waiter: waiter, sequence: sequence)
        case .unsubscribe: .unsubscribe(filters: filters, waiter: waiter, sequence: sequence)
        }
    }

    var operation: String {
        switch kind {
        case .subscribe: "subscribe to \(filters.count == 1 ? "'\(filters[0])'" : "\(filters.count) filters")"
        case .unsubscribe: "unsubscribe from \(filters.count == 1 ? "'\(filters[0])'" : "\(filters.count) filters")"
        }
    }
}

extension ClientCore.State {
    typealias Effect = ClientCore.Effect

    /// Records what message id `mid` stands for, or settles it at once when its acknowledgement came first.
    mutating func record(_ entry: ClientCore.Inflight, mid: Int32) -> [Effect] {
        // An acknowledgement of another kind is a stale one for an earlier use of this id: it is dropped.
        if let ack = early.removeValue(forKey: mid), ack.kind == entry.kind {
            return apply(ack, to: entry)
        }
        inflight[mid] = entry
        return []
    }

    /// Keeps an (un)subscribe for the next connection, or fails it when there will be none.
    mutating func queue(_ send: ClientCore.PendingSend) {
        guard phase != .closed else { return }
        pendingSends.append(send)
    }

    /// Applies an acknowledgement to what it acknowledges.
    mutating func apply(_ ack: ClientCore.Ack, to entry: ClientCore.Inflight) -> [Effect] {
        switch (entry, ack) {
        case (.publish(let topic, _, let completion), .published(let code)):
            if code >= 0x80 {
                let reason = LibMosquitto.reasonString(code)
                return [.fail(completion, .publishRejected(topic: topic, code: code, reason: reason))]
            }
            return [.published(completion)]
        case (.subscribe(let filters, _, let waiter, _), .subscribed(let granted)):
            var accepted: [String: MQTTQoS] = [:]
            var refused: [String] = []
            for (index, filter) in filters.enumerated() {
                let code = index < granted.count ? granted[index] : 0x80
                if code >= 0x80 {
                    refused.append(filter)
                    subscriptions.removeValue(forKey: filter)
                } else {
                    accepted[filter] = MQTTQoS(rawValue: code) ?? .atMostOnce
                }
            }
            guard let waiter else { return restoreBatchDone(refused: refused) }
            return progress(waiter: waiter, granted: accepted, refused: refused)
        case (.unsubscribe(_, let waiter, _), .unsubscribed):
            guard let waiter else { return [] }
            return progress(waiter: waiter, granted: [:], refused: [])
        default:
            // `.absorb`, or kinds that don't match (callers check them first).
            return []
        }
    }

    mutating func progress(waiter id: UInt64, granted: [String: MQTTQoS], refused: [String]) -> [Effect] {
        guard var waiter = waiters[id] else { return [] }
        waiter.remaining -= 1
        waiter.granted.merge(granted) { $1 }
        waiter.refused += refused
        guard waiter.remaining <= 0 else {
            waiters[id] = waiter
            return []
        }
        waiters.removeValue(forKey: id)
        if !waiter.refused.isEmpty {
            return [.finish(waiter.completion, .failure(.subscriptionRefused(filters: waiter.refused.sorted())))]
        }
        return [.finish(waiter.completion, .success(waiter.granted))]
    }

    mutating func fail(waiter id: UInt64, _ error: MosquittoError) -> [Effect] {
        guard let waiter = waiters.removeValue(forKey: id) else { return [] }
        return [.finish(waiter.completion, .failure(error))]
    }

    mutating func restoreBatchDone(refused: [String]) -> [Effect] {
        guard var progress = restore else { return [] }
        progress.remainingBatches -= 1
        progress.refused += refused
        restore = progress
        guard progress.remainingBatches <= 0 else { return [] }
        restore = nil
        return [.event(.subscriptionsRestored(count: progress.count, refused: progress.refused.sorted()))]
    }
}
