import HubCore

/// One way of finding a route on a graph, as the report names it.
struct Search {
    var name: String
    var run: (_ from: Int, _ to: Int) -> SearchResult?
}

/// What one search did over all the pairs.
struct SearchRow {
    var name: String
    var seconds: [Double] = []
    /// CPU seconds of the same calls: unlike wall-clock time, not inflated while the process waits for a core.
    var cpuSeconds: [Double] = []
    var expanded: [Double] = []
    /// Bytes the resident set rose by during each route of the memory pass.
    var peaks: [Int] = []
}

/// Every search over the same pairs, and whether each agreed with the reference (the last search).
struct Comparison {
    var rows: [SearchRow]
    /// Route lengths in metres, from the reference, for pairs that have a route.
    var lengths: [Double] = []
    /// The reference's cost over its length, per pair: what a metre of the best route costs on average, which the
    /// heuristic's 1 + k × minimum can only approach.
    var costPerMetre: [Double] = []
    /// The reference's cost over what the heuristic says at the start, per pair: 1 for a perfect heuristic, and the
    /// more above 1, the more of the graph A* must open.
    var heuristicGap: [Double] = []
    var unreachable = 0
    /// Pairs where a search's cost was not the reference's, with what each said.
    var mismatches: [String] = []
    /// Per pair, the reference's time over the first search's: how many times faster the first one was.
    var speedups: [Double] = []
    /// Per pair, the reference's expansions over the first search's.
    var expansionRatios: [Double] = []

    /// Runs each search on each pair (the order turned round every other pair, so that neither always runs on a
    /// cache the other warmed), then a memory pass over the first `memoryPairs` pairs, each search from a trimmed
    /// heap with the high-water mark cleared.
    init(_ searches: [Search], pairs: [(Int, Int)], memoryPairs: Int, heuristic: (Int, Int) -> Double) {
        rows = searches.map { SearchRow(name: $0.name) }
        let reference = searches.count - 1
        for (index, (from, to)) in pairs.enumerated() {
            var results = [SearchResult?](repeating: nil, count: searches.count)
            let order = index % 2 == 0 ? Array(searches.indices) : searches.indices.reversed()
            var seconds = [Double](repeating: 0, count: searches.count)
            for s in order {
                let cpu = Stopwatch.cpu()
                (results[s], seconds[s]) = Stopwatch.time { searches[s].run(from, to) }
                rows[s].cpuSeconds.append(Stopwatch.cpu() - cpu)
                rows[s].seconds.append(seconds[s])
                rows[s].expanded.append(Double(results[s]?.expanded ?? 0))
            }
            guard let expected = results[reference] else {
                unreachable += 1
                for s in searches.indices where results[s] != nil {
                    mismatches.append("\(from) → \(to): \(searches[s].name) found a route, the reference none")
                }
                continue
            }
            lengths.append(expected.length)
            if expected.length > 0 {
                costPerMetre.append(expected.cost / expected.length)
                heuristicGap.append(expected.cost / heuristic(from, to))
            }
            speedups.append(seconds[reference] / seconds[0])
            expansionRatios.append(Double(expected.expanded) / Double(max(1, results[0]?.expanded ?? 1)))
            for s in searches.indices where s != reference {
                guard let found = results[s] else {
                    mismatches.append("\(from) → \(to): \(searches[s].name) found no route, the reference one")
                    continue
                }
                if abs(found.cost - expected.cost) > 1e-9 * max(1, expected.cost) {
                    mismatches.append(
                        "\(from) → \(to): \(searches[s].name) cost \(found.cost), the reference \(expected.cost)")
                }
                if found.nodes.first != from || found.nodes.last != to {
                    mismatches.append("\(from) → \(to): \(searches[s].name)'s path does not join the two")
                }
            }
        }
        for (from, to) in pairs.prefix(memoryPairs) {
            for s in searches.indices {
                let (_, peak) = Memory.peakAbove { searches[s].run(from, to) }
                rows[s].peaks.append(peak)
            }
        }
    }

    /// The table's rows: each search's times, expansions and memory per route.
    func table() -> [String] {
        var lines = [
            "| search | median ms | p90 ms | max ms | median CPU ms | nodes expanded, median | max | "
                + "memory per route |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for row in rows {
            let time = Spread(row.seconds)
            let expanded = Spread(row.expanded)
            let memory = row.peaks.max().map(Format.mebibytes) ?? "–"
            lines.append(
                "| \(row.name) | \(Format.milliseconds(time.median)) | \(Format.milliseconds(time.p90)) | "
                    + "\(Format.milliseconds(time.max)) | \(Format.milliseconds(Spread(row.cpuSeconds).median)) | "
                    + "\(Format.count(Int(expanded.median))) | "
                    + "\(Format.count(Int(expanded.max))) | \(memory) |")
        }
        return lines
    }
}

/// The grid with another heuristic, to show what each part of the shipped one buys on the same pairs: the straight
/// line between cell centres (what it had before the octile distance), or a lower PM2.5 floor (as if one reading
/// anywhere in the field were that clean). The edges and their costs are the grid's own.
struct GridVariant: RouteGraph {
    let grid: GridGraph
    var straightLineHeuristic = false
    var floor: Double?

    var nodeCount: Int { grid.nodeCount }
    var minimumPM25: Double { floor ?? grid.minimumPM25 }

    func forEachEdge(from node: Int, _ body: (RouteEdge) -> Void) { grid.forEachEdge(from: node, body) }

    func straightLine(from: Int, to: Int) -> Double {
        guard straightLineHeuristic else { return grid.straightLine(from: from, to: to) }
        let columns = grid.field.columns
        let dr = Double(from / columns - to / columns)
        let dc = Double(from % columns - to % columns)
        return (dr * dr + dc * dc).squareRoot() * grid.field.cellSize
    }
}
