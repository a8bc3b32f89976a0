/// When a burst of live messages may have overflowed the broker's queue for hubd, so that the subscriptions service
/// subscribes again for the newest retained statuses once it is over (`Subscriptions.watchFloods`). No I/O: it is
/// told of every `step`th live message (`Ingest.floodBell`) and answers whether a flood is under way.
///
/// Mosquitto queues what it can't send hubd beyond the messages in flight and drops what comes past
/// `max_queued_messages` (1,000 by default); hubd acknowledges its messages a shared `fsync` at a time, once 64 have
/// come or `sensors.sync_delay` (10 s) has passed, so the 200 the broker may have in flight to hubd (its Receive
/// Maximum) fill, and messages queue behind them, only when they come faster than 20 a second or hubd falls behind:
/// a slower stream never fills that queue, however long it runs. So a flood is `step` live messages within `window`
/// (10 a second or faster), told by two rings that far apart at most: any 1,001 messages in a row cross two
/// multiples of `step`, so a burst of 1,001 at that rate is always seen, and some of 501 to 1,000 are (a second pass
/// more than needed costs a replay of the retained statuses, no more). (Before, the watch looked once a second
/// whenever messages came and took any 1,000 without a quiet second between them for a flood: at a home's 4
/// statuses a second, a timer a second waking three threads, and a "flood" each time the trickle paused.)
struct FloodWatch: Sendable {
    /// Every how many live messages the watch is told: half Mosquitto's default `max_queued_messages`.
    static let step = 500
    /// Within how long `step` messages are a flood.
    static let window = Duration.seconds(50)

    /// The last step the watch saw reached (the count over `step`), and when.
    private var last: (step: Int, at: ContinuousClock.Instant)?

    /// `count` live messages had come at `now`: whether they reached a further step within `window` of the last one
    /// seen. Rings that come faster than the watch wakes are one wake (`Doorbell`), so what counts is the step
    /// reached, not the count: the step before may have been seen anywhere in it (a ring left from before the watch
    /// waited), so fewer than `step` messages can make a flood then, and no more than `step` are ever missed.
    mutating func rang(count: Int, at now: ContinuousClock.Instant) -> Bool {
        let reached = count / Self.step
        guard let last else {
            self.last = (reached, now)
            return false
        }
        guard reached > last.step else { return false }
        self.last = (reached, now)
        return now - last.at <= Self.window
    }

    /// Whether a second with `messages` in it was a quiet one: fewer than a flood's rate (`step` within `window`,
    /// 10 a second). The flood is over then, or there was none; a home's trickle (4 a second) is quiet, so it never
    /// holds back the second pass. (A quiet second used to be one with no message at all: at a home's steady 4 a
    /// second there never was one, so the watch, which begins with a quiet second, never began, and its look once a
    /// second went on for as long as hubd ran.)
    static func isQuiet(_ messages: Int) -> Bool { messages * Int(window.components.seconds) < step }

    /// The flood has been answered: the next one is counted afresh.
    mutating func reset() { last = nil }
}
