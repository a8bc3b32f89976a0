import CMosquitto
import Foundation
import HubSupport

// Publish, subscribe and unsubscribe: each queued to libmosquitto from the caller's thread, its answer awaited.
extension ClientCore {
    func publish(
        topic: String, payload: [UInt8], qos: MQTTQoS, retain: Bool, timeout: Duration? = nil
    ) async throws(MosquittoError) {
        let (completion, operation) = try startPublish(
            topic: topic, payload: payload, qos: qos, retain: retain, timeout: timeout, answered: nil)
        try await completion.value(operation: operation)
    }

    /// Queues a publish and returns its completion; `answered` is told once, on the network thread, when the broker
    /// answers (nil), the deadline passes or the client closes, unless this throws (then nothing was queued).
    func startPublish(
        topic: String, payload: [UInt8], qos: MQTTQoS, retain: Bool, timeout: Duration?,
        answered: (@Sendable (MosquittoError?) -> Void)?
    ) throws(MosquittoError) -> (Completion<Void>, operation: String) {
        let operation = "publish to '\(topic)'"
        if let problem = TopicRules.problemWithPublishTopic(topic) { throw .invalidTopic(problem) }
        guard payload.count <= 268_435_455 else {
            throw .library(operation, MOSQ_ERR_PAYLOAD_SIZE.rawValue)
        }
        let completion = Completion<Void>()
        // Before the packet wakes the network thread: the pass that writes it waits for this deadline too.
        let timeout = timeout ?? configuration.operationTimeout
        let deadline = deadlines.add(at: .now + timeout) { [weak completion] in
            completion?.expire(.timeout(operation: operation, after: timeout))
        }
        completion.observe { [deadlines] result in
            deadlines.remove(deadline)
            if case .failure(let error) = result { answered?(error) } else { answered?(nil) }
        }
        // Not queued (this throws): nothing will answer, so nothing expires.
        var queued = false
        defer { if !queued { deadlines.remove(deadline) } }
        var mid: Int32 = 0
        let rc = try withHandle(operation) { handle in
            payload.withUnsafeBytes { bytes in
                mosquitto_publish_v5(
                    handle.pointer, &mid, topic, Int32(bytes.count), bytes.baseAddress, qos.rawValue, retain, nil)
            }
        }
        // QoS 1 and 2 messages stay queued in libmosquitto while there is no connection and go out on reconnect.
        queued = rc == MOSQ_ERR_SUCCESS.rawValue || (rc == MOSQ_ERR_NO_CONN.rawValue && qos > .atMostOnce)
        guard queued else {
            if rc == MOSQ_ERR_NO_CONN.rawValue { throw .notConnected(operation: operation) }
            throw .library(operation, rc, errno: errno)
        }
        let entry = Inflight.publish(topic: topic, qos: qos, completion: completion)
        let effects = state.withLock { state -> [Effect] in
            guard state.phase != .closed else { return [.fail(completion, .closed(operation: operation))] }
            return state.record(entry, mid: mid)
        }
        perform(effects)
        return (completion, operation)
    }

    func subscribe(_ filters: [String], qos: MQTTQoS) async throws(MosquittoError) -> [String: MQTTQoS] {
        guard !filters.isEmpty else { return [:] }
        for filter in filters {
            if let problem = TopicRules.problemWithFilter(filter) { throw .invalidTopic(problem) }
        }
        let unique = Array(Set(filters))
        let operation = filters.count == 1 ? "subscribe to '\(filters[0])'" : "subscribe to \(filters.count) filters"
        let completion = Completion<[String: MQTTQoS]>()
        let (id, sends) = try register(operation, unique, kind: .subscribe(qos), completion: completion) { state in
            for filter in unique { state.subscriptions[filter] = qos }
        }
        for send in sends { transmit(send) }
        return try await wait(for: completion, waiter: id, operation: operation)
    }

    func unsubscribe(_ filters: [String]) async throws(MosquittoError) {
        guard !filters.isEmpty else { return }
        for filter in filters {
            if let problem = TopicRules.problemWithFilter(filter) { throw .invalidTopic(problem) }
        }
        let unique = Array(Set(filters))
        let operation =
            filters.count == 1 ? "unsubscribe from '\(filters[0])'" : "unsubscribe from \(filters.count) filters"
        let completion = Completion<[String: MQTTQoS]>()
        let (id, sends) = try register(operation, unique, kind: .unsubscribe, completion: completion) { state in
            for filter in unique { state.subscriptions.removeValue(forKey: filter) }
        }
        for send in sends { transmit(send) }
        _ = try await wait(for: completion, waiter: id, operation: operation)
    }

    /// Waits for a caller's (un)subscribe; a caller that stops waiting leaves no bookkeeping behind (the
    /// subscription set keeps the change, and a reconnect restores it).
    func wait(
        for completion: Completion<[String: MQTTQoS]>,
        waiter id: UInt64,
        operation: String
    ) async throws(MosquittoError) -> [String: MQTTQoS] {
        do {
            return try await completion.value(operation: operation, timeout: configuration.operationTimeout)
        } catch {
            state.withLock { _ = $0.waiters.removeValue(forKey: id) }
            throw error
        }
    }

    /// Records a caller's (un)subscribe: updates the set, and returns the waiter's id and the packets to send
    /// now, or queues them for the next connection when there is none.
    func register(
        _ operation: String,
        _ filters: [String],
        kind: PendingSend.Kind,
        completion: Completion<[String: MQTTQoS]>,
        update: (inout State) -> Void
    ) throws(MosquittoError) -> (UInt64, [PendingSend]) {
        try state.withLock { state throws(MosquittoError) -> (UInt64, [PendingSend]) in
            switch state.phase {
            case .idle: throw MosquittoError.notConnected(operation: operation)
            case .closing, .closed: throw MosquittoError.closed(operation: operation)
            case .connecting, .connected, .reconnecting: break
            }
            update(&state)
            let chunks = stride(from: 0, to: filters.count, by: Self.batchSize).map {
                Array(filters[$0..<min($0 + Self.batchSize, filters.count)])
            }
            let id = state.makeID()
            state.waiters[id] = Waiter(remaining: chunks.count, completion: completion)
            let sends = chunks.map { PendingSend(kind: kind, filters: $0, waiter: id, sequence: state.makeID()) }
            guard state.phase == .connected else {
                state.pendingSends += sends
                return (id, [])
            }
            return (id, sends)
        }
    }

    /// Sends one SUBSCRIBE/UNSUBSCRIBE from a caller's thread, coping with the connection changing meanwhile.
    func transmit(_ send: PendingSend) {
        while true {
            let generation = state.withLock { state -> UInt64? in
                guard state.phase == .connected else {
                    state.queue(send)
                    return nil
                }
                return state.generation
            }
            guard let generation else { return }
            let (rc, mid) = sendPacket(send)
            let (again, effects) = state.withLock { state -> (Bool, [Effect]) in
                switch rc {
                case MOSQ_ERR_SUCCESS.rawValue:
                    if state.generation == generation { return (false, state.record(send.inflight, mid: mid)) }
                    if let ack = state.early[mid], ack.kind == send.inflight.kind {
                        return (false, state.record(send.inflight, mid: mid))
                    }
                    // The connection changed after the packet was queued, so it may never have left: swallow a
                    // late acknowledgement and send it again (now, or on the next connection).
                    state.inflight[mid] = .absorb(send.inflight.kind)
                    return (true, [])
                case MOSQ_ERR_NO_CONN.rawValue:
                    // The socket is gone and a reconnect follows; the packet goes out then.
                    state.queue(send)
                    return (false, [])
                default:
                    return (false, state.fail(waiter: send.waiter, .library(send.operation, rc)))
                }
            }
            perform(effects)
            if !again { return }
        }
    }

    /// Calls `mosquitto_subscribe_multiple` or `mosquitto_unsubscribe_multiple`.
    func sendPacket(_ send: PendingSend) -> (rc: Int32, mid: Int32) {
        var mid: Int32 = 0
        let rc =
            (try? withHandle(send.operation) { handle -> Int32 in
                withCStrings(send.filters) { pointers in
                    switch send.kind {
                    case .subscribe(let qos):
                        return mosquitto_subscribe_multiple(
                            handle.pointer, &mid, Int32(send.filters.count), pointers, qos.rawValue, 0, nil)
                    case .unsubscribe:
                        return mosquitto_unsubscribe_multiple(
                            handle.pointer, &mid, Int32(send.filters.count), pointers, nil)
                    }
                }
            }) ?? MOSQ_ERR_NO_CONN.rawValue
        return (rc, mid)
    }

    /// Runs `body` with the handle, keeping the network thread from destroying it meanwhile.
    func withHandle<Result>(_ operation: String, _ body: (Handle) throws(MosquittoError) -> Result)
        throws(MosquittoError) -> Result
    {
        let handle = try state.withLock { state throws(MosquittoError) -> Handle in
            guard let handle = state.handle else {
                if state.phase == .idle { throw MosquittoError.notConnected(operation: operation) }
                throw MosquittoError.closed(operation: operation)
            }
            state.activeCalls += 1
            return handle
        }
        defer {
            state.withLock { $0.activeCalls -= 1 }
            // A packet may be queued now: the network thread's poll must write it (confirmations put off are due).
            gate.packetQueued.store(true, ordering: .relaxed)
            wake.signal()
        }
        return try body(handle)
    }
}
