/// A planned route beside the plain shortest one, so that a person sees what the detour buys.
public struct Route: Sendable, Equatable {
    /// Cell centres (on the grid) or road nodes, from the start's to the end's.
    public var points: [GeoPoint]
    /// Metres.
    public var length: Double
    /// Σ length × PM2.5 along the route, µg/m³·m: divided by a walking speed, the dose a person breathes.
    public var exposure: Double
    /// The shortest path (k = 0) between the same cells or nodes: its points, length and exposure.
    public var shortestPoints: [GeoPoint]
    public var shortestLength: Double
    public var shortestExposure: Double
    /// Cells of the field that had no reading within the search radius and were counted at the default.
    public var defaultedCells: Int
    /// µg/m³ given to those cells.
    public var defaultValue: Double
}

/// Plans the least-polluted route between two points: A* minimising Σ length × (1 + k × PM2.5).
///
/// On the grid the route goes from the cell holding the start to the cell holding the end; on a road network from
/// the node nearest the start to the node nearest the end. Both answers come with the shortest path's length and
/// exposure. When start and end fall in the same cell or on the same node the route has length 0: not an error.
/// A field without readings is refused (`RouteError.Code.noReadings`) rather than routed over the default.
public struct RoutePlanner: Sendable {
    /// k, per µg/m³: how much a microgram adds to the price of a metre. At 0.02, a metre at 50 µg/m³ costs as much
    /// as two clean ones, which keeps the detour sensible (the seed's caution against absurdly long routes).
    public var pollutionWeight: Double
    /// Metres: how far from the nearest road node a start or end may be.
    public var snapDistance: Double

    public init(pollutionWeight: Double = 0.02, snapDistance: Double = 250) {
        self.pollutionWeight = pollutionWeight
        self.snapDistance = snapDistance
    }

    /// The route over the field's grid, each cell joined to its eight neighbours.
    public func route(from start: GeoPoint, to end: GeoPoint, over field: PollutionField) throws(RouteError) -> Route {
        try check(field)
        guard let from = field.cell(containing: start) else {
            throw .outside("start", start, "outside the pollution grid")
        }
        guard let to = field.cell(containing: end) else { throw .outside("end", end, "outside the pollution grid") }
        let graph = GridGraph(field: field)
        return try plan(
            graph, from: from.row * field.columns + from.column, to: to.row * field.columns + to.column,
            field: field, start: start, end: end, point: graph.centre)
    }

    /// The route along roads, each edge priced at the field's PM2.5 along it.
    public func route(
        from start: GeoPoint, to end: GeoPoint, along roads: RoadNetwork, field: PollutionField
    ) throws(RouteError) -> Route {
        try check(field)
        let from = try snap(start, "start", roads)
        let to = try snap(end, "end", roads)
        let graph = RoadGraph(network: roads, field: field)
        return try plan(graph, from: from, to: to, field: field, start: start, end: end) { roads.nodes[$0] }
    }

    private func check(_ field: PollutionField) throws(RouteError) {
        guard pollutionWeight.isFinite, pollutionWeight >= 0 else {
            throw .invalidSettings("the pollution weight k must be a number of at least 0")
        }
        guard field.readingCount > 0 else { throw .noReadings }
    }

    private func snap(_ point: GeoPoint, _ what: String, _ roads: RoadNetwork) throws(RouteError) -> Int {
        guard let nearest = roads.nearestNode(to: point), nearest.distance <= snapDistance else {
            throw .outside(what, point, "more than \(Int(snapDistance)) m from any road of the network")
        }
        return nearest.node
    }

    private func plan(
        _ graph: some RouteGraph, from: Int, to: Int, field: PollutionField, start: GeoPoint, end: GeoPoint,
        point: (Int) -> GeoPoint
    ) throws(RouteError) -> Route {
        guard let cleanest = RouteSearch.aStar(graph, from: from, to: to, k: pollutionWeight),
            let shortest = RouteSearch.aStar(graph, from: from, to: to, k: 0)
        else { throw .unreachable(start, end) }
        return Route(
            points: cleanest.nodes.map(point), length: cleanest.length, exposure: cleanest.exposure,
            shortestPoints: shortest.nodes.map(point), shortestLength: shortest.length,
            shortestExposure: shortest.exposure,
            defaultedCells: field.defaultedCells, defaultValue: field.defaultValue)
    }
}
