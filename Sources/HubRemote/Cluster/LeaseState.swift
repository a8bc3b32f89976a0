/// What an agent may believe about a lease from its own clock alone: granted by a renewal it sent at `sent`, the
/// lease is its until `sent + lease − margin`, whatever happens to the database or the network meanwhile. The
/// database gives the lease to another agent only once `expires`, set by the server at or after `sent`, has passed:
/// so two agents never act at once unless their clocks' rates differ by more than `margin` over one lease.
///
/// A value type with no I/O: `LeaseKeeper` feeds it what the database said.
public struct LeaseState: Sendable, Hashable {
    public let lease: Duration
    /// Given up early: the holder stops this long before the database could hand the lease on.
    public let margin: Duration
    public private(set) var heldUntil: ContinuousClock.Instant?
    /// The lease's generation: it changes each time another agent takes it, so work can be fenced with it.
    public private(set) var epoch: Int64?

    public init(lease: Duration) {
        self.lease = lease
        margin = lease / 5
    }

    /// The database's answer to a renewal sent at `sent`: granted (with its epoch) or held by another agent.
    public mutating func renewed(sentAt sent: ContinuousClock.Instant, epoch: Int64?) {
        guard let epoch else {
            heldUntil = nil
            self.epoch = nil
            return
        }
        heldUntil = sent + lease - margin
        self.epoch = epoch
    }

    /// Given up (a graceful stop): held no more, at once.
    public mutating func release() {
        heldUntil = nil
        epoch = nil
    }

    /// A renewal that failed or got no answer says nothing: the lease stays held until the time it was good for.
    public func isHeld(at now: ContinuousClock.Instant) -> Bool {
        guard let heldUntil else { return false }
        return now < heldUntil
    }
}
