import CMosquitto
import Foundation
import Logging

extension ClientCore {
    // MARK: - The network thread

    /// The network thread's name, set from inside it (a name given before `start` never reached it, and it kept its
    /// creator's, so neither `top -H` nor a profile could tell it apart), in the 15 bytes Linux takes.
    var networkThreadName: String {
        var name = "mqtt \(configuration.host)"
        while name.utf8.count > 15 { name.removeLast() }
        return name
    }

    /// Runs `loopPass` until the client stops; reconnects with back-off; destroys the handle at the end.
    func runNetworkLoop(_ handle: Handle) {
        let m = handle.pointer
        let keepAlive = Int32(configuration.keepAlive.components.seconds)
        var fatal: MosquittoError?
        var rc = mosquitto_connect_bind_async(m, configuration.host, Int32(configuration.port), keepAlive, nil)
        if rc != MOSQ_ERR_SUCCESS.rawValue {
            failFirstConnect(takeFailure(rc: rc, errno: errno).error)
            return shutDown(handle, fatal: nil)
        }
        var libraryLogging = true
        while true {
            rc = loopPass(m)
            let savedErrno = errno
            deadlines.expire()
            if connackArrived.load(ordering: .acquiring) { connectionAccepted() }
            // Wake the consumer at the end of a burst, not for every message of it.
            if messageBuffer.wakeDue.load(ordering: .relaxed) && !hasUnreadBytes(m) {
                messageBuffer.wakeDue.store(false, ordering: .relaxed)
                messageBuffer.flush()
            }
            let wanted = wantsLibraryLog.load(ordering: .relaxed)
            if wanted != libraryLogging {
                setLibraryLogging(m, wanted)
                libraryLogging = wanted
            }
            if stopRequested.load(ordering: .acquiring) {
                // Closed without a word when acknowledgements of messages not confirmed are queued: DISCONNECT would
                // write them out first (`mosquitto_destroy` closes the socket with them unsent).
                if !(configuration.leavesUnconfirmedOnStop && hasUnconfirmedMessages) { sendDisconnect(m) }
                break
            }
            // The common case, once per received packet.
            if rc == MOSQ_ERR_SUCCESS.rawValue { continue }
            // What the consumer put off confirming is due before any wait: the acknowledgements are lost with the
            // connection (the broker sends those messages again), not what they stood for.
            messageBuffer.confirmationsAreDue()
            if Self.isFatal(rc) {
                fatal = .library("the MQTT network loop", rc, errno: savedErrno)
                logger.error("MQTT network loop stopped", metadata: ["broker": "\(endpoint)", "error": "\(fatal!)"])
                break
            }
            if state.withLock({ $0.isConnected }) {
                // The poll itself failed with the socket still open: libmosquitto reported no disconnection.
                handleDisconnect(rc: rc, errno: savedErrno)
            }
            let failure = takeFailure(rc: rc, errno: savedErrno)
            if fallsBackToV311(after: failure.error, rc: rc, m) {
                reconnect(m)
                continue
            }
            if !state.withLock({ $0.everConnected }) {
                failFirstConnect(failure.error)
                break
            }
            let attempt = state.withLock { state in
                state.reconnectAttempt += 1
                return state.reconnectAttempt
            }
            let delay = backoff(attempt: attempt)
            if failure.wasConnected {
                logger.warning(
                    "connection to the MQTT broker lost",
                    metadata: ["broker": "\(endpoint)", "error": "\(failure.error)"])
                eventContinuation.yield(.disconnected(failure.error))
            } else {
                logger.warning(
                    "reconnect to the MQTT broker failed",
                    metadata: [
                        "broker": "\(endpoint)", "error": "\(failure.error)", "retry_in": "\(delay.formattedSeconds)",
                    ])
                eventContinuation.yield(.reconnectFailed(failure.error, retryIn: delay))
            }
            waitOut(delay)
            if stopRequested.load(ordering: .acquiring) { break }
            reconnect(m)
        }
        shutDown(handle, fatal: fatal)
    }

    /// Sends DISCONNECT, so the broker discards the will, and writes it out without reading anything first.
    ///
    /// `mosquitto_disconnect` marks the client disconnected; from then on libmosquitto treats any packet it reads
    /// as a protocol error and closes the socket, DISCONNECT unsent. So only `mosquitto_loop_write` runs here, for
    /// one second at most, until libmosquitto closes the socket after writing DISCONNECT.
    private func sendDisconnect(_ m: OpaquePointer) {
        guard state.withLock({ $0.isConnected }) else { return }
        guard mosquitto_disconnect(m) == MOSQ_ERR_SUCCESS.rawValue else { return }
        let deadline = ContinuousClock.now + .seconds(1)
        while ContinuousClock.now < deadline {
            let fd = mosquitto_socket(m)
            guard fd >= 0 else { return }
            var writable = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            guard poll(&writable, 1, 100) >= 0 || errno == EINTR else { return }
            guard mosquitto_loop_write(m, 1) == MOSQ_ERR_SUCCESS.rawValue else { return }
        }
        logger.warning("DISCONNECT could not be sent within a second", metadata: ["broker": "\(endpoint)"])
    }

    /// Whether the broker's socket holds bytes libmosquitto has not read yet (so more messages are coming now).
    func hasUnreadBytes(_ m: OpaquePointer) -> Bool {
        let fd = mosquitto_socket(m)
        guard fd >= 0 else { return false }
        var count: Int32 = 0
        return ioctl(fd, UInt(FIONREAD), &count) == 0 && count > 0
    }

    /// Errors retrying can't fix. libmosquitto's own loop also gives up on TLS, AUTH, DNS and protocol errors;
    /// we retry those with back-off, because a DNS hiccup or a renewed certificate must not end a year-long agent.
    static func isFatal(_ rc: Int32) -> Bool {
        rc == MOSQ_ERR_NOMEM.rawValue || rc == MOSQ_ERR_INVAL.rawValue || rc == MOSQ_ERR_NOT_SUPPORTED.rawValue
    }

    /// The reason the connection or the attempt ended, as recorded by the callbacks, or from `rc`.
    private func takeFailure(rc: Int32, errno: Int32) -> (error: MosquittoError, wasConnected: Bool) {
        state.withLock { state in
            defer {
                state.lastFailureReason = nil
                state.lastRefusal = nil
                state.lastFailureWasConnected = false
                state.loggedErrors = []
            }
            if let refusal = state.lastRefusal { return (refusal, false) }
            var reason = state.lastFailureReason ?? reasonText(rc: rc, errno: errno)
            // libmosquitto says only "A TLS error occurred."; OpenSSL's own words went to the log callback.
            if rc == MOSQ_ERR_TLS.rawValue || reason == LibMosquitto.errorString(MOSQ_ERR_TLS.rawValue),
                !state.loggedErrors.isEmpty
            {
                reason += " (\(state.loggedErrors.joined(separator: "; ")))"
            }
            if state.lastFailureWasConnected { return (.connectionLost(reason: reason), true) }
            return (.connectFailed(endpoint: endpoint, reason: reason), false)
        }
    }

    /// libmosquitto's words for `rc`: the system's for `MOSQ_ERR_ERRNO`, the broker's for an MQTT 5 reason code.
    func reasonText(rc: Int32, errno savedErrno: Int32) -> String {
        if currentVersion == .v5 && rc >= 0x80 {
            return "the broker disconnected: \(LibMosquitto.reasonString(rc))"
        }
        if rc == MOSQ_ERR_ERRNO.rawValue && savedErrno != 0 {
            return String(cString: strerror(savedErrno))
        }
        return LibMosquitto.errorString(rc)
    }

    private func failFirstConnect(_ error: MosquittoError) {
        let completion = state.withLock { state in
            defer { state.connectCompletion = nil }
            return state.connectCompletion
        }
        logger.debug("MQTT connect failed", metadata: ["broker": "\(endpoint)", "error": "\(error)"])
        completion?.complete(.failure(error))
    }

    /// Retires the handle once no caller is inside libmosquitto, fails what still waits, and ends the streams.
    private func shutDown(_ handle: Handle, fatal: MosquittoError?) {
        let (effects, connectCompletion) = state.withLock { state -> ([Effect], Completion<Bool>?) in
            state.phase = .closed
            state.handle = nil
            var effects: [Effect] = []
            for (_, entry) in state.inflight {
                if case .publish(let topic, _, let completion) = entry {
                    effects.append(.fail(completion, fatal ?? .closed(operation: "publish to '\(topic)'")))
                }
            }
            for (_, waiter) in state.waiters {
                effects.append(.finish(waiter.completion, .failure(fatal ?? .closed(operation: "subscription change"))))
            }
            state.inflight = [:]
            state.waiters = [:]
            state.pendingSends = []
            state.early = [:]
            defer { state.connectCompletion = nil }
            return (effects, state.connectCompletion)
        }
        while state.withLock({ $0.activeCalls }) > 0 { usleep(100) }
        mosquitto_destroy(handle.pointer)
        connectCompletion?.complete(.failure(fatal ?? .closed(operation: "connect to \(endpoint)")))
        perform(effects)
        finishStreams(error: fatal)
        exited.complete(.success(()))
    }

    // MARK: - Callbacks (on the network thread, under libmosquitto's callback mutex: never block here)

    func handleConnect(rc: Int32, flags: Int32, serverKeepAlive: Int?) {
        guard rc == 0 else {
            let refusal = MosquittoError.connectionRefused(
                code: rc, reason: LibMosquitto.connackString(rc, protocolVersion: currentVersion))
            state.withLock { $0.lastRefusal = refusal }
            return
        }
        // The rest (restoring subscriptions, completing connect()) happens on the network thread once
        // the pass returns, in `connectionAccepted`: callbacks call nothing back in libmosquitto.
        state.withLock { $0.acceptedConnack = flags & 1 == 1 }
        self.serverKeepAlive.store(serverKeepAlive ?? 0, ordering: .relaxed)
        // Before any message of this connection (callbacks run in the order the packets came).
        if flags & 1 == 0 { sessionStartedAnew.store(true, ordering: .releasing) }
        connackArrived.store(true, ordering: .releasing)
    }

    /// Runs after a CONNACK that accepted the connection: sends the subscription set again and what callers
    /// asked for meanwhile, then marks the client connected, completes `connect()` and reports `.connected`.
    ///
    /// The phase turns `.connected` only after those packets are queued: until then callers' (un)subscribes are
    /// queued behind them, so a restore can't overtake a caller's later change.
    func connectionAccepted() {
        connackArrived.store(false, ordering: .relaxed)
        // Nil when the connection dropped again within the same loop pass; the failure path handles that.
        guard
            let sessionPresent = state.withLock({ state in
                defer { state.acceptedConnack = nil }
                return state.acceptedConnack
            })
        else { return }
        let plan = state.withLock { state -> ConnectPlan in
            let isReconnect = state.everConnected
            state.everConnected = true
            state.isConnected = true
            state.reconnectAttempt = 0
            state.generation &+= 1
            if isReconnect { state.reconnects += 1 }
            // A caller that stopped waiting left its subscribe behind; the restore covers those filters.
            let pending = state.pendingSends.sorted { $0.sequence < $1.sequence }.filter { send in
                if case .subscribe = send.kind { return state.waiters[send.waiter] != nil }
                return true
            }
            state.pendingSends = []
            // Filters a caller is waiting on go out in the caller's own packets; the rest in restore batches.
            let waitedOn = Set(pending.flatMap { $0.filters })
            var byQoS: [MQTTQoS: [String]] = [:]
            for (filter, qos) in state.subscriptions where !waitedOn.contains(filter) {
                byQoS[qos, default: []].append(filter)
            }
            var batches: [(MQTTQoS, [String])] = []
            for (qos, filters) in byQoS.sorted(by: { $0.key < $1.key }) {
                for start in stride(from: 0, to: filters.count, by: Self.batchSize) {
                    batches.append((qos, Array(filters[start..<min(start + Self.batchSize, filters.count)])))
                }
            }
            if isReconnect {
                state.restore = Restore(remainingBatches: batches.count, count: batches.reduce(0) { $0 + $1.1.count })
            }
            return ConnectPlan(isReconnect: isReconnect, pending: pending, batches: batches)
        }
        // Acknowledgements can't overtake the bookkeeping: they are handled on this thread, in a later loop pass.
        var restoreFailures: [Int32] = []
        for (qos, filters) in plan.batches {
            let (rc, mid) = sendPacket(PendingSend(kind: .subscribe(qos), filters: filters, waiter: 0, sequence: 0))
            let effects = state.withLock { state -> [Effect] in
                guard rc == MOSQ_ERR_SUCCESS.rawValue else { return state.restoreBatchDone(refused: filters) }
                state.inflight[mid] = .subscribe(filters: filters, qos: qos, waiter: nil, sequence: 0)
                return []
            }
            if rc != MOSQ_ERR_SUCCESS.rawValue { restoreFailures.append(rc) }
            perform(effects)
        }
        if let rc = restoreFailures.first {
            logger.error(
                "could not restore every subscription",
                metadata: ["failed_batches": "\(restoreFailures.count)", "error": "\(LibMosquitto.errorString(rc))"])
        }
        var pending = plan.pending
        var connectCompletion: Completion<Bool>?
        sending: while true {
            for send in pending {
                let (rc, mid) = sendPacket(send)
                perform(
                    state.withLock { state -> [Effect] in
                        guard rc == MOSQ_ERR_SUCCESS.rawValue else {
                            return state.fail(waiter: send.waiter, .library(send.operation, rc))
                        }
                        return state.record(send.inflight, mid: mid)
                    })
            }
            // Callers that queued while we sent go next; the phase turns `.connected` once none is left.
            let more = state.withLock { state -> [PendingSend]? in
                guard state.pendingSends.isEmpty else {
                    defer { state.pendingSends = [] }
                    return state.pendingSends.sorted { $0.sequence < $1.sequence }
                }
                if state.phase != .closing && state.phase != .closed { state.phase = .connected }
                connectCompletion = state.connectCompletion
                state.connectCompletion = nil
                return nil
            }
            guard let more else { break sending }
            pending = more
        }
        // libmosquitto formats a log line for every packet; connected, only a debugging logger wants them.
        wantsLibraryLog.store(logger.logLevel <= .debug, ordering: .relaxed)
        connectCompletion?.complete(.success(sessionPresent))
        logger.info(
            plan.isReconnect ? "reconnected to the MQTT broker" : "connected to the MQTT broker",
            metadata: ["broker": "\(endpoint)", "session_present": "\(sessionPresent)"])
        eventContinuation.yield(.connected(sessionPresent: sessionPresent))
        if plan.isReconnect && plan.batches.isEmpty {
            state.withLock { $0.restore = nil }
            eventContinuation.yield(.subscriptionsRestored(count: 0, refused: []))
        }
    }

    struct ConnectPlan {
        var isReconnect: Bool
        var pending: [PendingSend]
        var batches: [(MQTTQoS, [String])]
    }

    func handleDisconnect(rc: Int32, errno savedErrno: Int32) {
        // Reconnect attempts need OpenSSL's words for a TLS failure, which only the log callback hears.
        wantsLibraryLog.store(true, ordering: .relaxed)
        let effects = state.withLock { state -> [Effect] in
            state.acceptedConnack = nil
            state.generation &+= 1
            let wasConnected = state.isConnected
            state.isConnected = false
            if state.phase == .closing || state.phase == .closed { return [] }
            if state.phase == .connected { state.phase = .reconnecting }
            state.lastFailureWasConnected = wasConnected
            let reason = reasonText(rc: rc, errno: savedErrno)
            state.lastFailureReason = reason
            // SUBSCRIBE/UNSUBSCRIBE packets of the lost connection are gone: callers' ones go out again on the
            // next connection; restore batches are rebuilt from the subscription set then.
            var effects: [Effect] = []
            for (mid, entry) in state.inflight {
                switch entry {
                case .subscribe(let filters, let qos, let waiter?, let sequence):
                    state.pendingSends.append(
                        PendingSend(kind: .subscribe(qos), filters: filters, waiter: waiter, sequence: sequence))
                    state.inflight.removeValue(forKey: mid)
                case .unsubscribe(let filters, let waiter?, let sequence):
                    state.pendingSends.append(
                        PendingSend(kind: .unsubscribe, filters: filters, waiter: waiter, sequence: sequence))
                    state.inflight.removeValue(forKey: mid)
                case .subscribe, .unsubscribe, .absorb:
                    state.inflight.removeValue(forKey: mid)
                case .publish(_, let qos, let completion) where qos == .atMostOnce:
                    // libmosquitto drops unsent QoS 0 packets on reconnect; QoS 1/2 ones it resends.
                    effects.append(.fail(completion, .connectionLost(reason: reason)))
                    state.inflight.removeValue(forKey: mid)
                case .publish:
                    break
                }
            }
            state.restore = nil
            return effects
        }
        perform(effects)
    }
}

extension Duration {
    var timeInterval: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
