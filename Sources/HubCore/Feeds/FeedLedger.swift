/// What the feeds have published: for each feed and region, the feed timestamp of the newest reading published.
/// A reading whose timestamp is not newer — a repeated poll, a document served again after a restart, an older
/// one, a correction of an hour already published — is not published again, so history gets no second row and
/// the notifiers no second message. Kept in `feeds.json` in the state directory.
public struct FeedLedger: Sendable, Hashable {
    public static let fileName = "feeds.json"

    /// Feed name → region → the newest published reading's feed timestamp.
    private var published: [String: [String: Timestamp]] = [:]

    public init() {}

    /// Whether a reading is one to publish.
    public enum Verdict: String, Sendable, Hashable {
        /// Newer than anything published for its region.
        case new
        /// The reading already published for its region and time.
        case repeated
        /// Older than the one published: the feed's timestamps went backwards.
        case older
    }

    public func verdict(feed: String, region: String, time: Timestamp) -> Verdict {
        guard let last = published[feed]?[region] else { return .new }
        if time == last { return .repeated }
        return time < last ? .older : .new
    }

    /// Notes that the reading for `region` at `time` was published.
    public mutating func record(feed: String, region: String, time: Timestamp) {
        published[feed, default: [:]][region] = time
    }

    /// Readings published in total, for a feed.
    public func regions(of feed: String) -> Int { published[feed]?.count ?? 0 }

    /// `{"feeds":{"<feed>":{"<region>":"<time>"}}}`, sorted, so an unchanged ledger writes the same bytes.
    public var json: [UInt8] {
        var writer = JSONWriter(capacity: 256)
        var first = true
        writer.raw("{")
        writer.key("feeds", first: &first)
        writer.raw("{")
        var firstFeed = true
        for feed in published.keys.sorted() {
            writer.key(feed, first: &firstFeed)
            writer.raw("{")
            var firstRegion = true
            for (region, time) in published[feed]!.sorted(by: { $0.key < $1.key }) {
                writer.key(region, first: &firstRegion)
                writer.timestamp(time)
            }
            writer.raw("}")
        }
        writer.raw("}}\n")
        return writer.bytes
    }

    /// Reads what `json` wrote; anything that is not is an error naming it.
    public init(json bytes: [UInt8]) throws(FeedError) {
        let document = try FeedNode.document(bytes, name: FeedLedger.fileName)
        for (feed, regions) in try document.require("feeds").members() {
            for (region, time) in try regions.members() {
                published[feed, default: [:]][region] = try time.timestamp()
            }
        }
    }
}
