/// OpenAQ v3: a location's latest measurements (`GET /v3/locations/{id}/latest`), one per sensor, named by the
/// location's sensor list (`GET /v3/locations/{id}` → `results[0].sensors[].parameter`), as one reading whose index
/// is the US AQI of its PM2.5 and PM10 (docs.openaq.org, "Latest" and "Locations" resources).
public enum OpenAQFeed {
    public static let defaultBase = "https://api.openaq.org"

    /// What the location document says: its name, place and what each of its sensors measures.
    public struct Location: Sendable, Hashable {
        public var id: Int
        public var name: String
        public var place: GeoPoint?
        /// Sensor id → the parameter it measures (`pm25`) and its units (`µg/m³`).
        public var sensors: [Int: Parameter]

        public struct Parameter: Sendable, Hashable {
            public var name: String
            public var units: String

            public init(name: String, units: String) {
                self.name = name
                self.units = units
            }
        }
    }

    /// Reads `GET /v3/locations/{id}`.
    public static func location(_ bytes: [UInt8]) throws(FeedError) -> Location {
        let results = try FeedNode.document(bytes).require("results").array()
        guard let result = results.first else { throw .missing("results[0]: the location is not known") }
        let id = try result.require("id").number()
        var sensors: [Int: Location.Parameter] = [:]
        for sensor in try result.require("sensors").array() {
            let parameter = try sensor.require("parameter")
            sensors[Int(try sensor.require("id").number())] = Location.Parameter(
                name: try parameter.require("name").string(), units: (try? parameter["units"]?.string()) ?? "")
        }
        let name = (try? result["name"]?.string()) ?? ""
        return Location(
            id: Int(id), name: name.isEmpty ? "location \(Int(id))" : name, place: result["coordinates"]?.place(),
            sensors: sensors)
    }

    /// Reads `GET /v3/locations/{id}/latest` for `location`: one reading at the newest measurement's time, with
    /// every known sensor's value as a metric named by its parameter. Sensors the location does not list are left
    /// out; a negative or absurd value is refused (OpenAQ passes on stations' error codes such as -999).
    public static func latest(_ bytes: [UInt8], at location: Location) throws(FeedError) -> FeedParse {
        var rejected: [FeedError] = []
        var metrics: [FeedReading.Metric] = []
        var newest: Timestamp?
        var place = location.place
        for result in try FeedNode.document(bytes).require("results").array() {
            do {
                let sensor = Int(try result.require("sensorsId").number())
                guard let parameter = location.sensors[sensor] else { continue }
                let time = try result.require("datetime").require("utc").timestamp()
                let value = try result.require("value").number(in: FeedReading.plausibleMetric)
                guard !metrics.contains(where: { $0.name == parameter.name }) else { continue }
                metrics.append(FeedReading.Metric(name: parameter.name, value: value))
                if newest.map({ time > $0 }) ?? true { newest = time }
                if place == nil { place = result["coordinates"]?.place() }
            } catch {
                rejected.append(error)
            }
        }
        let pm25 = metrics.first { $0.name == "pm25" }?.value
        let pm10 = metrics.first { $0.name == "pm10" }?.value
        guard let newest, let index = AQI.index(pm25: pm25, pm10: pm10) else {
            rejected.append(.missing("pm25 or pm10 measurement for \(location.name) (location \(location.id))"))
            return FeedParse(rejected: rejected)
        }
        let reading = FeedReading(
            region: location.name, place: place, time: newest, index: Double(index), metrics: metrics)
        return FeedParse(readings: [reading], rejected: rejected)
    }
}
