import HeapModule

/// One edge out of a node, as A* sees it.
package struct RouteEdge: Sendable {
    package var target: Int
    /// Metres.
    package var length: Double
    /// µg/m³ along the edge.
    package var pm25: Double

    package init(target: Int, length: Double, pm25: Double) {
        self.target = target
        self.length = length
        self.pm25 = pm25
    }
}

/// What A* searches: nodes numbered from 0, edges with a length and a PM2.5.
package protocol RouteGraph {
    var nodeCount: Int { get }
    func forEachEdge(from node: Int, _ body: (RouteEdge) -> Void)
    /// A lower bound, in metres, on the length of every path between two nodes.
    func straightLine(from: Int, to: Int) -> Double
    /// A lower bound on the PM2.5 of every edge.
    var minimumPM25: Double { get }
}

/// A path found by `RouteSearch`.
package struct SearchResult: Sendable, Equatable {
    package var nodes: [Int]
    /// Metres.
    package var length: Double
    /// Σ length × PM2.5, µg/m³·m.
    package var exposure: Double
    /// Σ length × (1 + k × PM2.5): what was minimised.
    package var cost: Double
    /// Nodes taken from the queue and settled, the goal included: the work the search did.
    package var expanded: Int = 0
}

package enum RouteSearch {
    /// A* (Hart, Nilsson and Raphael, "A Formal Basis for the Heuristic Determination of Minimum Cost Paths", IEEE
    /// Transactions on Systems Science and Cybernetics 4(2), 1968) minimising Σ length × (1 + k × PM2.5).
    ///
    /// The heuristic h(n) = straightLine(n, goal) × (1 + k × minimumPM25) never overestimates: every path from n is
    /// at least straightLine long, and each of its metres costs at least 1 + k × minimumPM25 (k ≥ 0). It is also
    /// consistent (the straight line obeys the triangle inequality and an edge is no shorter than the straight line
    /// between its ends), so a node is final when it is first taken from the queue. `nil` when `goal` can't be
    /// reached.
    package static func aStar(_ graph: some RouteGraph, from start: Int, to goal: Int, k: Double) -> SearchResult? {
        let factor = 1 + k * graph.minimumPM25
        var best = [Double](repeating: .infinity, count: graph.nodeCount)
        var parent = [Int32](repeating: -1, count: graph.nodeCount)
        var done = [Bool](repeating: false, count: graph.nodeCount)
        var open = Heap<Entry>()
        var expanded = 0
        best[start] = 0
        open.insert(Entry(estimate: graph.straightLine(from: start, to: goal) * factor, cost: 0, node: start))
        while let entry = open.popMin() {
            let node = entry.node
            if done[node] || entry.cost > best[node] { continue }
            done[node] = true
            expanded += 1
            if node == goal { break }
            graph.forEachEdge(from: node) { edge in
                guard !done[edge.target] else { return }
                let cost = entry.cost + edge.length * (1 + k * edge.pm25)
                guard cost < best[edge.target] else { return }
                best[edge.target] = cost
                parent[edge.target] = Int32(node)
                let estimate = cost + graph.straightLine(from: edge.target, to: goal) * factor
                open.insert(Entry(estimate: estimate, cost: cost, node: edge.target))
            }
        }
        guard done[goal] else { return nil }
        return path(graph, to: goal, from: start, parent: parent, cost: best[goal], k: k, expanded: expanded)
    }

    /// The path back from `goal` along `parent`, with its length and exposure.
    ///
    /// The edges are found again from each node's parent rather than kept per node during the search: on the
    /// 1,000 × 1,000 grid that is 16 MB less to allocate and fill for every route, 13 MB instead of 29. Above
    /// glibc's trim threshold the 29 MB went back to the kernel after each route and were faulted in again by the
    /// next, 15 ms of a 26 ms median route (`bench/route.sh`). Between two nodes the cheapest edge is the one the
    /// search took, the first of equals as there.
    static func path(
        _ graph: some RouteGraph, to goal: Int, from start: Int, parent: [Int32], cost: Double, k: Double, expanded: Int
    ) -> SearchResult {
        var nodes = [goal]
        var length = 0.0
        var exposure = 0.0
        var node = goal
        while node != start {
            let previous = Int(parent[node])
            var taken: RouteEdge?
            graph.forEachEdge(from: previous) { edge in
                guard edge.target == node else { return }
                if let known = taken, known.length * (1 + k * known.pm25) <= edge.length * (1 + k * edge.pm25) {
                    return
                }
                taken = edge
            }
            // The search relaxed this node through an edge from its parent, so there is one.
            length += taken?.length ?? 0
            exposure += (taken?.length ?? 0) * (taken?.pm25 ?? 0)
            node = previous
            nodes.append(node)
        }
        return SearchResult(nodes: nodes.reversed(), length: length, exposure: exposure, cost: cost, expanded: expanded)
    }

    private struct Entry: Comparable {
        var estimate: Double
        var cost: Double
        var node: Int

        /// Ties go to the deeper node (the larger cost so far), which reaches the goal sooner.
        static func < (a: Entry, b: Entry) -> Bool {
            a.estimate < b.estimate || (a.estimate == b.estimate && a.cost > b.cost)
        }
    }
}

/// The pollution grid as a graph: each cell joined to its eight neighbours, an edge priced at the mean of its two
/// cells over the distance between their centres.
package struct GridGraph: RouteGraph {
    package let field: PollutionField
    private static let diagonal = 2.0.squareRoot()

    package init(field: PollutionField) { self.field = field }

    package var nodeCount: Int { field.cellCount }
    package var minimumPM25: Double { field.minimumValue }

    package func forEachEdge(from node: Int, _ body: (RouteEdge) -> Void) {
        let columns = field.columns
        let row = node / columns
        let column = node % columns
        let here = field.values[node]
        for dr in -1...1 {
            let r = row + dr
            guard r >= 0, r < field.rows else { continue }
            for dc in -1...1 where dr != 0 || dc != 0 {
                let c = column + dc
                guard c >= 0, c < columns else { continue }
                let target = r * columns + c
                let length = field.cellSize * (dr != 0 && dc != 0 ? Self.diagonal : 1)
                body(RouteEdge(target: target, length: length, pm25: (here + field.values[target]) / 2))
            }
        }
    }

    /// The octile distance: the length of the shortest path of the grid's own steps, max(Δr, Δc) straight ones of
    /// which min(Δr, Δc) are diagonal, which no path of eight-neighbour steps can beat. Up to 8 % longer than the
    /// straight line (at 22.5°), so A* sets aside more of the grid: a fifth fewer nodes expanded at the median on
    /// `bench/route.sh`'s 1,000 × 1,000 grid. Like the straight line it is a norm, and each edge is exactly as long
    /// as it says between its ends, so it stays consistent.
    package func straightLine(from: Int, to: Int) -> Double {
        let dr = abs(from / field.columns - to / field.columns)
        let dc = abs(from % field.columns - to % field.columns)
        return (Double(max(dr, dc)) + (Self.diagonal - 1) * Double(min(dr, dc))) * field.cellSize
    }

    package func centre(_ node: Int) -> GeoPoint {
        field.centre(row: node / field.columns, column: node % field.columns)
    }
}
