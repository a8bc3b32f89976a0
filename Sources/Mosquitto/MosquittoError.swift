import CMosquitto
import Foundation

/// What went wrong talking to the broker, in libmosquitto's own words where it has them.
public enum MosquittoError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The configuration can't work; the text names the setting and the problem.
    case invalidConfiguration(String)
    /// A libmosquitto call failed: its `MOSQ_ERR_*` code and `mosquitto_strerror` text, with any detail it logged.
    case library(operation: String, code: Int32, message: String)
    /// The broker refused the connection (CONNACK): its code and libmosquitto's text for it.
    case connectionRefused(code: Int32, reason: String)
    /// A connection attempt failed before the broker answered (unreachable, DNS, TLS); the reason in
    /// libmosquitto's or the system's words.
    case connectFailed(endpoint: String, reason: String)
    /// The connection dropped; the reason in libmosquitto's words.
    case connectionLost(reason: String)
    /// The broker did not acknowledge in time. The operation may still complete later.
    case timeout(operation: String, after: Duration)
    /// The operation needs a connection and the client has none (not connected yet, or QoS 0 while reconnecting).
    case notConnected(operation: String)
    /// The client was disconnected or failed before the operation completed.
    case closed(operation: String)
    /// The broker refused these subscriptions (SUBACK 0x80 or an MQTT 5 reason code).
    case subscriptionRefused(filters: [String])
    /// The broker rejected a QoS 1/2 publish (MQTT 5 reason code in PUBACK).
    case publishRejected(topic: String, code: Int32, reason: String)
    /// A topic or topic filter breaks the MQTT rules.
    case invalidTopic(String)
    /// The calling task was cancelled while it waited.
    case cancelled(operation: String)

    /// A publish the broker refused for a reason the same publish would meet again: not authorised (MQTT 5 reason
    /// code 0x87), topic name invalid (0x90), payload format invalid (0x99). Its other refusals (quota exceeded,
    /// packet id in use, unspecified) may pass on a later attempt.
    public var isPublishRefusedForGood: Bool {
        guard case .publishRejected(_, let code, _) = self else { return false }
        return code == 0x87 || code == 0x90 || code == 0x99
    }

    public var description: String {
        switch self {
        case .invalidConfiguration(let message):
            return "invalid MQTT configuration: \(message)"
        case .library(let operation, let code, let message):
            return "\(operation) failed: \(message) (libmosquitto error \(code))"
        case .connectionRefused(let code, let reason):
            return "the broker refused the connection: \(reason) (code \(code))"
        case .connectFailed(let endpoint, let reason):
            return "cannot connect to the broker at \(endpoint): \(reason)"
        case .connectionLost(let reason):
            return "connection to the broker lost: \(reason)"
        case .timeout(let operation, let after):
            return "\(operation): no answer from the broker within \(after.formattedSeconds)"
        case .notConnected(let operation):
            return "\(operation): not connected to the broker"
        case .closed(let operation):
            return "\(operation): the client was disconnected before the broker answered"
        case .subscriptionRefused(let filters):
            return "the broker refused the subscription to \(filters.map { "'\($0)'" }.joined(separator: ", "))"
                + " (check the broker's ACL for this user)"
        case .publishRejected(let topic, let code, let reason):
            return "the broker rejected the message to '\(topic)': \(reason) (reason code \(code))"
        case .invalidTopic(let message):
            return "invalid topic: \(message)"
        case .cancelled(let operation):
            return "\(operation): cancelled"
        }
    }

    /// Builds a `.library` error from a `MOSQ_ERR_*` code, reading `errno` for `MOSQ_ERR_ERRNO`.
    static func library(_ operation: String, _ code: Int32, errno savedErrno: Int32 = 0, detail: String? = nil)
        -> MosquittoError
    {
        var message = LibMosquitto.errorString(code)
        if code == MOSQ_ERR_ERRNO.rawValue, savedErrno != 0 {
            message = String(cString: strerror(savedErrno))
        }
        if let detail, !detail.isEmpty { message += " — \(detail)" }
        return .library(operation: operation, code: code, message: message)
    }
}

extension Duration {
    var formattedSeconds: String {
        let (seconds, attoseconds) = components
        let value = Double(seconds) + Double(attoseconds) / 1e18
        return value == value.rounded() ? "\(Int64(value)) s" : String(format: "%.3g s", value)
    }
}
