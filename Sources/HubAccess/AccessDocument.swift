import Foundation
import HubCore

/// What a person or a program may do over HTTP, from least to most.
public enum Access: Int, Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    /// Look: the sensors, events, alerts, silences, charts, metrics.
    case read = 1
    /// Act on alerts: acknowledge, snooze, silence, expire a silence; register a phone for push; start or stop a
    /// mobile sensor's session.
    case act = 2
    /// Manage the hub: add and remove sensors and devices.
    case manage = 3

    public static func < (a: Access, b: Access) -> Bool { a.rawValue < b.rawValue }

    public var description: String {
        switch self {
        case .read: "read"
        case .act: "act (member or write)"
        case .manage: "manage (admin)"
        }
    }
}

/// A household member's role: viewers look, members act, admins manage.
public enum Role: String, Sendable, Hashable, Codable, CaseIterable {
    case viewer, member, admin

    public var access: Access {
        switch self {
        case .viewer: .read
        case .member: .act
        case .admin: .manage
        }
    }
}

/// An API token's scope: read, write (what a member may do), admin.
public enum Scope: String, Sendable, Hashable, Codable, CaseIterable {
    case read, write, admin

    public var access: Access {
        switch self {
        case .read: .read
        case .write: .act
        case .admin: .manage
        }
    }
}

/// `access.json` in the state directory (mode 0600): the household's accounts, the API tokens and the browsers
/// logged in. Passwords are argon2id hashes, tokens and sessions SHA-256 hashes of their secrets: a copy of the file
/// lets nobody in. `hubctl users` and `hubctl tokens` edit it under a lock whether or not hubd runs; hubd reads it
/// again whenever it changes, so a removed user or a revoked token is refused from the next request.
public struct AccessDocument: Sendable, Codable, Equatable {
    public var schemaVersion = 1
    public var users: [User] = []
    public var tokens: [APIToken] = []
    public var sessions: [LoginSession] = []

    public init() {}

    public struct User: Sendable, Codable, Equatable {
        public var name: String
        public var role: Role
        /// The argon2id hash (`PasswordHash`).
        public var password: String
        public var created: Timestamp
        public var passwordChanged: Timestamp
    }

    public struct APIToken: Sendable, Codable, Equatable {
        /// 8 hex digits, the token's public part: `shub_<id>_<secret>`.
        public var id: String
        public var name: String
        public var scope: Scope
        /// SHA-256 of the whole token, in hex.
        public var hash: String
        public var created: Timestamp
        public var createdBy: String
        public var expires: Timestamp?
    }

    public struct LoginSession: Sendable, Codable, Equatable {
        /// 8 hex digits, the cookie's public part: `<id>.<secret>`.
        public var id: String
        /// SHA-256 of the whole cookie value, in hex.
        public var hash: String
        public var user: String
        public var created: Timestamp
        /// Written at most once an hour (`AccessDocument.seenEvery`): an idle session ends after `idle`.
        public var lastSeen: Timestamp
        /// Where it logged in from, and with what, for the list a person revokes from.
        public var address: String
        public var agent: String
    }

    /// A session ends after this long without a request…
    public static let idle: Int64 = 30 * 86_400_000
    /// …and this long after its login, however used.
    public static let absolute: Int64 = 180 * 86_400_000
    /// How stale a session's `lastSeen` may be before it is written again.
    public static let seenEvery: Int64 = 3_600_000

    /// A user's or a token's name: 1–32 of `a-z 0-9 . _ -`, starting with a letter or digit.
    public static func checkName(_ name: String, what: String) throws(AccessError) {
        let allowed = Set("abcdefghijklmnopqrstuvwxyz0123456789._-")
        guard (1...32).contains(name.count), name.allSatisfy({ allowed.contains($0) }),
            let first = name.first, first.isLetter || first.isNumber
        else {
            throw .invalid(
                "'\(name)' is not a \(what) name: 1 to 32 lowercase letters, digits, '.', '_' or '-', starting with a "
                    + "letter or digit")
        }
    }

    public func user(named name: String) -> User? { users.first { $0.name == name } }

    public var admins: Int { users.filter { $0.role == .admin }.count }

    // MARK: - Users

    /// Adds a user; `passwordHash` is made by the caller (`PasswordHash.make`), outside the file's lock.
    public mutating func addUser(_ name: String, role: Role, passwordHash: String, now: Timestamp) throws(AccessError) {
        try Self.checkName(name, what: "user")
        guard user(named: name) == nil else { throw .exists("there is already a user '\(name)'") }
        users.append(User(name: name, role: role, password: passwordHash, created: now, passwordChanged: now))
        users.sort { $0.name < $1.name }
    }

    /// Removes a user and ends their sessions (hubctl, the local administrator, can always make another admin).
    public mutating func removeUser(_ name: String) throws(AccessError) {
        guard let index = users.firstIndex(where: { $0.name == name }) else { throw .unknown("no user '\(name)'") }
        users.remove(at: index)
        sessions.removeAll { $0.user == name }
    }

    /// Sets a password (and ends the user's sessions but `keep`, the one that changed it).
    public mutating func setPassword(_ name: String, hash: String, now: Timestamp, keep: String? = nil)
        throws(AccessError)
    {
        guard let index = users.firstIndex(where: { $0.name == name }) else { throw .unknown("no user '\(name)'") }
        users[index].password = hash
        users[index].passwordChanged = now
        sessions.removeAll { $0.user == name && $0.id != keep }
    }

    public mutating func setRole(_ name: String, role: Role) throws(AccessError) {
        guard let index = users.firstIndex(where: { $0.name == name }) else { throw .unknown("no user '\(name)'") }
        users[index].role = role
    }

    // MARK: - Tokens

    /// Adds a token; returns the token itself, which is shown once and kept only as its hash.
    public mutating func addToken(
        named name: String, scope: Scope, createdBy: String, expires: Timestamp?, now: Timestamp
    ) throws(AccessError) -> String {
        try Self.checkName(name, what: "token")
        guard !tokens.contains(where: { $0.name == name }) else { throw .exists("there is already a token '\(name)'") }
        var id = Secrets.randomID()
        while tokens.contains(where: { $0.id == id }) { id = Secrets.randomID() }
        // 24 random bytes: 192 bits.
        let token = "shub_\(id)_\(Secrets.randomText(bytes: 24))"
        tokens.append(
            APIToken(
                id: id, name: name, scope: scope, hash: Secrets.digest(token), created: now, createdBy: createdBy,
                expires: expires))
        tokens.sort { $0.name < $1.name }
        return token
    }

    public mutating func revokeToken(_ nameOrID: String) throws(AccessError) {
        let before = tokens.count
        tokens.removeAll { $0.name == nameOrID || $0.id == nameOrID }
        guard tokens.count < before else { throw .unknown("no token '\(nameOrID)'") }
    }

    /// The token `text` names, if it is one of these and has not expired.
    public func token(_ text: String, now: Timestamp) -> APIToken? {
        let parts = text.split(separator: "_", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == "shub", let found = tokens.first(where: { $0.id == parts[1] }) else {
            return nil
        }
        guard Secrets.sameDigest(Secrets.digest(text), found.hash) else { return nil }
        if let expires = found.expires, expires <= now { return nil }
        return found
    }

    // MARK: - Sessions

    /// Opens a session for `user`; returns the cookie's value, kept only as its hash.
    public mutating func openSession(user: String, address: String, agent: String, now: Timestamp) -> String {
        var id = Secrets.randomID()
        while sessions.contains(where: { $0.id == id }) { id = Secrets.randomID() }
        let cookie = "\(id).\(Secrets.randomText(bytes: 32))"
        sessions.append(
            LoginSession(
                id: id, hash: Secrets.digest(cookie), user: user, created: now, lastSeen: now,
                address: String(address.prefix(64)), agent: String(agent.prefix(120))))
        return cookie
    }

    /// The session `cookie` names, if it is one of these, its user still exists, and it has not ended.
    public func session(_ cookie: String, now: Timestamp) -> LoginSession? {
        guard let dot = cookie.firstIndex(of: "."),
            let found = sessions.first(where: { $0.id == cookie[..<dot] })
        else { return nil }
        guard Secrets.sameDigest(Secrets.digest(cookie), found.hash), user(named: found.user) != nil,
            Self.isLive(found, now: now)
        else { return nil }
        return found
    }

    public static func isLive(_ session: LoginSession, now: Timestamp) -> Bool {
        let at = now.millisecondsSince1970
        return at - session.lastSeen.millisecondsSince1970 < idle
            && at - session.created.millisecondsSince1970 < absolute
    }

    /// Ends sessions: by id, or every one of `user`. Returns how many.
    @discardableResult
    public mutating func endSessions(id: String? = nil, user: String? = nil) -> Int {
        let before = sessions.count
        sessions.removeAll { session in
            (id != nil && session.id == id) || (id == nil && user != nil && session.user == user)
        }
        return before - sessions.count
    }

    /// Forgets sessions that have ended; whether any were.
    @discardableResult
    public mutating func pruneSessions(now: Timestamp) -> Bool {
        let before = sessions.count
        sessions.removeAll { !Self.isLive($0, now: now) }
        return sessions.count != before
    }
}

/// Why a change to the accounts, or a login, was refused.
public enum AccessError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Input that can't be taken (a bad name, a weak password).
    case invalid(String)
    case exists(String)
    case unknown(String)
    /// The file could not be read or written.
    case store(String)
    case system(String)

    public var description: String {
        switch self {
        case .invalid(let text), .exists(let text), .unknown(let text), .store(let text), .system(let text): text
        }
    }
}
