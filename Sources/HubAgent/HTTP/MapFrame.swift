import Foundation
import HubCore
import HubSupport

/// The ground every map of the dashboard is drawn on (a session's track, a route): places in the equirectangular
/// projection around the middle of what is drawn (`LocalProjection`: metres east and north), fitted to a 640 × 400
/// picture with a margin, north up; with `MapTiles`, the tiles under it, each placed by its own corners (Web Mercator
/// and this projection differ by under 0.1 % across a tile of a few kilometres); a scale bar, a north arrow and the
/// tiles' attribution. The picture holds no script and nothing but the tiles from elsewhere: with no network it is
/// the same map on a plain ground.
struct MapFrame {
    static let width = 640.0
    static let mapHeight = 400.0
    static let margin = 28.0
    /// The smallest extent drawn, in metres: a track of a few metres is not blown up to fill the map.
    static let minimumSpan = 40.0
    /// The most tiles one map asks for (a 640 × 400 map at the zoom `MapTiles.zoom` picks needs at most 20).
    static let maximumTiles = 30

    let projection: LocalProjection
    /// Pixels a metre.
    let scale: Double
    /// The middle of what is drawn, in metres from the projection's origin.
    let middle: (x: Double, y: Double)

    /// Fitted around `places`; `nil` for none.
    init?(around places: [GeoPoint]) {
        guard let box = GeoBoundingBox(around: places) else { return nil }
        let projection = LocalProjection(origin: box.centre)
        self.init(projection: projection, projected: places.map(projection.project))
    }

    /// Fitted around points already projected with `projection`.
    init(projection: LocalProjection, projected: [(x: Double, y: Double)]) {
        self.projection = projection
        let xs = projected.map(\.x)
        let ys = projected.map(\.y)
        let (west, east, south, north) = (xs.min() ?? 0, xs.max() ?? 0, ys.min() ?? 0, ys.max() ?? 0)
        scale = min(
            (Self.width - 2 * Self.margin) / max(east - west, Self.minimumSpan),
            (Self.mapHeight - 2 * Self.margin) / max(north - south, Self.minimumSpan))
        middle = ((west + east) / 2, (south + north) / 2)
    }

    /// The picture's x and y of a point `x` metres east and `y` north of the origin.
    func px(_ x: Double) -> Double { Self.width / 2 + (x - middle.x) * scale }
    func py(_ y: Double) -> Double { Self.mapHeight / 2 - (y - middle.y) * scale }
    func sx(_ x: Double) -> String { Self.format(px(x)) }
    func sy(_ y: Double) -> String { Self.format(py(y)) }
    /// `x,y` of a place, for a polyline.
    func pair(_ place: GeoPoint) -> String {
        let (x, y) = projection.project(place)
        return "\(sx(x)),\(sy(y))"
    }

    /// The `<svg>` opening, the plain ground, the tiles over it, and the north arrow; the caller adds what it draws,
    /// then `finish`.
    func open(title: String, height: Double, tiles: MapTiles?, className: String) -> String {
        var svg = """
            <svg xmlns="http://www.w3.org/2000/svg" class="\(className)" viewBox="0 0 \(Int(Self.width)) \(Int(height))" \
            role="img" aria-label="\(escape(title))">
            <title>\(escape(title))</title>
            <rect width="100%" height="\(Int(Self.mapHeight))" fill="#f8fafc" stroke="#d0d5dd"/>

            """
        if let tiles { svg += self.tiles(tiles) }
        svg += """
            <text x="\(Int(Self.width) - 26)" y="22" font-size="12" font-family="sans-serif" fill="#1d2330">N ↑</text>

            """
        return svg
    }

    /// The tiles covering the map, clipped to it, at the zoom nearest their own size; none when that would be more
    /// than `maximumTiles`.
    func tiles(_ tiles: MapTiles) -> String {
        guard
            let north = projection.unproject(
                x: middle.x - Self.width / 2 / scale, y: middle.y + Self.mapHeight / 2 / scale),
            let south = projection.unproject(
                x: middle.x + Self.width / 2 / scale, y: middle.y - Self.mapHeight / 2 / scale)
        else { return "" }
        let zoom = MapTiles.zoom(pixelsPerMetre: scale, latitude: projection.origin.latitude)
        let side = 1 << zoom
        let (left, top) = MapTiles.tile(of: north, zoom: zoom)
        let (right, bottom) = MapTiles.tile(of: south, zoom: zoom)
        let columns = max(0, Int(left.rounded(.down)))...min(side - 1, Int(right.rounded(.down)))
        let rows = max(0, Int(top.rounded(.down)))...min(side - 1, Int(bottom.rounded(.down)))
        guard columns.count * rows.count <= Self.maximumTiles else { return "" }
        var svg = "<clipPath id=\"map-clip\"><rect width=\"\(Int(Self.width))\" height=\"\(Int(Self.mapHeight))\"/>"
        svg += "</clipPath>\n<g class=\"tiles\" clip-path=\"url(#map-clip)\">\n"
        for row in rows {
            for column in columns {
                let (x0, y0) = projection.project(MapTiles.corner(x: column, y: row, zoom: zoom))
                let (x1, y1) = projection.project(MapTiles.corner(x: column + 1, y: row + 1, zoom: zoom))
                svg += "<image href=\"\(escape(tiles.url(zoom: zoom, x: column, y: row)))\" x=\"\(sx(x0))\" "
                svg += "y=\"\(sy(y0))\" width=\"\(Self.format((x1 - x0) * scale))\" "
                svg += "height=\"\(Self.format((y0 - y1) * scale))\" preserveAspectRatio=\"none\"/>\n"
            }
        }
        return svg + "</g>\n"
    }

    /// The tiles' credit in the map's bottom right corner, on a light band so that it reads over any tile.
    func attribution(_ tiles: MapTiles?) -> String {
        guard let tiles, !tiles.attribution.isEmpty else { return "" }
        let width = Double(tiles.attribution.count) * 6.2 + 8
        let (x, y) = (Self.width - width, Self.mapHeight - 16)
        return """
            <g class="attribution"><rect x="\(Self.format(x))" y="\(Self.format(y))" width="\(Self.format(width))" \
            height="16" fill="#ffffff" fill-opacity=".85"/><text x="\(Self.format(Self.width - 4))" \
            y="\(Self.format(y + 12))" text-anchor="end" font-size="11" font-family="sans-serif" \
            fill="#1d2330">\(escape(tiles.attribution))</text></g>

            """
    }

    /// A bar of 1, 2 or 5 × 10ⁿ metres, at most a quarter of the map's width, in its bottom left corner.
    func scaleBar() -> String {
        let metres = Self.scaleLength(for: Self.width / 4 / scale)
        let length = metres * scale
        let (x, y) = (Self.margin / 2, Self.mapHeight - 14)
        let label =
            metres >= 1000 ? "\(ParticulateReading.trim(metres / 1000)) km" : "\(ParticulateReading.trim(metres)) m"
        return """
            <g class="scale" stroke="#1d2330" stroke-width="2">\
            <line x1="\(Self.format(x))" y1="\(Self.format(y))" x2="\(Self.format(x + length))" y2="\(Self.format(y))"/>\
            <line x1="\(Self.format(x))" y1="\(Self.format(y - 5))" x2="\(Self.format(x))" y2="\(Self.format(y))"/>\
            <line x1="\(Self.format(x + length))" y1="\(Self.format(y - 5))" x2="\(Self.format(x + length))" \
            y2="\(Self.format(y))"/></g>
            <text class="scale-label" x="\(Self.format(x))" y="\(Self.format(y - 8))" font-size="11" \
            font-family="sans-serif" fill="#1d2330">\(label)</text>

            """
    }

    /// The longest 1, 2 or 5 × 10ⁿ metres not over `metres` (1 m at least).
    static func scaleLength(for metres: Double) -> Double {
        guard metres > 1 else { return 1 }
        let power = pow(10, (log10(metres)).rounded(.down))
        return [5, 2, 1].map { $0 * power }.first { $0 <= metres } ?? power
    }

    static func format(_ value: Double) -> String { FixedDecimal.text(value, places: 1) }
}
