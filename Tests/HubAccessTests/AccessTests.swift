import Foundation
import HubCore
import HubTestKit
import Testing

@testable import HubAccess

/// Passwords: argon2id in the PHC string form, checked in constant time by libsodium; weak ones refused.
@Suite struct PasswordHashTests {
    @Test func aHashChecksItsPasswordAndNoOther() throws {
        let hash = try PasswordHash.make("correct horse battery")
        #expect(hash.hasPrefix("$argon2id$v=19$m=19456,t=2,p=1$"))
        #expect(PasswordHash.verify("correct horse battery", against: hash))
        #expect(!PasswordHash.verify("correct horse batterY", against: hash))
        #expect(!PasswordHash.verify("", against: hash))
        // Salted: the same password twice is two hashes.
        #expect(try PasswordHash.make("correct horse battery") != hash)
        #expect(!PasswordHash.needsRehash(hash))
        // A hash made with other parameters is made again at the next login.
        let older = "$argon2id$v=19$m=8192,t=1,p=1$c29tZXNhbHRzb21lc2FsdA$9ai1xbNB0/ZlZNTfW3vozVK/iPiPwyvnGnA7N0Ru3Ls"
        #expect(PasswordHash.needsRehash(older))
        #expect(!PasswordHash.verify("anything", against: "not a hash"))
        #expect(!PasswordHash.verify("anything", against: PasswordHash.decoy))
    }

    @Test(arguments: [
        ("short", "at least 10 characters"), ("ana-password-1", "must not contain the user's name"),
        ("password123", "among the first any attacker tries"), ("aaaaaaaaaaaa", "among the first any attacker tries"),
    ])
    func weakPasswordsAreRefusedSayingWhy(_ password: String, _ reason: String) {
        #expect(throws: AccessError.self) { try PasswordHash.check(password, user: "ana") }
        do {
            try PasswordHash.check(password, user: "ana")
        } catch {
            #expect(error.description.contains(reason), "\(error)")
        }
    }
}

/// The accounts document: tokens and sessions found by their public id and checked by their hash, expiring, and
/// ended with their user.
@Suite struct AccessDocumentTests {
    let now = Timestamp(millisecondsSince1970: 1_796_000_000_000)

    @Test func tokensAreShownOnceKeptHashedAndRevocable() throws {
        var document = AccessDocument()
        let token = try document.addToken(named: "grafana", scope: .read, createdBy: "ana", expires: nil, now: now)
        #expect(token.hasPrefix("shub_") && token.count == 5 + 8 + 1 + 32)
        let kept = try #require(document.tokens.first)
        #expect(kept.hash == Secrets.digest(token) && !kept.hash.contains(token.suffix(32)))
        #expect(document.token(token, now: now)?.name == "grafana")
        // One character changed: not a token of this hub.
        var wrong = Array(token)
        wrong[wrong.count - 1] = wrong[wrong.count - 1] == "A" ? "B" : "A"
        #expect(document.token(String(wrong), now: now) == nil)
        #expect(document.token("shub_\(kept.id)_", now: now) == nil)
        #expect(throws: AccessError.self) {
            try document.addToken(named: "grafana", scope: .write, createdBy: "ana", expires: nil, now: now)
        }
        try document.revokeToken("grafana")
        #expect(document.token(token, now: now) == nil)
        let expiring = try document.addToken(
            named: "ha", scope: .write, createdBy: "ana", expires: now.adding(milliseconds: 1000), now: now)
        #expect(document.token(expiring, now: now) != nil)
        #expect(document.token(expiring, now: now.adding(milliseconds: 1000)) == nil)
    }

    @Test func sessionsEndIdleOldWithTheirUserOrTheirPassword() throws {
        var document = AccessDocument()
        try document.addUser("ana", role: .admin, passwordHash: "$argon2id$x", now: now)
        let cookie = document.openSession(user: "ana", address: "10.0.0.7", agent: "Firefox", now: now)
        #expect(document.session(cookie, now: now)?.user == "ana")
        #expect(document.session(cookie + "x", now: now) == nil)
        // Idle for 30 days: ended; used, it lasts until 180 days after the login.
        #expect(document.session(cookie, now: now.adding(milliseconds: AccessDocument.idle)) == nil)
        document.sessions[0].lastSeen = now.adding(milliseconds: AccessDocument.absolute - 1000)
        #expect(document.session(cookie, now: now.adding(milliseconds: AccessDocument.absolute - 500)) != nil)
        #expect(document.session(cookie, now: now.adding(milliseconds: AccessDocument.absolute)) == nil)
        // A new password ends every other login; removing the user ends all.
        document.sessions[0].lastSeen = now
        let other = document.openSession(user: "ana", address: "10.0.0.8", agent: "Chrome", now: now)
        let keep = try #require(document.session(other, now: now)?.id)
        try document.setPassword("ana", hash: "$argon2id$y", now: now, keep: keep)
        #expect(document.session(cookie, now: now) == nil && document.session(other, now: now) != nil)
        try document.removeUser("ana")
        #expect(document.session(other, now: now) == nil && document.sessions.isEmpty)
    }

    @Test func namesAreChecked() {
        for bad in ["", "Ana", "ana smith", "-ana", String(repeating: "a", count: 33), "ana/b"] {
            #expect(throws: AccessError.self, "\(bad)") { try AccessDocument.checkName(bad, what: "user") }
        }
        #expect(throws: Never.self) { try AccessDocument.checkName("ana.b_c-1", what: "user") }
    }
}

/// The file: changed under its lock, written whole and 0600, an unreadable one refused and left as it is.
@Suite struct AccessStoreTests {
    @Test func changesAreWrittenPrivatelyAndReadBack() throws {
        let directory = try TemporaryDirectory()
        let store = AccessStore(directory: directory.path)
        #expect(try store.read() == AccessDocument())
        try store.update { document throws(AccessError) in
            try document.addUser("ana", role: .member, passwordHash: "$argon2id$x", now: .now)
        }
        var status = stat()
        #expect(stat(store.path, &status) == 0 && status.st_mode & 0o777 == 0o600)
        #expect(try store.read().user(named: "ana")?.role == .member)
        // A refused change writes nothing.
        #expect(throws: AccessError.self) {
            try store.update { document throws(AccessError) in try document.removeUser("nobody") }
        }
        let cache = AccessCache(store: store)
        #expect(cache.document().document.users.count == 1)
        try store.update { document throws(AccessError) in try document.setRole("ana", role: .viewer) }
        #expect(cache.document().document.user(named: "ana")?.role == .viewer, "read again once changed")
        try Data("{not json".utf8).write(to: URL(fileURLWithPath: store.path))
        #expect(throws: AccessError.self) { try store.read() }
        let (document, error) = cache.document()
        #expect(document.users.isEmpty && error != nil, "nobody is let in by what can't be read")
    }
}

/// Failed logins slowed per address and per name, with the clock passed in.
@Suite struct LoginThrottleTests {
    let now = Timestamp(millisecondsSince1970: 1_796_000_000_000)

    @Test func anAddressWaitsLongerAfterEachFailureUpToACap() {
        var throttle = LoginThrottle()
        for _ in 0..<LoginThrottle.addressFree {
            #expect(throttle.wait(address: "a", user: "ana", now: now) == nil)
            #expect(throttle.failed(address: "a", user: "ana", now: now) == 0)
        }
        #expect(throttle.failed(address: "a", user: "ana", now: now) == 1000)
        #expect(throttle.wait(address: "a", user: "ana", now: now) == 1000)
        #expect(throttle.wait(address: "a", user: "ana", now: now.adding(milliseconds: 1000)) == nil)
        #expect(throttle.failed(address: "a", user: "ana", now: now) == 2000)
        var cap: Int64 = 0
        for _ in 0..<30 { cap = throttle.failed(address: "a", user: "ana", now: now) }
        #expect(cap == LoginThrottle.addressCap)
        // Another address is not held by this one (until the name's own count runs out).
        #expect(throttle.wait(address: "b", user: "ben", now: now) == nil)
        throttle.succeeded(address: "a", user: "ana", now: now)
        #expect(throttle.wait(address: "a", user: "ana", now: now) == nil)
    }

    @Test func aNameIsHeldFromStrangersButNotFromWhereItLoggedInBefore() {
        var throttle = LoginThrottle()
        throttle.succeeded(address: "phone", user: "ana", now: now)
        for index in 0..<(LoginThrottle.userFree + 3) {
            throttle.failed(address: "stranger-\(index)", user: "ana", now: now)
        }
        #expect(throttle.wait(address: "stranger-new", user: "ana", now: now) != nil)
        #expect(throttle.wait(address: "phone", user: "ana", now: now) == nil)
        #expect((throttle.wait(address: "stranger-new", user: "ana", now: now) ?? 0) <= LoginThrottle.userCap)
        // A day of quiet forgets it.
        let later = now.adding(milliseconds: 86_400_001)
        throttle.failed(address: "other", user: "ben", now: later)
        #expect(throttle.wait(address: "stranger-new", user: "ana", now: later) == nil)
    }
}
