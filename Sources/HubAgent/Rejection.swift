import HubCore

/// Why a message did not become a status. Counted by its text, and logged at a bounded rate.
public enum Rejection: Sendable, Hashable {
    case invalidUTF8
    case tooLong
    case controlCharacters
    case empty
    case unknownTopic
    case invalidReading
    case invalidAvailability
    /// A mobile sensor's position that can't be a place.
    case invalidPosition
    /// A session control message (`{"session":"start"}`) to a sensor that `sessions:` does not make mobile.
    case notMobile
    /// A device's payload that gave no value: the format says why (not JSON, the path missing, …).
    case value(ValueFormat.Problem)
    /// A QoS 1/2 message the broker sent again (no acknowledgement reached it: the hub, or the cluster agent that had
    /// it, died after applying it) that was applied already (`RecentDeliveries`).
    case redelivered

    init(_ problem: ValueFormat.Problem) {
        self = problem == .controlCharacters ? .controlCharacters : .value(problem)
    }

    /// What the counters and the log call it.
    public var rawValue: String {
        switch self {
        case .invalidUTF8: "not valid UTF-8"
        case .tooLong: "longer than sensors.max_status_length"
        case .controlCharacters: "contains control characters"
        case .empty: "empty"
        case .unknownTopic: "on a topic no sensor uses (any more)"
        case .invalidReading:
            "not a particulate reading (the hub's JSON, Tasmota's, or a number; with a position on the Earth if any)"
        case .invalidPosition: "a position that is not on the Earth (lat −90…90, lon −180…180, both numbers)"
        case .notMobile: "a session control message to a sensor sessions: in hubd.yaml does not name"
        case .invalidAvailability: "not an availability (online/offline, true/false or {\"state\":…})"
        case .value(let problem): problem.rawValue
        case .redelivered: "sent again by the broker (no acknowledgement reached it), and applied already"
        }
    }
}
