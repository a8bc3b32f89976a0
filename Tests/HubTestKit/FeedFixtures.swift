/// Feed documents shaped exactly like the services' documented responses (data.gov.sg's v1 and v2 PSI and PM2.5
/// endpoints, OpenAQ v3's location and latest), with the values a test chooses.
public enum FeedFixtures {
    /// NEA's regions and their label locations, as data.gov.sg lists them (national at 0,0).
    public static let regions: [(name: String, latitude: Double, longitude: Double)] = [
        ("west", 1.35735, 103.7), ("national", 0, 0), ("east", 1.35735, 103.94), ("central", 1.35735, 103.82),
        ("south", 1.29587, 103.82), ("north", 1.41803, 103.82),
    ]

    private static func metadata(_ regions: [String], v2: Bool) -> String {
        let label = v2 ? "labelLocation" : "label_location"
        return regions.map { name in
            let region = Self.regions.first { $0.name == name }!
            let shown = v2 ? name.capitalized : name
            return
                #"{"name":"\#(shown)","\#(label)":{"latitude":\#(region.latitude),"longitude":\#(region.longitude)}}"#
        }.joined(separator: ",")
    }

    private static func values(_ values: [String: Double], v2: Bool) -> String {
        let order = regions.map(\.name).filter { values[$0] != nil }
        return "{" + order.map { #""\#(v2 ? $0.capitalized : $0)":\#(format(values[$0]!))"# }.joined(separator: ",")
            + "}"
    }

    private static func format(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e9 ? String(Int(value)) : String(value)
    }

    /// The PSI document for one hour: `psi` is each region's 24-hour PSI (national included); the sub-indexes are
    /// derived from it so that every metric NEA publishes is there.
    public static func psi(
        hour: String = "2020-12-15T08:00:00+08:00", updated: String = "2020-12-15T08:08:53+08:00",
        psi: [String: Double] = ["west": 54, "national": 57, "east": 48, "central": 57, "south": 50, "north": 52],
        v2: Bool = false
    ) -> String {
        func scaled(_ factor: Double) -> [String: Double] { psi.mapValues { ($0 * factor).rounded() } }
        let metrics: [(String, [String: Double])] = [
            ("o3_sub_index", scaled(0.2)), ("pm10_twenty_four_hourly", scaled(0.6)), ("pm10_sub_index", scaled(0.5)),
            ("co_sub_index", scaled(0.1)), ("pm25_twenty_four_hourly", scaled(0.3)), ("so2_sub_index", scaled(0.05)),
            ("co_eight_hour_max", psi.mapValues { _ in 0.41 }), ("no2_one_hour_max", scaled(0.3)),
            ("so2_twenty_four_hourly", scaled(0.04)), ("pm25_sub_index", psi), ("psi_twenty_four_hourly", psi),
            ("o3_eight_hour_max", scaled(0.4)),
        ]
        let readings = metrics.map { #""\#($0.0)":\#(values($0.1, v2: v2))"# }.joined(separator: ",")
        // The metadata lists every region whatever the readings hold (a test leaves one out of them).
        let regionNames = regions.map(\.name)
        if v2 {
            return #"""
                {"code":0,"errorMsg":"","data":{"regionMetadata":[\#(metadata(regionNames, v2: true))],"items":[{"date":"\#(hour.prefix(10))","updatedTimestamp":"\#(updated)","timestamp":"\#(hour)","readings":{\#(readings)}}]}}
                """#
        }
        return #"""
            {"region_metadata":[\#(metadata(regionNames, v2: false))],"items":[{"timestamp":"\#(hour)","update_timestamp":"\#(updated)","readings":{\#(readings)}}],"api_info":{"status":"healthy"}}
            """#
    }

    /// The PM2.5 document for one hour: the five regions (no national) and `pm25_one_hourly`.
    public static func pm25(
        hour: String = "2020-12-15T08:00:00+08:00", updated: String = "2020-12-15T08:08:53+08:00",
        pm25: [String: Double] = ["west": 12, "east": 9, "central": 14, "south": 11, "north": 10], v2: Bool = false
    ) -> String {
        let names = ["west", "east", "central", "south", "north"]
        let readings = #""pm25_one_hourly":\#(values(pm25, v2: v2))"#
        if v2 {
            return #"""
                {"code":0,"errorMsg":"","data":{"regionMetadata":[\#(metadata(names, v2: true))],"items":[{"date":"\#(hour.prefix(10))","updatedTimestamp":"\#(updated)","timestamp":"\#(hour)","readings":{\#(readings)}}]}}
                """#
        }
        return #"""
            {"region_metadata":[\#(metadata(names, v2: false))],"items":[{"timestamp":"\#(hour)","update_timestamp":"\#(updated)","readings":{\#(readings)}}],"api_info":{"status":"healthy"}}
            """#
    }

    /// A feed in a shape of its own, for the generic JSON format (`items: stations`, `region: id`, `time: at`,
    /// `value: aqi`, `latitude: lat`, `longitude: lon`, `metrics: {pm25: pm.pm25}`): two good stations at `hour` of
    /// 1 May 2024 UTC (one timed in ISO 8601, one in seconds since 1970, its index a string), then three bad items:
    /// a bad time, an absurd index, no region.
    public static func stations(hour: Int = 10, north: Double = 42, harbour: Double = 61) -> String {
        let iso = "2024-05-01T\(hour < 10 ? "0" : "")\(hour):00:00Z"
        let epoch = 1_714_521_600 + hour * 3600
        return #"""
            {"stations":[
              {"id":"North Hill","at":"\#(iso)","aqi":\#(format(north)),"pm":{"pm25":9.5},"lat":52.1,"lon":5.18},
              {"id":"harbour","at":\#(epoch),"aqi":"\#(format(harbour))","pm":{"pm25":18}},
              {"id":"broken","at":"soon","aqi":12},
              {"id":"wild","at":"\#(iso)","aqi":99999},
              {"at":"\#(iso)","aqi":3}
            ]}
            """#
    }

    /// `GET /v3/locations/2178` as documented: one result with its sensors and their parameters.
    public static let openAQLocation = #"""
        {"meta":{"name":"openaq-api","website":"/","page":1,"limit":100,"found":1},"results":[{"id":2178,"name":"Del Norte","locality":"Albuquerque","timezone":"America/Denver","country":{"id":155,"code":"US","name":"United States"},"owner":{"id":4,"name":"Unknown Governmental Organization"},"provider":{"id":119,"name":"AirNow"},"isMobile":false,"isMonitor":true,"instruments":[{"id":2,"name":"Government Monitor"}],"sensors":[{"id":3917,"name":"no2 ppm","parameter":{"id":7,"name":"no2","units":"ppm","displayName":"NO₂"}},{"id":3916,"name":"o3 ppm","parameter":{"id":10,"name":"o3","units":"ppm","displayName":"O₃"}},{"id":3920,"name":"pm25 µg/m³","parameter":{"id":2,"name":"pm25","units":"µg/m³","displayName":"PM2.5"}},{"id":25227,"name":"pm10 µg/m³","parameter":{"id":1,"name":"pm10","units":"µg/m³","displayName":"PM10"}}],"coordinates":{"latitude":35.1353,"longitude":-106.584702},"licenses":null,"bounds":[-106.584702,35.1353,-106.584702,35.1353],"distance":null,"datetimeFirst":{"utc":"2016-03-06T19:00:00Z","local":"2016-03-06T12:00:00-07:00"},"datetimeLast":{"utc":"2024-05-01T16:00:00Z","local":"2024-05-01T10:00:00-06:00"}}]}
        """#

    /// `GET /v3/locations/2178/latest` as documented: one result per sensor.
    public static func openAQLatest(
        utc: String = "2024-05-01T16:00:00Z", pm25: Double = 123.6, pm10: Double = 261.8, o3: Double = 0.031
    ) -> String {
        func result(_ sensor: Int, _ value: Double) -> String {
            #"{"datetime":{"utc":"\#(utc)","local":"2024-05-01T10:00:00-06:00"},"value":\#(value),"coordinates":{"latitude":35.1353,"longitude":-106.584702},"sensorsId":\#(sensor),"locationsId":2178}"#
        }
        return #"""
            {"meta":{"name":"openaq-api","website":"/","page":1,"limit":100,"found":4},"results":[\#(result(3920, pm25)),\#(result(3916, o3)),\#(result(25227, pm10)),\#(result(3917, 0.012))]}
            """#
    }
}
