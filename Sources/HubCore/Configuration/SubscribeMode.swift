/// How the hub subscribes to its sensors' topics (`sensors.subscribe`).
public enum SubscribeMode: String, Sendable, CaseIterable {
    case auto, each, covering

    /// `auto` covers from this many sensor topics on: below it each topic costs the broker little, and a covering
    /// filter would bring every other message under it (devices that are not sensors) for the hub to drop.
    public static let coveringFrom = 1_000

    /// Whether `count` sensor topics are subscribed to through covering filters.
    public func covers(_ count: Int) -> Bool {
        switch self {
        case .each: false
        case .covering: true
        case .auto: count >= Self.coveringFrom
        }
    }
}
