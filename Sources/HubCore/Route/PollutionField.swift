import Foundation

/// One PM2.5 reading taken at a place, in µg/m³.
public struct PollutionReading: Sendable, Hashable {
    public var point: GeoPoint
    public var pm25: Double

    public init(point: GeoPoint, pm25: Double) {
        self.point = point
        self.pm25 = pm25
    }
}

/// PM2.5 spread from scattered readings onto a square grid over a box, by inverse-distance weighting.
///
/// Each cell centre takes u = Σ wᵢ uᵢ / Σ wᵢ with wᵢ = 1 / dᵢ², over the readings within `searchRadius` metres
/// (D. Shepard, "A two-dimensional interpolation function for irregularly-spaced data", Proceedings of the 23rd ACM
/// National Conference, 1968, pp. 517–524: power 2 and a neighbourhood radius, as there). A reading closer than a
/// millimetre to a centre is taken as it is. A cell with no reading within the radius takes `defaultValue` and is
/// counted in `defaultedCells`: a route through it is priced at a guess, and the result says how many there were.
/// Distances are in the `LocalProjection` around the box's centre, so the box should be city-sized.
public struct PollutionField: Sendable {
    /// The most cells a field may have (a 4,000 × 4,000 grid: 16 M cells, about 144 MB).
    public static let maximumCells = 16_000_000

    public let projection: LocalProjection
    /// Metres along a cell's side.
    public let cellSize: Double
    public let rows: Int
    public let columns: Int
    public let searchRadius: Double
    /// µg/m³ given to a cell with no reading within the radius.
    public let defaultValue: Double
    /// Readings that were used (finite, not negative); 0 means every cell is the default.
    public let readingCount: Int
    public let defaultedCells: Int
    /// The lowest value of any cell (the default included when a cell has it): what the A* heuristic may assume.
    public let minimumValue: Double
    /// Row-major from the south-west corner, µg/m³.
    package let values: [Double]
    private let defaulted: [Bool]
    /// Where the south-west corner of the grid is, in projected metres.
    private let x0: Double
    private let y0: Double

    /// - Parameters:
    ///   - cellSize: metres along a cell's side.
    ///   - searchRadius: metres within which a reading counts for a cell.
    ///   - defaultValue: µg/m³ for cells with no reading within the radius; the WHO 2021 24-hour guideline level
    ///     (15) by default, so that a stretch without data is neither free nor avoided.
    ///   - maximumCells: the most cells allowed, checked before anything is allocated (a server answering requests
    ///     keeps it lower than `PollutionField.maximumCells`).
    public init(
        readings: [PollutionReading], box: GeoBoundingBox, cellSize: Double = 25, searchRadius: Double = 250,
        defaultValue: Double = 15, maximumCells: Int = Self.maximumCells
    ) throws(RouteError) {
        guard cellSize.isFinite, cellSize > 0 else { throw .invalidSettings("the cell size must be above 0 m") }
        guard searchRadius.isFinite, searchRadius > 0 else {
            throw .invalidSettings("the search radius must be above 0 m")
        }
        guard defaultValue.isFinite, defaultValue >= 0 else {
            throw .invalidSettings("the default PM2.5 must be a number of at least 0 µg/m³")
        }
        guard box.south <= box.north, box.west <= box.east,
            let southWest = GeoPoint(latitude: box.south, longitude: box.west),
            let northEast = GeoPoint(latitude: box.north, longitude: box.east)
        else { throw .invalidSettings("the bounding box is empty or off the globe") }
        let projection = LocalProjection(origin: box.centre)
        let (x0, y0) = projection.project(southWest)
        let (x1, y1) = projection.project(northEast)
        // Counted in Double first: a tiny cell over a wide box would overflow Int. A box that is a whole number of
        // cells less a rounding error (1e-6 of a cell) is not given one more.
        let across = max(1, ((x1 - x0) / cellSize - 1e-6).rounded(.up))
        let up = max(1, ((y1 - y0) / cellSize - 1e-6).rounded(.up))
        guard across * up <= Double(min(maximumCells, Self.maximumCells)) else {
            throw .invalidSettings(
                String(format: "%.0f × %.0f cells of %g m", up, across, cellSize) + " is more than the "
                    + "\(min(maximumCells, Self.maximumCells)) allowed: choose a larger cell or a smaller area")
        }
        let columns = Int(across)
        let rows = Int(up)
        self.projection = projection
        self.cellSize = cellSize
        self.rows = rows
        self.columns = columns
        self.searchRadius = searchRadius
        self.defaultValue = defaultValue
        self.x0 = x0
        self.y0 = y0

        let used = readings.filter { $0.pm25.isFinite && $0.pm25 >= 0 }
        let projected = used.map { projection.project($0.point) }
        let buckets = ReadingBuckets(points: projected, x0: x0, y0: y0, size: searchRadius)
        var values = [Double](repeating: defaultValue, count: rows * columns)
        var defaulted = [Bool](repeating: true, count: rows * columns)
        var defaultedCells = 0
        let radiusSquared = searchRadius * searchRadius
        for row in 0..<rows {
            let y = y0 + (Double(row) + 0.5) * cellSize
            for column in 0..<columns {
                let x = x0 + (Double(column) + 0.5) * cellSize
                var weighted = 0.0
                var weights = 0.0
                var exact = 0.0
                var exactCount = 0
                buckets.forEachCandidate(x: x, y: y) { index in
                    let dx = projected[index].x - x
                    let dy = projected[index].y - y
                    let d2 = dx * dx + dy * dy
                    guard d2 <= radiusSquared else { return }
                    if d2 < 1e-6 {
                        exact += used[index].pm25
                        exactCount += 1
                    } else {
                        weighted += used[index].pm25 / d2
                        weights += 1 / d2
                    }
                }
                let cell = row * columns + column
                if exactCount > 0 {
                    values[cell] = exact / Double(exactCount)
                    defaulted[cell] = false
                } else if weights > 0 {
                    values[cell] = weighted / weights
                    defaulted[cell] = false
                } else {
                    defaultedCells += 1
                }
            }
        }
        self.values = values
        self.defaulted = defaulted
        self.defaultedCells = defaultedCells
        self.readingCount = used.count
        self.minimumValue = values.min() ?? defaultValue
    }

    public var cellCount: Int { rows * columns }

    public func value(row: Int, column: Int) -> Double { values[row * columns + column] }

    /// Whether the cell had no reading within the radius and holds `defaultValue`.
    public func isDefaulted(row: Int, column: Int) -> Bool { defaulted[row * columns + column] }

    /// The cell a point falls in; `nil` outside the grid.
    public func cell(containing point: GeoPoint) -> (row: Int, column: Int)? {
        let (x, y) = projection.project(point)
        let column = Int(((x - x0) / cellSize).rounded(.down))
        let row = Int(((y - y0) / cellSize).rounded(.down))
        guard (0..<rows).contains(row), (0..<columns).contains(column) else { return nil }
        return (row, column)
    }

    /// A cell's centre on the globe.
    public func centre(row: Int, column: Int) -> GeoPoint {
        let x = x0 + (Double(column) + 0.5) * cellSize
        let y = y0 + (Double(row) + 0.5) * cellSize
        // The grid comes from a box on the globe, so its centres are on it too (to rounding at the poles).
        return projection.unproject(x: x, y: y) ?? projection.origin
    }

    /// PM2.5 at any point: bilinear between the four nearest cell centres, and the edge cells' values beyond the
    /// grid. Never below `minimumValue`, which keeps the A* heuristic admissible on a road graph.
    public func sample(at point: GeoPoint) -> Double {
        let (x, y) = projection.project(point)
        let u = min(max((x - x0) / cellSize - 0.5, 0), Double(columns - 1))
        let v = min(max((y - y0) / cellSize - 0.5, 0), Double(rows - 1))
        let c0 = Int(u.rounded(.down))
        let r0 = Int(v.rounded(.down))
        let c1 = min(c0 + 1, columns - 1)
        let r1 = min(r0 + 1, rows - 1)
        let fu = u - Double(c0)
        let fv = v - Double(r0)
        let south = value(row: r0, column: c0) * (1 - fu) + value(row: r0, column: c1) * fu
        let north = value(row: r1, column: c0) * (1 - fu) + value(row: r1, column: c1) * fu
        return max(minimumValue, south * (1 - fv) + north * fv)
    }
}

/// Readings bucketed in squares as wide as the search radius: a cell looks at the 3 × 3 squares around it, not at
/// every reading.
private struct ReadingBuckets {
    private var buckets: [Int64: [Int]] = [:]
    private let x0: Double
    private let y0: Double
    private let size: Double

    init(points: [(x: Double, y: Double)], x0: Double, y0: Double, size: Double) {
        self.x0 = x0
        self.y0 = y0
        self.size = size
        for (index, point) in points.enumerated() {
            guard let key = key(x: point.x, y: point.y) else { continue }
            buckets[Self.pack(key), default: []].append(index)
        }
    }

    func forEachCandidate(x: Double, y: Double, _ body: (Int) -> Void) {
        guard let (i, j) = key(x: x, y: y) else { return }
        for di in -1...1 {
            for dj in -1...1 {
                guard let indices = buckets[Self.pack((i + di, j + dj))] else { continue }
                for index in indices { body(index) }
            }
        }
    }

    /// `nil` for a point so far away that its bucket number would not fit (it can't be near the grid).
    private func key(x: Double, y: Double) -> (Int, Int)? {
        let i = ((x - x0) / size).rounded(.down)
        let j = ((y - y0) / size).rounded(.down)
        guard abs(i) < 1e9, abs(j) < 1e9 else { return nil }
        return (Int(i), Int(j))
    }

    private static func pack(_ key: (Int, Int)) -> Int64 {
        Int64(key.0) << 32 ^ Int64(UInt32(truncatingIfNeeded: key.1))
    }
}
