import Foundation

// A road file read as it streams by (the project's JSONReader), not as a tree of Foundation objects: an
// OpenStreetMap extract of tens of megabytes then costs its bytes and the network, not forty times its size (the
// route benchmark measured JSONSerialization's tree at about 40 × the file).
extension RoadNetwork {
    /// The LineStrings of a FeatureCollection, a Feature or a bare geometry (MultiLineStrings' parts too); other
    /// geometries (points of interest in the same extract) are passed over.
    static func lines(inGeoJSON data: Data) throws(RouteError) -> [[GeoPoint]] {
        let result = data.withUnsafeBytes { raw -> Result<[[GeoPoint]], JSONSyntaxError> in
            var reader = JSONReader(raw.bindMemory(to: UInt8.self))
            var lines: [[GeoPoint]] = []
            do throws(JSONSyntaxError) {
                guard reader.nextKind == "an object" else {
                    throw reader.error("expected a GeoJSON object, found \(reader.nextKind)")
                }
                try readObject(&reader, into: &lines)
                try reader.finish()
                return .success(lines)
            } catch {
                return .failure(error)
            }
        }
        switch result {
        case .success(let lines): return lines
        case .failure(let error): throw .invalidRoads("\(error)")
        }
    }

    /// A position list, or a list of them, as read before the object's `type` says which.
    private enum Coordinates {
        case number(Double)
        case list([Coordinates])
    }

    private static func readObject(_ reader: inout JSONReader, into lines: inout [[GeoPoint]])
        throws(JSONSyntaxError)
    {
        let start = reader.index
        var type: String?
        var coordinates: Coordinates?
        var features = false
        try reader.readObject { key, reader throws(JSONSyntaxError) in
            switch key {
            case "type": type = try reader.string(at: "type")
            case "features":
                features = true
                try reader.readArray { reader throws(JSONSyntaxError) in try readObject(&reader, into: &lines) }
            case "geometries":
                try reader.readArray { reader throws(JSONSyntaxError) in try readObject(&reader, into: &lines) }
            case "geometry":
                // A feature without geometry is allowed by RFC 7946 (null); it has no road.
                if reader.nextIsNull { try reader.readNull() } else { try readObject(&reader, into: &lines) }
            case "coordinates": coordinates = try readCoordinates(&reader)
            default: try reader.skipValue()
            }
        }
        guard let type else { throw reader.error("a GeoJSON object without a \"type\"", at: start) }
        switch type {
        case "FeatureCollection" where !features:
            throw reader.error("a FeatureCollection without \"features\"", at: start)
        case "LineString":
            lines.append(try positions(coordinates, reader, start))
        case "MultiLineString":
            guard case .list(let parts)? = coordinates else {
                throw reader.error("a MultiLineString without \"coordinates\"", at: start)
            }
            for part in parts { lines.append(try positions(part, reader, start)) }
        default:
            break
        }
    }

    private static func readCoordinates(_ reader: inout JSONReader) throws(JSONSyntaxError) -> Coordinates {
        guard reader.nextKind == "a list" else {
            return .number(try reader.optionalDouble(at: "coordinates") ?? .nan)
        }
        var items: [Coordinates] = []
        try reader.readArray { reader throws(JSONSyntaxError) in items.append(try readCoordinates(&reader)) }
        return .list(items)
    }

    private static func positions(_ coordinates: Coordinates?, _ reader: JSONReader, _ at: Int)
        throws(JSONSyntaxError) -> [GeoPoint]
    {
        guard case .list(let list)? = coordinates else {
            throw reader.error("a LineString without \"coordinates\"", at: at)
        }
        var points: [GeoPoint] = []
        points.reserveCapacity(list.count)
        for item in list {
            guard case .list(let pair) = item, pair.count >= 2, case .number(let longitude) = pair[0],
                case .number(let latitude) = pair[1], let point = GeoPoint(latitude: latitude, longitude: longitude)
            else { throw reader.error("a position that is not [longitude, latitude] in range", at: at) }
            points.append(point)
        }
        return points
    }
}
