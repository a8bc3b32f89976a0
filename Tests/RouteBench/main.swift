import Foundation
import HubCore

// route-bench: the least-polluted route (issue 21) on a 1,000 × 1,000 grid and on a road network of over 100,000
// edges, A* beside a plain Dijkstra on the same graph and the same cost. Prints a Markdown report on stdout and
// progress on stderr; exits 1 when A*'s cost differs from Dijkstra's for any pair, so it is a correctness check too.
// usage: route-bench [--seed S] [--grid-pairs N] [--road-pairs N] [--memory-pairs N] [--planner-pairs N]
//                    [--cells N] [--streets N]

struct Settings {
    var seed: UInt64 = 21
    var gridPairs = 30
    var roadPairs = 200
    var memoryPairs = 5
    var plannerPairs = 5
    /// Cells along a side of the grid, each 25 m.
    var cells = 1000
    /// Crossings along a side of the street grid.
    var streets = 240
    let k = 0.02
    let cellSize = 25.0

    init(_ arguments: [String]) {
        var iterator = arguments.makeIterator()
        while let flag = iterator.next() {
            guard let value = iterator.next().flatMap({ Int($0) }), value >= 0 else {
                fail(
                    "usage: route-bench [--seed S] [--grid-pairs N] [--road-pairs N] [--memory-pairs N] "
                        + "[--planner-pairs N] [--cells N] [--streets N]")
            }
            switch flag {
            case "--seed": seed = UInt64(value)
            case "--grid-pairs": gridPairs = value
            case "--road-pairs": roadPairs = value
            case "--memory-pairs": memoryPairs = value
            case "--planner-pairs": plannerPairs = value
            case "--cells": cells = max(2, value)
            case "--streets": streets = max(2, value)
            default: fail("route-bench: unknown option \(flag)")
            }
        }
    }
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data((message + "\n").utf8))
    exit(2)
}

func progress(_ message: String) { FileHandle.standardError.write(Data((message + "\n").utf8)) }

func say(_ line: String = "") { print(line) }

func randomPairs(_ count: Int, nodes: Int, random: inout SeededRandom) -> [(Int, Int)] {
    (0..<count).map { _ in (Int.random(in: 0..<nodes, using: &random), Int.random(in: 0..<nodes, using: &random)) }
}

/// The whole planner, as `hubctl route` calls it: both searches (k and the shortest path), and on roads the
/// snapping and the pricing of every edge first.
func plannerTimes(_ count: Int, _ body: (Int) throws -> Route) rethrows -> Spread {
    Spread(try (0..<count).map { index in try Stopwatch.time { try body(index) }.1 })
}

/// What a route costs before it searches: A* from a node to itself expands one node, but allocates and fills its
/// arrays for every node of the graph all the same.
func fixedCost(_ graph: some RouteGraph) -> Spread {
    Spread((0..<7).map { _ in Stopwatch.time { RouteSearch.aStar(graph, from: 0, to: 0, k: 0.02) }.1 })
}

func fixedCostLine(_ spread: Spread, nodes: Int) -> String {
    "A route from a node to itself (one node expanded) takes \(Format.milliseconds(spread.median)) ms at the median "
        + "of 7: the fixed cost of each search's per-node arrays over all \(Format.count(nodes)) nodes."
}

func summary(_ comparison: Comparison, floor: Double) {
    let lengths = Spread(comparison.lengths)
    let perMetre = Spread(comparison.costPerMetre)
    let gap = Spread(comparison.heuristicGap)
    let speedup = Spread(comparison.speedups)
    let expansions = Spread(comparison.expansionRatios)
    say()
    say(
        "Routes \(Format.fixed(lengths.median / 1000, 1)) km long at the median (90 % under "
            + "\(Format.fixed(lengths.p90 / 1000, 1)) km); \(comparison.unreachable) pairs unreachable. "
            + "Dijkstra's time ÷ A*'s, per pair: median **\(Format.fixed(speedup.median, 2)) ×**, "
            + "p90 \(Format.fixed(speedup.p90, 2)) ×; its nodes expanded ÷ A*'s: median "
            + "\(Format.fixed(expansions.median, 2)) ×. A*'s cost equals Dijkstra's on "
            + "\(comparison.mismatches.isEmpty ? "every pair ✔" : "all but \(comparison.mismatches.count) ✘"). "
            + "A metre of the best route costs \(Format.fixed(perMetre.median, 3)) at the median, where the "
            + "heuristic counts \(Format.fixed(floor, 3)) (\(Format.fixed(100 * floor / perMetre.median, 0)) %); "
            + "the best route's cost is \(Format.fixed(gap.median, 3)) × the heuristic's estimate at the start, at "
            + "the median (1 would be a perfect heuristic).")
    say()
}

let settings = Settings(Array(CommandLine.arguments.dropFirst()))
let k = settings.k
let wallStart = Stopwatch.now()
let cpuStart = Stopwatch.cpu()
var mismatches: [String] = []
let city = City(side: Double(settings.cells) * settings.cellSize)

// The grid.
var random = SeededRandom(seed: settings.seed)
let readings = city.readings(spacing: 200, hotspots: 12, gaps: 4, random: &random)
progress("grid: \(readings.count) readings; building the field")
let ((field, fieldSeconds), fieldPeak) = try Memory.peakAbove {
    try Stopwatch.time {
        try PollutionField(readings: readings, box: city.box, cellSize: settings.cellSize, searchRadius: 250)
    }
}
guard field.rows == settings.cells, field.columns == settings.cells else {
    fail("route-bench: the field is \(field.rows) × \(field.columns), not \(settings.cells) × \(settings.cells)")
}
let fieldBytes = field.cellCount * (MemoryLayout<Double>.stride + MemoryLayout<Bool>.stride)
let grid = GridGraph(field: field)
let gridPairs = randomPairs(settings.gridPairs, nodes: grid.nodeCount, random: &random)
progress("grid: \(gridPairs.count) pairs")
let gridComparison = Comparison(
    [
        Search(name: "A*, octile heuristic") { RouteSearch.aStar(grid, from: $0, to: $1, k: k) },
        Search(name: "A*, straight-line heuristic (before)") {
            RouteSearch.aStar(GridVariant(grid: grid, straightLineHeuristic: true), from: $0, to: $1, k: k)
        },
        Search(name: "A*, octile, floor at 0 µg/m³ (one clean reading)") {
            RouteSearch.aStar(GridVariant(grid: grid, floor: 0), from: $0, to: $1, k: k)
        },
        Search(name: "Dijkstra (the reference)") { RouteSearch.dijkstra(grid, from: $0, to: $1, k: k) },
    ], pairs: gridPairs, memoryPairs: settings.memoryPairs
) { grid.straightLine(from: $0, to: $1) * (1 + k * grid.minimumPM25) }
mismatches += gridComparison.mismatches.map { "grid: " + $0 }
let gridFixed = fixedCost(grid)
progress("grid: the planner")
let gridPlanner = try plannerTimes(min(settings.plannerPairs, gridPairs.count)) { index in
    let (from, to) = gridPairs[index]
    return try RoutePlanner(pollutionWeight: k).route(from: grid.centre(from), to: grid.centre(to), over: field)
}

say("## A \(Format.count(field.rows)) × \(Format.count(field.columns)) grid")
say()
say(
    "\(Format.count(field.rows)) × \(Format.count(field.columns)) cells of \(Format.fixed(settings.cellSize, 0)) m "
        + "(a \(Format.fixed(city.side / 1000, 0)) km square), each joined to its 8 neighbours; "
        + "PM2.5 by inverse-distance weighting (radius 250 m) from \(Format.count(field.readingCount)) synthetic "
        + "readings (a jittered lattice every 200 m, 12 plumes of 40–150 µg/m³, 4 districts without data: "
        + "\(Format.count(field.defaultedCells)) cells at the default \(Format.fixed(field.defaultValue, 0)) µg/m³). "
        + "Lowest cell \(Format.fixed(field.minimumValue, 2)) µg/m³, so the heuristic prices a metre at "
        + "1 + k × \(Format.fixed(field.minimumValue, 2)) = \(Format.fixed(1 + k * field.minimumValue, 3)); "
        + "k = \(k). \(gridPairs.count) random pairs (seed \(settings.seed)).")
say()
say(
    "Field: built in **\(Format.milliseconds(fieldSeconds)) ms**; its cells hold \(Format.mebibytes(fieldBytes)) "
        + "(8 B of PM2.5 and 1 B of 'defaulted' a cell); the build's peak rose the resident set by "
        + "\(Format.mebibytes(fieldPeak)).")
say()
gridComparison.table().forEach { say($0) }
summary(gridComparison, floor: 1 + k * grid.minimumPM25)
say(fixedCostLine(gridFixed, nodes: grid.nodeCount))
say()
say(
    "The whole planner (`RoutePlanner.route(…, over:)`: A* at k and the shortest path at k = 0) on the first "
        + "\(min(settings.plannerPairs, gridPairs.count)) pairs: median \(Format.milliseconds(gridPlanner.median)) ms, "
        + "max \(Format.milliseconds(gridPlanner.max)) ms.")

// The roads.
var roadRandom = SeededRandom(seed: settings.seed &+ 1)
progress("roads: writing the GeoJSON")
let (geoJSON, writeSeconds) = Stopwatch.time {
    Data(
        city.streets(
            count: settings.streets, missing: 0.05, curved: 0.2, diagonal: 0.03, random: &roadRandom
        ).utf8)
}
progress("roads: parsing \(geoJSON.count / 1_048_576) MiB")
let ((network, parseSeconds), parsePeak) = try Memory.peakAbove {
    try Stopwatch.time { try RoadNetwork(geoJSON: geoJSON) }
}
let (roads, priceSeconds) = Stopwatch.time { RoadGraph(network: network, field: field) }
if settings.streets >= 240, network.edgeCount < 100_000 {
    fail("route-bench: the road network has \(network.edgeCount) edges, fewer than 100,000")
}
let roadPairs = randomPairs(settings.roadPairs, nodes: network.nodes.count, random: &roadRandom)
progress("roads: \(network.nodes.count) nodes, \(network.edgeCount) edges; \(roadPairs.count) pairs")
let roadComparison = Comparison(
    [
        Search(name: "A*, great-circle heuristic") { RouteSearch.aStar(roads, from: $0, to: $1, k: k) },
        Search(name: "Dijkstra (the reference)") { RouteSearch.dijkstra(roads, from: $0, to: $1, k: k) },
    ], pairs: roadPairs, memoryPairs: settings.memoryPairs
) { roads.straightLine(from: $0, to: $1) * (1 + k * roads.minimumPM25) }
mismatches += roadComparison.mismatches.map { "roads: " + $0 }
let roadFixed = fixedCost(roads)
progress("roads: the planner")
let roadPlanner = try plannerTimes(min(settings.plannerPairs, roadPairs.count)) { index in
    let (from, to) = roadPairs[index]
    return try RoutePlanner(pollutionWeight: k).route(
        from: network.nodes[from], to: network.nodes[to], along: network, field: field)
}
// Nodes, compressed rows of edges (offset, target, length) and each directed edge's PM2.5.
let networkBytes =
    network.nodes.count * (MemoryLayout<GeoPoint>.stride + MemoryLayout<Int>.stride) + network.edgeCount * 2
    * (MemoryLayout<Int32>.stride + 2 * MemoryLayout<Double>.stride)

say()
say("## A road network of \(Format.count(network.edgeCount)) edges")
say()
say(
    "A street grid of \(settings.streets) × \(settings.streets) crossings over the same \(Format.fixed(city.side / 1000, 0)) km "
        + "square, each moved by up to a quarter block, 5 % of the blocks' sides missing, 20 % bent through a shape "
        + "point, 3 % of the blocks crossed by a diagonal; written as GeoJSON LineStrings "
        + "(\(Format.mebibytes(geoJSON.count)), \(Format.milliseconds(writeSeconds)) ms) and read by `RoadNetwork`'s "
        + "own parser: \(Format.count(network.nodes.count)) nodes, \(Format.count(network.edgeCount)) edges. "
        + "Each edge priced from the grid's field above. \(roadPairs.count) random pairs of nodes.")
say()
say(
    "Parsing: **\(Format.milliseconds(parseSeconds)) ms**, the resident set's peak \(Format.mebibytes(parsePeak)) "
        + "above where it started (the streaming reader's lines and node index); the network and its prices hold "
        + "\(Format.mebibytes(networkBytes)). Pricing every edge from the field (`RoadGraph(network:field:)`): "
        + "**\(Format.milliseconds(priceSeconds)) ms**.")
say()
roadComparison.table().forEach { say($0) }
summary(roadComparison, floor: 1 + k * roads.minimumPM25)
say(fixedCostLine(roadFixed, nodes: roads.nodeCount))
say()
say(
    "The whole planner (`RoutePlanner.route(…, along:)`: snapping both ends, pricing every edge, A* at k and at "
        + "k = 0) on the first \(min(settings.plannerPairs, roadPairs.count)) pairs: median "
        + "\(Format.milliseconds(roadPlanner.median)) ms, max \(Format.milliseconds(roadPlanner.max)) ms.")

let wall = Stopwatch.now() - wallStart
let cpu = Stopwatch.cpu() - cpuStart
say()
say(
    "Peak memory of the whole process (VmHWM): \(Format.mebibytes(Memory.processPeak)). "
        + "Run: \(Format.fixed(wall, 1)) s of wall-clock time, \(Format.fixed(cpu, 1)) s of CPU "
        + "(\(Format.fixed(100 * cpu / wall, 0)) %: below 100 % the process waited for a core)."
        + (Memory.canResetPeak ? "" : " /proc/self/clear_refs was not writable: per-route memory is not measured."))
if !mismatches.isEmpty {
    say()
    say("**A* and Dijkstra disagree** (\(mismatches.count)):")
    mismatches.prefix(20).forEach { say("- " + $0) }
    exit(1)
}
