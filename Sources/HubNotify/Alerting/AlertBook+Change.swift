import HubCore

/// What a book is saved as: the change from one book to another. Its maps give only the entries that differ
/// (`nil`: removed); its small parts are given whole when they differ and left out when not. The book's own file
/// (`alerts.json`) is the change from an empty book, and each line of `alerts.changes` the change since the last
/// save (`AlertLedger`), so the parts of a book that are kept are listed here, once.
extension AlertBook {
    public struct Change: Sendable, Equatable, Codable {
        /// Alerts new to the book, whole (`nil`: removed).
        var alerts: [String: Alert?] = [:]
        /// Alerts the book had that changed, as merge patches of their JSON (RFC 7396): a door's alert that fires
        /// again changes its event and a few times, and written whole it was 80 % of a home's `alerts.changes`
        /// (`bench/home.sh`, about 450 of 3,500 bytes a line per door).
        var patched: [String: JSONTree] = [:]
        var groups: [String: Group?] = [:]
        /// Members a group gained at the end of its list, by the group's key: that group is given in `groups` without
        /// its members. A power cut's outage group takes 10,000 members one will at a time, and writing its whole
        /// list at every save was half of the storm's CPU with the guard (`ONLY=storm-guard`, `perf`).
        var joined: [String: [String]] = [:]
        var quiet: [String: QuietSpell?] = [:]
        var quietBackends: [String: MissedSpell?] = [:]
        var taken: [String: Taken?] = [:]
        var links: [String: Link?] = [:]
        var recent: [Int64: Int?] = [:]
        var silences: [Silence]?
        var offline: Set<String>?
        var announcements: [Announcement]?
        var counters: Counters?
        var epoch: String?
        var reset: Reset?

        private enum CodingKeys: String, CodingKey {
            case alerts, patched, groups, joined, silences, offline, quiet, quietBackends, taken, links, counters
            case epoch, reset, announcements, recent
        }

        /// What turns `old` into `new`.
        init(from old: AlertBook, to new: AlertBook) {
            alerts = Self.difference(old.alerts, new.alerts)
            patch(from: old)
            groups = Self.difference(old.groups, new.groups)
            for (key, group) in groups {
                guard var group, let before = old.groups[key]?.members, group.members.count > before.count,
                    group.members.starts(with: before)
                else { continue }
                joined[key] = Array(group.members[before.count...])
                group.members = []
                groups[key] = .some(group)
            }
            quiet = Self.difference(old.quiet, new.quiet)
            quietBackends = Self.difference(old.quietBackends, new.quietBackends)
            taken = Self.difference(old.taken, new.taken)
            links = Self.difference(old.links, new.links)
            recent = Self.difference(old.recent, new.recent)
            silences = Self.whole(old.silences, new.silences)
            offline = Self.whole(old.offline, new.offline)
            announcements = Self.whole(old.announcements, new.announcements)
            counters = Self.whole(old.counters, new.counters)
            epoch = Self.whole(old.epoch, new.epoch)
            reset = old.reset == new.reset ? nil : new.reset
        }

        /// A save holding more changed alerts than this writes them whole: a patch costs two encodings and a
        /// decoding of the alert (its check), and a storm's saves hold hundreds (without the storm guard, 10,000
        /// sensors going offline over 10 s took 9.6–10.0 CPU seconds with patches up to 256 a save, 9.1–9.4 without
        /// patches, 9.1–9.6 with up to 64: bench/results/alerts-patch-2026-12-07.md); a home's hold a few.
        static let mostPatched = 64

        /// Replaces each changed alert that the book had by a patch of its JSON, when one can be made and reading it
        /// gives the alert back (else it stays whole).
        private mutating func patch(from old: AlertBook) {
            let changed = alerts.filter { $0.value != nil && old.alerts[$0.key] != nil }
            guard !changed.isEmpty, changed.count <= Self.mostPatched else { return }
            for case (let id, let alert?) in changed {
                guard let before = old.alerts[id], let tree = try? JSONTree(encoding: before),
                    let patch = try? JSONTree.mergePatch(from: tree, to: JSONTree(encoding: alert)),
                    (try? tree.merging(patch).decoded(as: Alert.self)) == alert
                else { continue }
                alerts[id] = nil
                patched[id] = patch
            }
        }

        /// Whether it changes nothing.
        public var isEmpty: Bool { self == Change() }

        init() {}

        /// The entries of `new` that are not in `old` as they are, and `nil` for those `new` no longer has.
        private static func difference<Key, Value: Equatable>(_ old: [Key: Value], _ new: [Key: Value]) -> [Key: Value?]
        {
            var changed: [Key: Value?] = [:]
            for (key, value) in new where old[key] != value { changed[key] = .some(value) }
            for key in old.keys where new[key] == nil { changed[key] = .some(nil) }
            return changed
        }

        private static func whole<Value: Equatable>(_ old: Value, _ new: Value) -> Value? { old == new ? nil : new }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            func map<Key, Value>(_ key: CodingKeys) throws -> [Key: Value?] where Key: Decodable, Value: Decodable {
                try container.decodeIfPresent([Key: Value?].self, forKey: key) ?? [:]
            }
            alerts = try map(.alerts)
            patched = try container.decodeIfPresent([String: JSONTree].self, forKey: .patched) ?? [:]
            groups = try map(.groups)
            joined = try container.decodeIfPresent([String: [String]].self, forKey: .joined) ?? [:]
            quiet = try map(.quiet)
            quietBackends = try map(.quietBackends)
            taken = try map(.taken)
            links = try map(.links)
            recent = try map(.recent)
            silences = try container.decodeIfPresent([Silence].self, forKey: .silences)
            offline = try container.decodeIfPresent(Set<String>.self, forKey: .offline)
            announcements = try container.decodeIfPresent([Announcement].self, forKey: .announcements)
            counters = try container.decodeIfPresent(Counters.self, forKey: .counters)
            epoch = try container.decodeIfPresent(String.self, forKey: .epoch)
            reset = try container.decodeIfPresent(Reset.self, forKey: .reset)
        }

        /// Leaves out what does not change: a line of the log holds only what is new.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            func map<Key, Value>(_ map: [Key: Value?], _ key: CodingKeys) throws
            where Key: Encodable, Value: Encodable {
                if !map.isEmpty { try container.encode(map, forKey: key) }
            }
            try map(alerts, .alerts)
            if !patched.isEmpty { try container.encode(patched, forKey: .patched) }
            try map(groups, .groups)
            if !joined.isEmpty { try container.encode(joined, forKey: .joined) }
            try map(quiet, .quiet)
            try map(quietBackends, .quietBackends)
            try map(taken, .taken)
            try map(links, .links)
            try map(recent, .recent)
            try container.encodeIfPresent(silences, forKey: .silences)
            try container.encodeIfPresent(offline, forKey: .offline)
            try container.encodeIfPresent(announcements, forKey: .announcements)
            try container.encodeIfPresent(counters, forKey: .counters)
            try container.encodeIfPresent(epoch, forKey: .epoch)
            try container.encodeIfPresent(reset, forKey: .reset)
        }
    }

    /// What a change's patch can't be made to: an alert the book does not have, or JSON that is not an alert.
    struct Unpatchable: Error, CustomStringConvertible {
        var id: String
        var reason: String
        var description: String { "the change to alert \(id) can't be made: \(reason)" }
    }

    /// The book with `change` made to it (nothing, when a patch can't be made). The revision is not kept in a file:
    /// it is left as it is.
    mutating func apply(_ change: Change) throws(Unpatchable) {
        func apply<Key, Value>(_ changed: [Key: Value?], to map: inout [Key: Value]) {
            for (key, value) in changed { map[key] = value }
        }
        var patched: [String: Alert] = [:]
        for (id, patch) in change.patched {
            guard let alert = alerts[id] else { throw Unpatchable(id: id, reason: "the book has no such alert") }
            do {
                patched[id] = try JSONTree(encoding: alert).merging(patch).decoded(as: Alert.self)
            } catch {
                throw Unpatchable(id: id, reason: "\(error)")
            }
        }
        apply(change.alerts, to: &alerts)
        alerts.merge(patched) { $1 }
        for (key, group) in change.groups {
            // A group that gained members is given without them: they are the ones it had, and those it joined.
            guard var group, let added = change.joined[key] else {
                groups[key] = group
                continue
            }
            group.members = (groups[key]?.members ?? []) + added
            groups[key] = group
        }
        apply(change.quiet, to: &quiet)
        apply(change.quietBackends, to: &quietBackends)
        apply(change.taken, to: &taken)
        apply(change.links, to: &links)
        apply(change.recent, to: &recent)
        if let silences = change.silences { self.silences = silences }
        if let offline = change.offline { self.offline = offline }
        if let announcements = change.announcements { self.announcements = announcements }
        if let counters = change.counters { self.counters = counters }
        if let epoch = change.epoch { self.epoch = epoch }
        if let reset = change.reset { self.reset = reset }
    }

    /// Written as the change from an empty book (whose epoch is empty, as a book an early version began).
    public func encode(to encoder: any Encoder) throws {
        try Change(from: AlertBook(epoch: ""), to: self).encode(to: encoder)
    }

    /// Reads a book written by this version or an earlier one (a part it did not have yet is empty).
    public init(from decoder: any Decoder) throws {
        self.init(epoch: "")
        try apply(try Change(from: decoder))
    }
}
