/// A feed in a JSON shape of its own, read with value paths (the device format's path language): where the items
/// are, and in each item the region, the time, the index and the other numbers.
///
/// For `{"stations":[{"id":"north","at":"2024-05-01T10:00:00Z","aqi":42,"pm":{"pm25":9.5}}]}`: `items: stations`,
/// `region: id`, `time: at`, `value: aqi`, `metrics: {pm25: pm.pm25}`.
public struct JSONFeedFormat: Sendable, Hashable {
    /// Where the list (or object) of items is; `nil`: the document is the list, or the one item.
    public var items: ValuePath?
    /// Where an item's region name is; `nil`: every item is `fixedRegion`.
    public var region: ValuePath?
    /// The region of items that don't name one.
    public var fixedRegion: String?
    /// Where an item's time is: ISO 8601 text, or seconds since 1970.
    public var time: ValuePath
    /// Where an item's index is.
    public var value: ValuePath
    public var latitude: ValuePath?
    public var longitude: ValuePath?
    /// Other numbers to keep, by name.
    public var metrics: [NamedPath]

    /// A metric's name and where it is in an item.
    public struct NamedPath: Sendable, Hashable {
        public var name: String
        public var path: ValuePath

        public init(name: String, path: ValuePath) {
            self.name = name
            self.path = path
        }
    }

    public init(
        items: ValuePath? = nil, region: ValuePath? = nil, fixedRegion: String? = nil, time: ValuePath,
        value: ValuePath, latitude: ValuePath? = nil, longitude: ValuePath? = nil, metrics: [NamedPath] = []
    ) {
        self.items = items
        self.region = region
        self.fixedRegion = fixedRegion
        self.time = time
        self.value = value
        self.latitude = latitude
        self.longitude = longitude
        self.metrics = metrics
    }

    /// Reads one document: an item without its region, time or index, or with an absurd number, is refused on its
    /// own; a document without the items throws.
    public func parse(_ bytes: [UInt8]) throws(FeedError) -> FeedParse {
        let document = try FeedNode.document(bytes)
        var list = document
        if let items {
            guard let found = items.find(in: document.tree) else { throw .missing(items.description) }
            list = FeedNode(tree: found.value, path: items.description)
        }
        let elements: [(node: FeedNode, key: String?)]
        switch list.tree {
        case .array: elements = try list.array().map { ($0, nil) }
        case .object where items != nil && region == nil && fixedRegion == nil:
            // An object of items keyed by region (`{"north":{…},"south":{…}}`).
            elements = try list.members().map { ($0.node, $0.key) }
        default: elements = [(list, nil)]
        }
        var result = FeedParse()
        for element in elements {
            do {
                result.readings.append(try reading(element.node, keyedAs: element.key))
            } catch {
                result.rejected.append(error)
            }
        }
        return result
    }

    private func find(_ path: ValuePath, in item: FeedNode) throws(FeedError) -> FeedNode {
        guard let found = path.find(in: item.tree) else { throw .missing("\(item.path): \(path)") }
        return FeedNode(tree: found.value, path: "\(item.path.isEmpty ? "" : item.path + ": ")\(path)")
    }

    private func reading(_ item: FeedNode, keyedAs key: String?) throws(FeedError) -> FeedReading {
        let region: String
        if let path = self.region {
            region = try find(path, in: item).string()
        } else if let name = fixedRegion ?? key {
            region = name
        } else {
            throw .missing("region: set a region path or a fixed region")
        }
        guard !region.isEmpty else { throw .missing("\(item.path): region name") }
        let time = try find(time, in: item).timestamp(epochNumbers: true)
        let index = try find(value, in: item).number(in: FeedReading.plausibleIndex)
        var place: GeoPoint?
        if let latitude, let longitude,
            let lat = try? find(latitude, in: item).number(), let lon = try? find(longitude, in: item).number(),
            lat != 0 || lon != 0
        {
            place = GeoPoint(latitude: lat, longitude: lon)
        }
        var metrics: [FeedReading.Metric] = []
        for metric in self.metrics {
            // A metric the item lacks is left out; one that is there must be a plausible number.
            guard let found = metric.path.find(in: item.tree), found.value != .null else { continue }
            let node = FeedNode(tree: found.value, path: "\(item.path): \(metric.path)")
            metrics.append(.init(name: metric.name, value: try node.number(in: FeedReading.plausibleMetric)))
        }
        return FeedReading(region: region, place: place, time: time, index: index, metrics: metrics)
    }
}
