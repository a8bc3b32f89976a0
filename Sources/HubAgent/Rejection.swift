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
    /// In a cluster: a message the broker sent again (its agent died before acknowledging it) that was committed.
    case committedBefore

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
        case .committedBefore: "sent again by the broker, and committed already by the agent that had it first"
        }
    }
}
