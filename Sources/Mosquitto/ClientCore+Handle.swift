import CMosquitto
import Foundation
import Logging

// The libmosquitto handle made and configured (every setting it refuses named), and the C callbacks it calls,
// which recover the client from their userdata and hand over to the handlers in NetworkLoop.swift.
extension ClientCore {
    // MARK: - Making the handle

    /// Creates and configures the libmosquitto handle; every setting that libmosquitto rejects is named.
    func makeHandle() throws(MosquittoError) -> Handle {
        LibMosquitto.ensureInitialised()
        let userdata = Unmanaged.passUnretained(self).toOpaque()
        guard let pointer = mosquitto_new(configuration.clientID, configuration.cleanSession, userdata) else {
            let reason = errno == ENOMEM ? "out of memory" : "invalid client id or session setting"
            throw .invalidConfiguration("libmosquitto could not create a client: \(reason)")
        }
        do {
            try configure(pointer)
        } catch {
            mosquitto_destroy(pointer)
            throw error
        }
        return Handle(pointer: pointer)
    }

    private func configure(_ m: OpaquePointer) throws(MosquittoError) {
        func check(_ rc: Int32, _ what: String) throws(MosquittoError) {
            guard rc == MOSQ_ERR_SUCCESS.rawValue else {
                throw .invalidConfiguration("\(what): \(LibMosquitto.errorString(rc))")
            }
        }
        try check(mosquitto_threaded_set(m, true), "threaded mode")
        try configureVersion(m, check: check)
        // Status messages are small; Nagle's algorithm would only add latency.
        try check(mosquitto_int_option(m, MOSQ_OPT_TCP_NODELAY, 1), "TCP_NODELAY")
        if let credentials = configuration.credentials {
            try check(
                mosquitto_username_pw_set(m, credentials.username, credentials.password), "user name and password")
        }
        if let will = configuration.will {
            let rc = will.payload.withUnsafeBytes { bytes in
                mosquitto_will_set(m, will.topic, Int32(bytes.count), bytes.baseAddress, will.qos.rawValue, will.retain)
            }
            try check(rc, "last will on '\(will.topic)'")
        }
        if let tls = configuration.tls {
            try configureTLS(m, tls, check: check)
        }
        mosquitto_connect_v5_callback_set(m, onConnect)
        mosquitto_disconnect_v5_callback_set(m, onDisconnect)
        mosquitto_publish_v5_callback_set(m, onPublish)
        mosquitto_subscribe_v5_callback_set(m, onSubscribe)
        mosquitto_unsubscribe_v5_callback_set(m, onUnsubscribe)
        mosquitto_message_v5_callback_set(m, onMessage)
        mosquitto_log_callback_set(m, onLog)
    }

    private func configureTLS(
        _ m: OpaquePointer,
        _ tls: TLSConfiguration,
        check: (Int32, String) throws(MosquittoError) -> Void
    ) throws(MosquittoError) {
        var caFile: String?
        var caDirectory: String?
        switch tls.trustRoots {
        case .system:
            try check(mosquitto_int_option(m, MOSQ_OPT_TLS_USE_OS_CERTS, 1), "TLS with the system's CAs")
        case .caFile(let path): caFile = path
        case .caDirectory(let path): caDirectory = path
        }
        if caFile != nil || caDirectory != nil || tls.clientCertificate != nil {
            try check(
                mosquitto_tls_set(
                    m, caFile, caDirectory, tls.clientCertificate?.certificateFile,
                    tls.clientCertificate?.privateKeyFile, nil),
                "TLS certificates (CA \(caFile ?? caDirectory ?? "system"))"
            )
        }
        // SSL_VERIFY_PEER (1): the broker's certificate must chain to a trusted CA.
        try check(mosquitto_tls_opts_set(m, 1, tls.version?.rawValue, nil), "TLS options")
        try check(mosquitto_tls_insecure_set(m, !tls.verifyHostname), "TLS host name verification")
    }
}

extension ClientCore {
    /// Turns libmosquitto's log callback on or off.
    func setLibraryLogging(_ m: OpaquePointer, _ on: Bool) { mosquitto_log_callback_set(m, on ? onLog : nil) }

    // MARK: - What the callbacks hand over besides connecting (on the network thread, under libmosquitto's
    // callback mutex: never block here)

    func handleAck(mid: Int32, _ ack: Ack) {
        let effects = state.withLock { state -> [Effect] in
            guard let entry = state.inflight.removeValue(forKey: mid), entry.kind == ack.kind else {
                // The caller has not recorded the id yet (it will within microseconds); an entry of another kind
                // was a stale one for an earlier use of the id. The bound only guards against a bookkeeping bug.
                if state.early.count >= 1024 { state.early.removeAll() }
                state.early[mid] = ack
                return []
            }
            return state.apply(ack, to: entry)
        }
        perform(effects)
    }

    func handleMessage(_ message: UnsafePointer<mosquitto_message>) {
        let message = message.pointee
        let topic = String(cString: message.topic)
        let payload: [UInt8]
        if message.payloadlen > 0, let bytes = message.payload {
            payload = Array(UnsafeRawBufferPointer(start: bytes, count: Int(message.payloadlen)))
        } else {
            payload = []
        }
        received.add(1, ordering: .relaxed)
        let number = delivered.add(1, ordering: .relaxed).newValue
        if message.qos > 0 { deliveredHeld.store(number, ordering: .relaxed) }
        // A load first: the exchange (a write) only once per new session.
        let sessionIsNew =
            sessionStartedAnew.load(ordering: .relaxed)
            && sessionStartedAnew.exchange(false, ordering: .acquiringAndReleasing)
        let kept = messageBuffer.push(
            MQTTMessage(
                topic: topic, payload: payload, qos: MQTTQoS(rawValue: message.qos) ?? .atMostOnce,
                retain: message.retain, number: number, packetID: Int(message.mid), sessionIsNew: sessionIsNew))
        if !kept { noteDrop() }
    }

    /// Counts a message dropped for a slow consumer, and logs it at most every ten seconds.
    private func noteDrop() {
        dropped.add(1, ordering: .relaxed)
        let report = state.withLock { state -> UInt64? in
            state.droppedSinceLog += 1
            let now = ContinuousClock.now
            if let last = state.lastDropLog, now - last < .seconds(10) { return nil }
            state.lastDropLog = now
            defer { state.droppedSinceLog = 0 }
            return state.droppedSinceLog
        }
        if let report {
            logger.error(
                "the message consumer is too slow: dropped the oldest received messages",
                metadata: [
                    "dropped": "\(report)", "dropped_total": "\(dropped.load(ordering: .relaxed))",
                    "buffer_limit": "\(configuration.messageBufferLimit)",
                ])
        }
    }

    func handleLog(level: Int32, text: String) {
        let logLevel: Logger.Level
        switch level {
        case MOSQ_LOG_ERR:
            logLevel = .error
            state.withLock { state in
                state.loggedErrors.append(text)
                if state.loggedErrors.count > 4 { state.loggedErrors.removeFirst() }
            }
        case MOSQ_LOG_WARNING: logLevel = .warning
        case MOSQ_LOG_NOTICE, MOSQ_LOG_INFO: logLevel = .debug
        default: logLevel = .trace
        }
        logger.log(level: logLevel, "libmosquitto: \(text)")
    }
}

// MARK: - C callbacks: recover the core from userdata and hand over

private func core(_ userdata: UnsafeMutableRawPointer?) -> ClientCore {
    Unmanaged<ClientCore>.fromOpaque(userdata!).takeUnretainedValue()
}

private let onConnect: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, Int32, Int32, OpaquePointer?) -> Void =
    {
        _, userdata, rc, flags, properties in
        // MQTT 5: a broker may set the keepalive (Server Keep Alive); libmosquitto then keeps to it.
        var keepAlive: UInt16 = 0
        let told =
            properties != nil
            && mosquitto_property_read_int16(
                properties, Int32(MQTT_PROP_SERVER_KEEP_ALIVE.rawValue), &keepAlive, false) != nil
        core(userdata).handleConnect(rc: rc, flags: flags, serverKeepAlive: told ? Int(keepAlive) : nil)
    }

private let onDisconnect: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, Int32, OpaquePointer?) -> Void = {
    _, userdata, rc, _ in
    let savedErrno = errno
    core(userdata).handleDisconnect(rc: rc, errno: savedErrno)
}

private let onPublish: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, Int32, Int32, OpaquePointer?) -> Void =
    {
        _, userdata, mid, reasonCode, _ in
        core(userdata).handleAck(mid: mid, .published(reasonCode: reasonCode))
    }

private let onSubscribe:
    @convention(c) (
        OpaquePointer?, UnsafeMutableRawPointer?, Int32, Int32, UnsafePointer<Int32>?, OpaquePointer?
    ) -> Void = { _, userdata, mid, count, granted, _ in
        let codes = granted.map { Array(UnsafeBufferPointer(start: $0, count: Int(count))) } ?? []
        core(userdata).handleAck(mid: mid, .subscribed(granted: codes))
    }

private let onUnsubscribe: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, Int32, OpaquePointer?) -> Void =
    { _, userdata, mid, _ in
        core(userdata).handleAck(mid: mid, .unsubscribed)
    }

private let onMessage:
    @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, UnsafePointer<mosquitto_message>?, OpaquePointer?) ->
        Void = { _, userdata, message, _ in
            guard let message else { return }
            core(userdata).handleMessage(message)
        }

private let onLog: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, Int32, UnsafePointer<CChar>?) -> Void = {
    _, userdata, level, text in
    guard let text else { return }
    core(userdata).handleLog(level: level, text: String(cString: text))
}
