import Foundation

/// Roads to route along: every coordinate of every LineString a node, merged where roads share a coordinate, and
/// each pair of consecutive coordinates an edge both ways (a walker or cyclist; one-way streets are not read).
///
/// The expected source is an OpenStreetMap extract turned into GeoJSON (RFC 7946: positions are
/// [longitude, latitude]). Coordinates are merged when they agree to 1e-7° (about a centimetre), which absorbs the
/// rounding of tools that write the same junction twice.
public struct RoadNetwork: Sendable {
    public let nodes: [GeoPoint]
    /// Edges of node i: `targets[offsets[i]..<offsets[i + 1]]` (compressed rows).
    private let offsets: [Int]
    private let targets: [Int32]
    /// Metres, beside `targets`.
    private let lengths: [Double]

    public var edgeCount: Int { targets.count / 2 }

    /// A network from nodes and undirected edges; an edge's length defaults to the great-circle distance between its
    /// ends and must not be shorter than it (A*'s heuristic relies on that).
    package init(nodes: [GeoPoint], edges: [(Int, Int, length: Double?)]) {
        self.nodes = nodes
        var counts = [Int](repeating: 0, count: nodes.count + 1)
        for (a, b, _) in edges where a != b {
            counts[a + 1] += 1
            counts[b + 1] += 1
        }
        for i in 0..<nodes.count { counts[i + 1] += counts[i] }
        var next = counts
        var targets = [Int32](repeating: 0, count: counts[nodes.count])
        var lengths = [Double](repeating: 0, count: counts[nodes.count])
        for (a, b, length) in edges where a != b {
            let metres = length ?? Geodesy.distance(nodes[a], nodes[b])
            targets[next[a]] = Int32(b)
            lengths[next[a]] = metres
            next[a] += 1
            targets[next[b]] = Int32(a)
            lengths[next[b]] = metres
            next[b] += 1
        }
        offsets = counts
        self.targets = targets
        self.lengths = lengths
    }

    /// Reads a FeatureCollection, a Feature or a bare geometry; LineStrings and MultiLineStrings count, other
    /// geometries (points of interest in the same extract) are passed over.
    public init(geoJSON data: Data) throws(RouteError) {
        let lines = try Self.lines(inGeoJSON: data)
        var index: [Key: Int] = [:]
        var nodes: [GeoPoint] = []
        var edges: [(Int, Int, length: Double?)] = []
        for line in lines {
            var previous: Int?
            for point in line {
                let key = Key(point)
                let node: Int
                if let known = index[key] {
                    node = known
                } else {
                    node = nodes.count
                    index[key] = node
                    nodes.append(point)
                }
                if let previous, previous != node { edges.append((previous, node, length: nil)) }
                previous = node
            }
        }
        guard !edges.isEmpty else { throw .invalidRoads("no LineString with two distinct positions") }
        self.init(nodes: nodes, edges: edges)
    }

    func forEachEdge(from node: Int, _ body: (_ target: Int, _ length: Double, _ edge: Int) -> Void) {
        for edge in offsets[node]..<offsets[node + 1] { body(Int(targets[edge]), lengths[edge], edge) }
    }

    /// The node nearest a point, and its distance in metres; `nil` for an empty network.
    func nearestNode(to point: GeoPoint) -> (node: Int, distance: Double)? {
        var best: (node: Int, distance: Double)?
        for (node, candidate) in nodes.enumerated() {
            let distance = Geodesy.distance(point, candidate)
            if distance < best?.distance ?? .infinity { best = (node, distance) }
        }
        return best
    }

    /// The PM2.5 of every directed edge slot: the field's mean along the edge, sampled at the centres of pieces no
    /// longer than a cell (at least the midpoint), so that a long edge crossing a hotspot is not priced by one end.
    func edgePM25(in field: PollutionField) -> [Double] {
        var result = [Double](repeating: 0, count: targets.count)
        for node in nodes.indices {
            forEachEdge(from: node) { target, length, edge in
                // Each undirected edge twice: cheap next to A*, and it keeps the arrays plain.
                let pieces = max(1, Int((length / field.cellSize).rounded(.up)))
                let a = field.projection.project(nodes[node])
                let b = field.projection.project(nodes[target])
                var sum = 0.0
                for piece in 0..<pieces {
                    let t = (Double(piece) + 0.5) / Double(pieces)
                    let point =
                        field.projection.unproject(x: a.x + (b.x - a.x) * t, y: a.y + (b.y - a.y) * t) ?? nodes[node]
                    sum += field.sample(at: point)
                }
                result[edge] = sum / Double(pieces)
            }
        }
        return result
    }

    private struct Key: Hashable {
        var latitude: Int64
        var longitude: Int64
        init(_ point: GeoPoint) {
            latitude = Int64((point.latitude * 1e7).rounded())
            longitude = Int64((point.longitude * 1e7).rounded())
        }
    }
}

/// A road network with each edge's PM2.5 taken from a field, as A* searches it.
package struct RoadGraph: RouteGraph {
    package let network: RoadNetwork
    private let pm25: [Double]
    package let minimumPM25: Double

    /// - Parameter pm25: one value per directed edge slot (`RoadNetwork.edgePM25(in:)`), each at least `minimum`.
    package init(network: RoadNetwork, pm25: [Double], minimum: Double) {
        self.network = network
        self.pm25 = pm25
        minimumPM25 = minimum
    }

    package init(network: RoadNetwork, field: PollutionField) {
        self.init(network: network, pm25: network.edgePM25(in: field), minimum: field.minimumValue)
    }

    package var nodeCount: Int { network.nodes.count }

    package func forEachEdge(from node: Int, _ body: (RouteEdge) -> Void) {
        network.forEachEdge(from: node) { target, length, edge in
            body(RouteEdge(target: target, length: length, pm25: pm25[edge]))
        }
    }

    /// The haversine distance: a metric on the sphere, and no longer than any edge's length.
    package func straightLine(from: Int, to: Int) -> Double {
        Geodesy.distance(network.nodes[from], network.nodes[to])
    }
}
