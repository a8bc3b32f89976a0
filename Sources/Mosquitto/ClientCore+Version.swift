import CMosquitto
import Logging

// The protocol version spoken, MQTT 5's CONNECT properties, and the fall-back to MQTT 3.1.1.
extension ClientCore {
    /// Sets the protocol version and, for MQTT 5, the Receive Maximum and the session's expiry.
    func configureVersion(_ m: OpaquePointer, check: (Int32, String) throws(MosquittoError) -> Void)
        throws(MosquittoError)
    {
        let v5 = configuration.protocolVersion == .v5
        try check(
            mosquitto_int_option(m, MOSQ_OPT_PROTOCOL_VERSION, v5 ? MQTT_PROTOCOL_V5 : MQTT_PROTOCOL_V311),
            "protocol version")
        guard v5 else { return }
        if let receiveMaximum = configuration.receiveMaximum {
            try check(mosquitto_int_option(m, MOSQ_OPT_RECEIVE_MAXIMUM, Int32(receiveMaximum)), "receive maximum")
        }
        // MQTT 5 ends a session at the disconnect unless the CONNECT says otherwise; 3.1.1 keeps it.
        if !configuration.cleanSession {
            try check(setConnectProperties(m, sessionExpiry: UInt32.max), "session expiry interval")
        }
    }

    /// Makes every CONNECT of this handle carry a Session Expiry Interval (or no property at all, `nil`).
    ///
    /// libmosquitto 2.0 takes CONNECT properties only in `mosquitto_connect_bind_v5`, which connects blocking (a TCP
    /// connect to an unreachable host would hold the network thread for minutes). That function keeps a copy of
    /// the properties, for this and every later CONNECT, before it looks at the address: given port -1 it returns
    /// `MOSQ_ERR_INVAL` having connected nothing, and `mosquitto_connect_bind_async` and
    /// `mosquitto_reconnect_async` then send the properties kept (`lib/connect.c`, 2.0.11 to 2.0.20).
    /// `MQTT5Tests.aKeptSessionOutlivesTheDisconnect` fails if a libmosquitto ever stops keeping them.
    private func setConnectProperties(_ m: OpaquePointer, sessionExpiry: UInt32?) -> Int32 {
        var properties: OpaquePointer?
        defer { mosquitto_property_free_all(&properties) }
        if let sessionExpiry {
            let rc = mosquitto_property_add_int32(
                &properties, Int32(MQTT_PROP_SESSION_EXPIRY_INTERVAL.rawValue), sessionExpiry)
            if rc != MOSQ_ERR_SUCCESS.rawValue { return rc }
        }
        if let properties {
            // What `mosquitto_connect_bind_v5` would refuse with the same MOSQ_ERR_INVAL as the port.
            let rc = mosquitto_property_check_all(Int32(CMD_CONNECT), properties)
            if rc != MOSQ_ERR_SUCCESS.rawValue { return rc }
        }
        let rc = mosquitto_connect_bind_v5(m, "", -1, 60, nil, properties)
        return rc == MOSQ_ERR_INVAL.rawValue ? MOSQ_ERR_SUCCESS.rawValue : rc
    }

    /// After a refusal of MQTT 5 by a broker that speaks only 3.1.1: switches the handle to 3.1.1 when the
    /// configuration allows it, and says so; true when the caller should connect again at once.
    ///
    /// Such a broker answers an MQTT 5 CONNECT with a 3.1.1 CONNACK (return code 1) and closes. libmosquitto 2.0.11
    /// reports that as the reason code "unsupported protocol version"; from 2.0.12 its stricter packet reader
    /// calls the same CONNACK malformed (`MOSQ_ERR_MALFORMED_PACKET`), so that too counts before the client has
    /// ever connected. A broker that just closes the connection is not taken for one: that is what a restarting
    /// broker does.
    func fallsBackToV311(after error: MosquittoError, rc: Int32, _ m: OpaquePointer) -> Bool {
        guard configuration.fallsBackToV311, speaksV5.load(ordering: .relaxed) else { return false }
        let refused: Bool
        if case .connectionRefused(let code, _) = error {
            refused = code == Int32(MQTT_RC_UNSUPPORTED_PROTOCOL_VERSION.rawValue)
        } else {
            refused =
                (rc == MOSQ_ERR_MALFORMED_PACKET.rawValue || rc == MOSQ_ERR_PROTOCOL.rawValue)
                && !state.withLock { $0.everConnected }
        }
        guard refused else { return false }
        // MQTT 3.1.1 CONNECTs carry no properties: libmosquitto refuses to send one while any are kept.
        guard setConnectProperties(m, sessionExpiry: nil) == MOSQ_ERR_SUCCESS.rawValue,
            mosquitto_int_option(m, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V311) == MOSQ_ERR_SUCCESS.rawValue
        else { return false }
        speaksV5.store(false, ordering: .relaxed)
        logger.warning(
            "the MQTT broker does not speak MQTT 5; speaking MQTT 3.1.1 to it",
            metadata: [
                "broker": "\(endpoint)",
                "consequence": "the broker's max_inflight_messages (20 by default) bounds the messages in flight",
            ])
        return true
    }

    /// The version spoken now, which reason codes are read by.
    var currentVersion: MQTTProtocolVersion { speaksV5.load(ordering: .relaxed) ? .v5 : .v311 }
}
