import HeapModule

extension RouteSearch {
    /// Plain Dijkstra (E. W. Dijkstra, "A note on two problems in connexion with graphs", Numerische Mathematik 1,
    /// 1959, pp. 269–271) with a binary heap and no heuristic: the reference that A* is checked against, by the
    /// property test and by the route benchmark, on the same graph and the same cost Σ length × (1 + k × PM2.5).
    ///
    /// Written apart from `aStar` on purpose (no estimate, no tie-breaking rule), so that the two costs agree because
    /// both are right, not because they share a mistake; only the walk back along the parents, which doesn't touch
    /// the cost, is shared. It stops when the goal is settled, as a route query would. `nil` when `goal` can't be
    /// reached.
    package static func dijkstra(_ graph: some RouteGraph, from start: Int, to goal: Int, k: Double) -> SearchResult? {
        var distance = [Double](repeating: .infinity, count: graph.nodeCount)
        var via = [Int32](repeating: -1, count: graph.nodeCount)
        var settled = [Bool](repeating: false, count: graph.nodeCount)
        var queue = Heap<Queued>()
        var expanded = 0
        distance[start] = 0
        queue.insert(Queued(distance: 0, node: start))
        while let next = queue.popMin() {
            let node = next.node
            // A node is queued again each time its distance drops; only its first (smallest) entry counts.
            if settled[node] { continue }
            settled[node] = true
            expanded += 1
            if node == goal { break }
            graph.forEachEdge(from: node) { edge in
                let candidate = next.distance + edge.length * (1 + k * edge.pm25)
                guard candidate < distance[edge.target] else { return }
                distance[edge.target] = candidate
                via[edge.target] = Int32(node)
                queue.insert(Queued(distance: candidate, node: edge.target))
            }
        }
        guard settled[goal] else { return nil }
        // The same per-node arrays as A* (and the same walk back), so that the two compare as algorithms.
        return path(graph, to: goal, from: start, parent: via, cost: distance[goal], k: k, expanded: expanded)
    }

    private struct Queued: Comparable {
        var distance: Double
        var node: Int

        static func < (a: Queued, b: Queued) -> Bool { a.distance < b.distance }
    }
}
