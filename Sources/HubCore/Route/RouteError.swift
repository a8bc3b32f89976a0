/// Why no route came out: a struct over a code, so that a new reason breaks no caller.
public struct RouteError: Error, CustomStringConvertible, Equatable, Sendable {
    /// The kind of failure, to branch on.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Value: String, Sendable {
            case noReadings = "no readings"
            case outsideArea = "outside the area"
            case unreachable = "unreachable"
            case invalidSettings = "invalid settings"
            case invalidRoads = "invalid road network"
            case samePlace = "same place"
        }
        private let value: Value

        /// No PM2.5 reading in the area: every cell would be the default, and the "least polluted" route would be
        /// the shortest one dressed up as something else. The planner refuses rather than guess.
        public static let noReadings = Code(value: .noReadings)
        /// The start or the end is off the grid, or farther from the road network than the snapping distance.
        public static let outsideArea = Code(value: .outsideArea)
        /// No path joins the start to the end (a road network in pieces).
        public static let unreachable = Code(value: .unreachable)
        /// A cell size, radius, weight or bounding box that can't work.
        public static let invalidSettings = Code(value: .invalidSettings)
        /// A road file that is not GeoJSON with LineStrings.
        public static let invalidRoads = Code(value: .invalidRoads)
        /// The start and the end are one cell or one road node: there is no route to plan.
        public static let samePlace = Code(value: .samePlace)

        public var description: String { value.rawValue }
    }

    public let code: Code
    /// What happened and what to do about it, for a person.
    public let description: String

    static let noReadings = RouteError(
        code: .noReadings,
        description: "no PM2.5 readings in the area between start and end: a least-polluted route needs data; "
            + "widen the time range or the margin")

    static func outside(_ what: String, _ point: GeoPoint, _ detail: String) -> RouteError {
        RouteError(code: .outsideArea, description: "the \(what) (\(point)) is \(detail)")
    }

    static func unreachable(_ start: GeoPoint, _ end: GeoPoint) -> RouteError {
        RouteError(
            code: .unreachable,
            description: "no path joins \(start) to \(end) in the road network: its roads there are not connected")
    }

    static func invalidSettings(_ detail: String) -> RouteError {
        RouteError(code: .invalidSettings, description: detail)
    }

    static func samePlace(_ start: GeoPoint, _ end: GeoPoint, _ within: String) -> RouteError {
        RouteError(
            code: .samePlace,
            description: "the start (\(start)) and the end (\(end)) are \(within): there is no route between them")
    }

    static func invalidRoads(_ detail: String) -> RouteError {
        RouteError(code: .invalidRoads, description: "the road network: \(detail)")
    }
}
