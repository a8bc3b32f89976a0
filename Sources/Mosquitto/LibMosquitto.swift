import CMosquitto
import Foundation

/// Process-wide facts about libmosquitto.
public enum LibMosquitto {
    /// `mosquitto_lib_init` is not thread-safe; a global `let` runs it exactly once.
    private static let initialised: Void = {
        _ = mosquitto_lib_init()
    }()

    static func ensureInitialised() { _ = initialised }

    /// The linked library's version, for example "2.0.11".
    public static var version: String {
        var major: Int32 = 0
        var minor: Int32 = 0
        var revision: Int32 = 0
        _ = mosquitto_lib_version(&major, &minor, &revision)
        return "\(major).\(minor).\(revision)"
    }

    /// `mosquitto_strerror` for a `MOSQ_ERR_*` code.
    static func errorString(_ code: Int32) -> String {
        guard let text = mosquitto_strerror(code) else { return "unknown error \(code)" }
        return String(cString: text)
    }

    /// The text of a CONNACK refusal: `mosquitto_connack_string` for 3.1.1, `mosquitto_reason_string` for 5.
    static func connackString(_ code: Int32, protocolVersion: MQTTProtocolVersion) -> String {
        let text = protocolVersion == .v5 ? mosquitto_reason_string(code) : mosquitto_connack_string(code)
        guard let text else { return "refused with code \(code)" }
        return String(cString: text)
    }

    /// `mosquitto_reason_string` for an MQTT 5 reason code.
    static func reasonString(_ code: Int32) -> String {
        guard let text = mosquitto_reason_string(code) else { return "reason code \(code)" }
        return String(cString: text)
    }
}

/// Calls `body` with a C array of C strings, valid only during the call.
func withCStrings<Result>(_ strings: [String], _ body: (UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Result)
    -> Result
{
    let pointers = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>.allocate(capacity: strings.count)
    for (index, string) in strings.enumerated() { pointers[index] = strdup(string) }
    defer {
        for index in 0..<strings.count { free(pointers[index]) }
        pointers.deallocate()
    }
    return body(pointers)
}
