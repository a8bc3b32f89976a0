import Foundation
import HubCore

/// What a person asks of the alerts: acknowledge one, add a silence, end one.
public enum AlertRequest: Sendable, Hashable, Codable {
    case acknowledge(alert: String, by: String, via: String, at: Timestamp)
    case silence(Silence)
    /// `by`: who ended it (nil in a request an earlier version wrote).
    case expire(silence: String, at: Timestamp, by: String? = nil)
    /// A button or signed link of a notification (`ActionToken`), checked by whoever took it.
    case act(handle: String, action: ActionToken.Action, by: String, via: String, at: Timestamp)
    /// One alert snoozed for `milliseconds` (the dashboard, `hubctl alerts snooze`): a silence on its rule, sensor
    /// and kind, as a notification's snooze button makes; `silence` is its id.
    case snooze(alert: String, silence: String, milliseconds: Int64, by: String, via: String, at: Timestamp)
}

/// Requests on their way to hubd's alert book: lines in `alert-requests.jsonl` in the state directory, appended
/// under a lock by `hubctl` and the HTTP API, and taken by hubd as they come (and at its start). So they work
/// whether or not hubd runs, and hubd alone writes the book.
public struct AlertRequests: Sendable {
    public let path: String
    let directory: String
    var lockPath: String { path + ".lock" }

    public init(directory: String) {
        self.directory = directory
        self.path = "\(directory)/alert-requests.jsonl"
    }

    /// Appends `requests`, durably, for hubd to take.
    public func append(_ requests: [AlertRequest]) throws(StoreError) {
        let lock = try acquireLock(lockPath, directory: directory)
        defer { close(lock) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        var bytes: [UInt8] = []
        for request in requests {
            guard let line = try? encoder.encode(request) else { continue }
            bytes += line
            bytes.append(UInt8(ascii: "\n"))
        }
        let fd = try AppendFile.open(path, in: directory)
        defer { close(fd) }
        try AppendFile.append(bytes, to: fd, path: path, sync: true)
    }

    /// The requests waiting, oldest first, and how many lines could not be read.
    public func pending() -> (requests: [AlertRequest], unreadable: Int) {
        let decoder = JSONDecoder()
        var requests: [AlertRequest] = []
        var unreadable = 0
        for line in AppendFile.lines(AppendFile.contents(path)) {
            if let request = try? decoder.decode(AlertRequest.self, from: Data(line)) {
                requests.append(request)
            } else {
                unreadable += 1
            }
        }
        return (requests, unreadable)
    }

    /// Hands the waiting requests to `apply`, and empties the file once it says they are kept elsewhere (the book
    /// saved). Under the lock, so a request appended meanwhile waits for the next take.
    func take(_ apply: ([AlertRequest], Int) -> Bool) throws(StoreError) {
        guard FileManager.default.fileExists(atPath: path) else { return }
        let lock = try acquireLock(lockPath, directory: directory)
        defer { close(lock) }
        let (requests, unreadable) = pending()
        guard !requests.isEmpty || unreadable > 0 else { return }
        if apply(requests, unreadable), truncate(path, 0) != 0 {
            throw .system(path: path, action: "empty", errno: errno)
        }
    }
}

extension AlertBook {
    /// Applies a person's request; what it did, in words, for the log.
    @discardableResult
    public mutating func apply(_ request: AlertRequest, now: Timestamp) -> String {
        switch request {
        case .acknowledge(let alert, let by, let via, let at):
            return acknowledge(alert, by: by, via: via, now: at) ? "acknowledged" : "not firing: not acknowledged"
        case .silence(let silence):
            guard !silences.contains(where: { $0.id == silence.id }) else { return "already there" }
            // Checked where it was asked too; here against the book as it is (two asked at once).
            let inForce = silences.filter { $0.state(at: now) != .expired }.count
            do {
                try silence.check(inForce: inForce, now: nil)
            } catch {
                return "refused: \(error)"
            }
            add(silence, now: now)
            announce(.added, silence, by: silence.createdBy, at: now)
            return "silence added"
        case .expire(let id, let at, let by):
            let silence = silences.first { $0.id == id && $0.state(at: now) != .expired }
            guard let silence, expire(silence: id, now: min(at, now)) else { return "no such silence in force" }
            announce(.ended, silence, by: by ?? "someone", at: now)
            return "silence expired"
        case .act(let handle, let action, let by, let via, let at):
            return act(handle, action, by: by, via: via, at: at, now: now)
        case .snooze(let id, let silenceID, let milliseconds, let by, let via, let at):
            guard let alert = alerts[id], alert.firing else { return "not firing: not snoozed" }
            let silence = Self.snoozeSilence(
                alert, id: silenceID, at: at, milliseconds: milliseconds, by: by, via: via)
            guard !silences.contains(where: { $0.id == silence.id }) else { return "already there" }
            add(silence, now: now)
            announce(.snoozed, silence, by: by, at: now, alerts: [id])
            return "snoozed for \(Self.spoken(milliseconds))"
        }
    }

    /// The silence a snooze is: the alert's rule, sensor and kind, from `at` for `milliseconds`.
    static func snoozeSilence(
        _ alert: Alert, id: String, at: Timestamp, milliseconds: Int64, by: String, via: String
    ) -> Silence {
        let matchers = [
            Silence.Matcher(name: "rule", operation: .equal, value: alert.rule),
            Silence.Matcher(name: "sensor", operation: .equal, value: alert.sensor),
            Silence.Matcher(name: "kind", operation: .equal, value: alert.kind),
        ]
        return Silence(
            id: id, matchers: matchers, startsAt: at, endsAt: at.adding(milliseconds: milliseconds), createdBy: by,
            comment: "snoozed via \(via)")
    }

    /// How long a snooze from a phone silences the alerts it names.
    public static let snooze: Int64 = 3_600_000

    /// Whether the link `handle` names may be used now: the answer a person sees, `nil` when it may.
    public func refusal(of handle: String, now: Timestamp) -> String? {
        guard let link = links[handle], link.expires > now else {
            return "this notification's alerts are no longer open"
        }
        if let used = link.used { return "already used by \(used.by) via \(used.via) at \(used.at)" }
        return nil
    }

    private mutating func act(
        _ handle: String, _ action: ActionToken.Action, by: String, via: String, at: Timestamp, now: Timestamp
    ) -> String {
        if let refusal = refusal(of: handle, now: now) { return "refused: \(refusal)" }
        guard var link = links[handle] else { return "refused" }
        link.used = Acknowledgement(by: by, at: at, via: via)
        links[handle] = link
        revision += 1
        var done: [String] = []
        var snooze: Silence?
        for id in link.alerts {
            guard let alert = alerts[id], alert.firing else { continue }
            switch action {
            case .acknowledge:
                acknowledge(id, by: by, via: via, now: at)
            case .snooze:
                let silence = Self.snoozeSilence(
                    alert, id: "snooze-\(handle)-\(done.count)", at: at, milliseconds: Self.snooze, by: by, via: via)
                add(silence, now: now)
                snooze = snooze ?? silence
            }
            done.append(id)
        }
        // One announcement for the message's alerts: "ben snoozed kitchen leak for 1 h".
        if let snooze { announce(.snoozed, snooze, by: by, at: now, alerts: done) }
        return "\(action == .acknowledge ? "acknowledged" : "snoozed for 1 h"): \(done.joined(separator: ", "))"
    }
}

/// The alerts as hubd last saved them, with the requests it has not taken yet: what `hubctl`, the API and the
/// dashboard read (hubd alone writes the book).
public struct SavedAlerts: Sendable {
    public var book: AlertBook
    public var pending: [AlertRequest]

    public init(book: AlertBook, pending: [AlertRequest]) {
        (self.book, self.pending) = (book, pending)
    }

    /// Reads the book (`alerts.json` with `alerts.changes`) and `alert-requests.jsonl` in `directory`; no book yet
    /// is an empty one.
    public init(directory: String) throws(AlertInputError) {
        // The requests first, then the book: hubd saves the book before it empties the requests' file, so a request
        // taken between the two reads is in the book read after. Read the other way round, a request could be in
        // neither (the API then counted 100 silences as 99 and answered 201 to a 101st that the book refused).
        let waiting = AlertRequests(directory: directory).pending().requests
        do {
            book = try AlertLedger.read(directory: directory)?.book ?? AlertBook()
        } catch {
            throw AlertInputError("\(directory)/\(AlertLedger.bookName) cannot be read: \(error)")
        }
        pending = waiting
    }

    /// The silences, with those hubd has not taken yet (`waiting`), expired ones left out unless `expired`.
    public func silences(at now: Timestamp, expired: Bool = false) -> [(silence: Silence, waiting: Bool)] {
        var silences = book.silences.map { ($0, false) }
        for case .silence(let silence) in pending where !silences.contains(where: { $0.0.id == silence.id }) {
            silences.append((silence, true))
        }
        return silences.filter { expired || $0.0.state(at: now) != .expired }
    }

    /// Whether a silence with this id is in force or to come (in the book or waiting for hubd).
    public func hasSilence(_ id: String, at now: Timestamp) -> Bool {
        silences(at: now).contains { $0.silence.id == id }
    }
}
