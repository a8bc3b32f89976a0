import HubCore

// Quiet hours on a backend (`notifiers.backends.<name>.quiet_hours`): the partner's phone is quiet at night while the
// house's tablet is not. Messages below urgent for a backend in its window are kept from it, and when the window ends
// it gets one digest of what it missed: what is still open, what ended meanwhile, what happened.
extension AlertBook {
    /// When `backend`'s quiet window ends, if it is in one now.
    func quietEnd(of backend: String, _ setup: Setup, now: Timestamp) -> Timestamp? {
        guard let names = setup.backendQuietHours[backend] else { return nil }
        return names.compactMap { setup.quietHours[$0]?.end(containing: now) }.max()
    }

    /// Takes the backends in quiet hours out of `messages` below urgent (an acknowledgement's quiet take-back still
    /// goes), noting what each missed; a message left with no backend is not sent.
    mutating func holdForQuietBackends(_ messages: [AlertMessage], _ setup: Setup, now: Timestamp) -> [AlertMessage] {
        guard !setup.backendQuietHours.isEmpty else { return messages }
        var kept: [AlertMessage] = []
        for var message in messages {
            guard message.priority < 5, message.reason != .acknowledged else {
                kept.append(message)
                continue
            }
            message.backends = message.backends.filter { backend in
                guard let end = quietEnd(of: backend, setup, now: now) else { return true }
                var spell = quietBackends[backend] ?? MissedSpell(until: end)
                spell.until = max(spell.until, end)
                for id in message.alerts { spell.alerts[id] = alerts[id]?.sensor ?? Self.sensor(ofAlert: id) }
                if message.reason == .notice || message.alerts.isEmpty { spell.notices.append(message.event) }
                quietBackends[backend] = spell
                return false
            }
            if !message.backends.isEmpty { kept.append(message) }
        }
        return kept
    }

    /// The digests of backends whose quiet window ended.
    mutating func endBackendSpells(_ setup: Setup, now: Timestamp) -> [AlertMessage] {
        var messages: [AlertMessage] = []
        for backend in quietBackends.keys.sorted() {
            // Ended by the clock, or by a reload that took the window away or changed it.
            let current = quietEnd(of: backend, setup, now: now)
            guard var spell = quietBackends[backend], spell.until <= now || current != spell.until else { continue }
            if let later = current {
                // Still quiet (another window follows at once, or the edit moved the end).
                spell.until = later
                quietBackends[backend] = spell
                continue
            }
            quietBackends[backend] = nil
            let open = spell.alerts.keys.compactMap { alerts[$0] }.filter { $0.firing && $0.acknowledged == nil }
                .sorted { $0.opened < $1.opened }
            let ended = spell.alerts.filter { alerts[$0.key]?.firing != true }.values.sorted()
            var lines: [String] = []
            if !open.isEmpty { lines.append("Still open: \(Self.names(open))") }
            if !ended.isEmpty { lines.append("Ended: \(Self.names(Array(Set(ended)).sorted()))") }
            if !spell.notices.isEmpty {
                lines.append("Events: \(Self.names(spell.notices.map { "\($0.sensor) \($0.newStatus)" }))")
            }
            guard let event = Self.newest(open) ?? spell.notices.last ?? anyEvent(spell, now: now) else {
                continue
            }
            messages.append(
                AlertMessage(
                    key: "\(backend)#quiet@\(now.millisecondsSince1970 / 60_000)", group: "quiet:\(backend)",
                    rule: open.first?.rule ?? "", reason: .digest, backends: [backend],
                    title: open.isEmpty
                        ? "While quiet: nothing still open" : "While quiet: \(Self.headline(open, rule: open[0].rule))",
                    body: lines.joined(separator: "\n"), priority: open.isEmpty ? 2 : 3, event: event,
                    alerts: open.map(\.id)))
        }
        return messages
    }

    /// An event to name a digest by when everything it missed has ended and left the book.
    private func anyEvent(_ spell: MissedSpell, now: Timestamp) -> SensorEvent? {
        guard let sensor = spell.alerts.values.sorted().first else { return nil }
        return SensorEvent(
            id: "quiet-\(sensor)", kind: .changed, sensor: sensor, topic: sensor, oldStatus: "", newStatus: "ended",
            time: now)
    }

    /// `rule/sensor/kind` → `sensor` (a sensor's name may hold a slash).
    static func sensor(ofAlert id: String) -> String {
        let parts = id.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count >= 3 else { return id }
        return parts[1..<(parts.count - 1)].joined(separator: "/")
    }
}
