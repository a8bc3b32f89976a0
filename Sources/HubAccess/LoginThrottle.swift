import HubCore

/// How failed logins are slowed, as a value with no I/O (the clock passed in): per address and per user name, an
/// exponential wait after a few free failures, capped, so that guessing is slow and nobody in the household is
/// locked out for good.
///
/// - An address: 5 failures free, then 1 s, 2 s, 4 s … at most 15 minutes between tries.
/// - A user name: 10 failures free (from anywhere), then 1 s … at most 60 s; an address that logged in as that user
///   in the last 30 days is not held by it, so a stranger hammering "ana" does not keep Ana out.
/// - A success clears the address's and the user's count; what has been quiet for a day is forgotten; at most
///   10,000 addresses and names are remembered (the oldest forgotten first).
public struct LoginThrottle: Sendable {
    struct Record: Sendable {
        var failures = 0
        var until: Timestamp = Timestamp(millisecondsSince1970: 0)
        var last: Timestamp
    }

    var addresses: [String: Record] = [:]
    var users: [String: Record] = [:]
    /// "address user" → when that address last logged in as that user.
    var trusted: [String: Timestamp] = [:]

    public static let addressFree = 5
    public static let addressCap: Int64 = 15 * 60_000
    public static let userFree = 10
    public static let userCap: Int64 = 60_000
    static let forget: Int64 = 86_400_000
    static let trust: Int64 = 30 * 86_400_000
    static let remembered = 10_000

    public init() {}

    /// How long `address` must wait before trying `user` again; nil when it may try now.
    public func wait(address: String, user: String, now: Timestamp) -> Int64? {
        var until = addresses[address]?.until.millisecondsSince1970 ?? 0
        if !isTrusted(address: address, user: user, now: now) {
            until = max(until, users[user]?.until.millisecondsSince1970 ?? 0)
        }
        let wait = until - now.millisecondsSince1970
        return wait > 0 ? wait : nil
    }

    /// Counts a failed login; returns the wait it imposes from now (0 while the failures are free).
    @discardableResult
    public mutating func failed(address: String, user: String, now: Timestamp) -> Int64 {
        prune(now: now)
        let addressWait = Self.count(
            &addresses[address, default: Record(last: now)], free: Self.addressFree,
            cap: Self.addressCap, now: now)
        let userWait = Self.count(
            &users[user, default: Record(last: now)], free: Self.userFree, cap: Self.userCap, now: now)
        return isTrusted(address: address, user: user, now: now) ? addressWait : max(addressWait, userWait)
    }

    /// A login that succeeded: the address and the user start again from nothing.
    public mutating func succeeded(address: String, user: String, now: Timestamp) {
        addresses[address] = nil
        users[user] = nil
        trusted["\(address) \(user)"] = now
        prune(now: now)
    }

    private static func count(_ record: inout Record, free: Int, cap: Int64, now: Timestamp) -> Int64 {
        record.failures += 1
        record.last = now
        guard record.failures > free else { return 0 }
        let wait = min(cap, Int64(1000) << min(30, record.failures - free - 1))
        record.until = now.adding(milliseconds: wait)
        return wait
    }

    private func isTrusted(address: String, user: String, now: Timestamp) -> Bool {
        guard let at = trusted["\(address) \(user)"] else { return false }
        return now.millisecondsSince1970 - at.millisecondsSince1970 < Self.trust
    }

    private mutating func prune(now: Timestamp) {
        let horizon = now.millisecondsSince1970 - Self.forget
        addresses = addresses.filter { $0.value.last.millisecondsSince1970 > horizon || $0.value.until > now }
        users = users.filter { $0.value.last.millisecondsSince1970 > horizon || $0.value.until > now }
        trusted = trusted.filter { now.millisecondsSince1970 - $0.value.millisecondsSince1970 < Self.trust }
        if addresses.count > Self.remembered {
            let oldest = addresses.sorted { $0.value.last < $1.value.last }.prefix(addresses.count - Self.remembered)
            for (address, _) in oldest { addresses[address] = nil }
        }
        if users.count > Self.remembered {
            let oldest = users.sorted { $0.value.last < $1.value.last }.prefix(users.count - Self.remembered)
            for (user, _) in oldest { users[user] = nil }
        }
        if trusted.count > Self.remembered {
            let oldest = trusted.sorted { $0.value < $1.value }.prefix(trusted.count - Self.remembered)
            for (key, _) in oldest { trusted[key] = nil }
        }
    }
}
