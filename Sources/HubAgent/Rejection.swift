import HubCore

/// Why a message did not become a status. Counted, and logged at a bounded rate.
public enum Rejection: String, Sendable, CaseIterable {
    case invalidUTF8 = "not valid UTF-8"
    case tooLong = "longer than sensors.max_status_length"
    case controlCharacters = "contains control characters"
    case empty = "empty"
    case unknownTopic = "on a topic no sensor uses (any more)"
    case invalidReading = "not a particulate reading (the hub's JSON, Tasmota's, or a number)"
    case notJSON = "not JSON, for a sensor with a value path"
    case missingValue = "the value path is not in the payload"
    case wrongType = "the value is not of the sensor's type"
    case notANumber = "not a number, for a numeric sensor"
    case outOfRange = "a number outside the sensor's range"
    case invalidAvailability = "not an availability (online/offline, true/false or {\"state\":…})"

    init(_ problem: ValueFormat.Problem) {
        switch problem {
        case .notJSON: self = .notJSON
        case .missingValue: self = .missingValue
        case .wrongType: self = .wrongType
        case .notANumber: self = .notANumber
        case .outOfRange: self = .outOfRange
        case .controlCharacters: self = .controlCharacters
        }
    }
}
