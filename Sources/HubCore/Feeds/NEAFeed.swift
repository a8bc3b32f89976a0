/// Singapore's National Environment Agency air-quality readings from data.gov.sg: the PSI document and the PM2.5
/// one, each in either generation of the API, merged into one reading per region and hour.
///
/// v1 (`api.data.gov.sg/v1/environment/psi`, `…/pm25`):
/// `{"region_metadata":[{"name","label_location":{latitude,longitude}}],"items":[{"timestamp","update_timestamp",
/// "readings":{"<metric>":{"<region>":n}}}],"api_info":{…}}`.
/// v2 (`api-open.data.gov.sg/v2/real-time/api/psi`, `…/pm25`): the same inside `{"code":0,"errorMsg":"","data":{…}}`,
/// with `regionMetadata`, `labelLocation`, `updatedTimestamp`, and region names that may be capitalised.
public enum NEAFeed {
    /// The v1 documents, which need no key.
    public static let defaultPSI = "https://api.data.gov.sg/v1/environment/psi"
    public static let defaultPM25 = "https://api.data.gov.sg/v1/environment/pm25"
    /// The metric that is the reading's index: the 24-hour PSI.
    public static let indexMetric = "psi_twenty_four_hourly"

    /// Reads the documents (the PSI one and, usually, the PM2.5 one) and merges them per region and `timestamp`.
    /// A document that can't be read at all throws; a region missing or with an absurd value is refused on its own.
    public static func parse(_ documents: [[UInt8]]) throws(FeedError) -> FeedParse {
        var places: [String: GeoPoint] = [:]
        var regions: [String] = []
        var merged: [Key: Partial] = [:]
        var rejected: [FeedError] = []
        for bytes in documents {
            let body = try unwrap(try FeedNode.document(bytes))
            for entry in try body.require("region_metadata", "regionMetadata").array() {
                let name = try entry.require("name").string().lowercased()
                if !regions.contains(name) { regions.append(name) }
                if let place = entry["label_location", "labelLocation"]?.place() { places[name] = place }
            }
            let items = try body.require("items").array()
            guard !items.isEmpty else { throw .missing("\(body.path.isEmpty ? "" : body.path + ".")items[0]") }
            for item in items {
                let time = try item.require("timestamp").timestamp()
                let updated = try item["update_timestamp", "updatedTimestamp"]?.timestamp()
                for (metric, values) in try item.require("readings").members() {
                    // A null is a value the feed does not have this hour: left out, not refused.
                    for (region, value) in try values.members() where value.tree != .null {
                        let key = Key(region: region.lowercased(), time: time)
                        merged[key, default: Partial()].add(metric, value, updated: updated)
                    }
                }
            }
        }
        // The hours the PSI document has; a PM2.5 reading for another hour has no index to go with.
        let hours = Set(merged.filter { $0.value.values[indexMetric] != nil }.map(\.key.time)).sorted()
        guard !hours.isEmpty else { throw .missing("readings.\(indexMetric) in any item") }
        var readings: [FeedReading] = []
        for time in hours {
            for region in regions where merged[Key(region: region, time: time)]?.values[indexMetric] == nil {
                rejected.append(.missing("readings.\(indexMetric).\(region) for \(time)"))
            }
            for (key, partial) in merged where key.time == time && partial.values[indexMetric] != nil {
                do {
                    readings.append(try partial.reading(region: key.region, place: places[key.region], time: time))
                } catch {
                    rejected.append(error)
                }
            }
        }
        readings.sort { ($0.time, $0.region) < ($1.time, $1.region) }
        return FeedParse(readings: readings, rejected: rejected)
    }

    /// The body of a v2 envelope (after checking its `code`), or the v1 document itself.
    static func unwrap(_ document: FeedNode) throws(FeedError) -> FeedNode {
        guard let code = document["code"], document["data"] != nil || document["errorMsg"] != nil else {
            return document
        }
        let number = try code.number()
        guard number == 0 else {
            let message = (try? document["errorMsg"]?.string()) ?? "no errorMsg"
            throw .service("code \(ValueFormat().format(number)): \(message)")
        }
        return try document.require("data")
    }

    struct Key: Hashable {
        var region: String
        var time: Timestamp
    }

    /// One region and hour's numbers as they are gathered from the documents.
    struct Partial {
        var values: [String: FeedNode] = [:]
        var updated: Timestamp?

        mutating func add(_ metric: String, _ value: FeedNode, updated: Timestamp?) {
            values[metric] = value
            if let updated, self.updated.map({ updated > $0 }) ?? true { self.updated = updated }
        }

        func reading(region: String, place: GeoPoint?, time: Timestamp) throws(FeedError) -> FeedReading {
            let index = try values[indexMetric]!.number(in: FeedReading.plausibleIndex)
            var metrics: [FeedReading.Metric] = []
            for (name, node) in values where name != indexMetric {
                metrics.append(FeedReading.Metric(name: name, value: try node.number(in: FeedReading.plausibleMetric)))
            }
            return FeedReading(
                region: region, place: place, time: time, updated: updated, index: index, metrics: metrics)
        }
    }
}
