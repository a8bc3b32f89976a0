import Foundation
import HubCore
import HubNotify
import HubSupport
import Logging

// The alert entities of `homeassistant:` (`HomeAssistantDiscovery`'s alerts part): for each rule that makes alerts,
// a sensor with the rule's state and a button that acknowledges its firing alerts.
//
// The book is read through its `AlertPlace`, as the API reads it, when it changes (the router's book in memory, or
// in a cluster the keeper's notice on the database: nothing is polled) and at most once a second;
// the rules are the router's, looked at on each of the publisher's wakes (every 5 s at most), so a reload that makes
// a rule stop alerting removes its entities within seconds. A press is a request like `hubctl alerts ack`: durable,
// logged by the book's keeper as it takes it. In a cluster the agent holding the `homeassistant` duty publishes and
// acts on presses. Nothing is published, and the book is not read, while no rule makes alerts.
extension HomeAssistantPublisher {
    /// Where the alerts are.
    struct AlertSource: Sendable {
        /// Where the book is read and requests are left (the router's).
        var place: any AlertPlace
        /// A signal each time the book may have changed.
        var changes: @Sendable () -> AsyncStream<Void>
        /// The names of the rules that make alerts now (after the last reload).
        var rules: @Sendable () -> [String]
    }

    /// The alert entities' share of the publisher's work.
    struct AlertWork {
        /// The rules that make alerts, by rule id (`HomeAssistantDiscovery.ruleID`), as last looked at.
        var rules: [String: String] = [:]
        /// Each rule's state, from the book last read, by rule id.
        var states: [String: [UInt8]] = [:]
        /// The config and state topics last published and their payloads, by rule id.
        var published: [String: [String: [UInt8]]] = [:]
        /// Rules whose state the broker held when hubd subscribed (published by an earlier run): their entities go
        /// unless they make alerts now.
        var found: Set<String> = []
        /// State topics to empty, once their entities' configs are gone (so Home Assistant does not read an empty
        /// state into an entity it still has).
        var clearing: [String] = []
        /// Rules whose button was pressed, not acted on yet.
        var pressed: [String] = []
        /// Whether the book may have changed since it was last read.
        var bookDue = true
        /// Not read again before this: a book written at each drain of a trickle is read once a second at most.
        var nextRead = ContinuousClock.now

        /// When the publisher must wake for the book, if it waits for one.
        var deadline: ContinuousClock.Instant? { bookDue && !rules.isEmpty ? nextRead : nil }

        /// What must be published now, which it then counts as published; `everything` after a (re)connection.
        mutating func due(_ discovery: HomeAssistantDiscovery, everything: Bool) -> [HomeAssistantDiscovery.Message] {
            var messages = clearing.map { HomeAssistantDiscovery.Message(topic: $0, payload: []) }
            clearing = []
            for (ruleID, rule) in rules {
                guard let state = states[ruleID] else { continue }
                let before = published[ruleID] ?? [:]
                var now = [discovery.alertStateTopic(ruleID: ruleID): state]
                for config in discovery.alertConfigs(rule: rule) { now[config.topic] = config.payload }
                for (topic, payload) in now where everything || before[topic] != payload {
                    messages.append(.init(topic: topic, payload: payload))
                }
                published[ruleID] = now
            }
            // Rules that stopped making alerts (a reload), and those an earlier run left on the broker.
            let gone = Set(published.keys).union(found).filter { rules[$0] == nil }
            for ruleID in gone.sorted() {
                messages += discovery.alertConfigTopics(ruleID: ruleID).map { .init(topic: $0, payload: []) }
                clearing.append(discovery.alertStateTopic(ruleID: ruleID))
                published[ruleID] = nil
            }
            found = []
            return messages
        }
    }

    /// A message on one of `alertFilters`: a press (not a retained one, which would act again at each connection),
    /// or a state an earlier run left.
    func offerAlerts(topic: String, payload: [UInt8], retained: Bool) -> Bool {
        guard alertSource != nil, let (ruleID, press) = discovery.alertTopic(topic) else { return false }
        if press {
            guard !retained, payload == Array(HomeAssistantDiscovery.acknowledgePress.utf8) else {
                logger.notice(
                    "ignored a message on a Home Assistant acknowledge topic",
                    metadata: ["topic": "\(topic)", "retained": "\(retained)"])
                return true
            }
            // Acted on by the agent that publishes the entities (in a cluster, one), not later by another.
            if publishesConfigs() { work.withLock { $0.alerts.pressed.append(ruleID) } }
        } else {
            guard retained, !payload.isEmpty else { return true }
            work.withLock { _ = $0.alerts.found.insert(ruleID) }
        }
        doorbell.ring()
        return true
    }

    /// Signals each change of the book until cancelled.
    func watchBook(_ changes: AsyncStream<Void>) async {
        for await _ in changes {
            work.withLock { $0.alerts.bookDue = true }
            doorbell.ring()
        }
    }

    /// Looks at the rules, acts on the presses and reads the book when it changed; before `due`, off the lock.
    func refreshAlerts(_ source: AlertSource) async {
        var rules: [String: String] = [:]
        for name in source.rules() { rules[HomeAssistantDiscovery.ruleID(name)] = name }
        let (pressed, read) = work.withLock { work -> ([String], Bool) in
            if work.alerts.rules != rules {
                work.alerts.rules = rules
                work.alerts.bookDue = true
            }
            defer { work.alerts.pressed = [] }
            guard !rules.isEmpty else {
                work.alerts.states = [:]
                return (work.alerts.pressed, false)
            }
            guard work.alerts.bookDue, ContinuousClock.now >= work.alerts.nextRead else {
                return (work.alerts.pressed, false)
            }
            work.alerts.bookDue = false
            work.alerts.nextRead = .now + .seconds(1)
            return (work.alerts.pressed, true)
        }
        for ruleID in pressed { await acknowledge(ruleID, rule: rules[ruleID], source) }
        guard read else { return }
        let book: AlertBook
        do {
            book = try await source.place.saved().book
        } catch {
            // Read again at the next wake (a second on): the book is not due again until it changes.
            work.withLock { $0.alerts.bookDue = true }
            logger.error("cannot read the alerts for Home Assistant", metadata: ["error": "\(error)"])
            return
        }
        let open = Self.openAlerts(book)
        var states: [String: [UInt8]] = [:]
        for (ruleID, rule) in rules {
            states[ruleID] = HomeAssistantDiscovery.alertStatePayload(rule: rule, alerts: open[rule] ?? [])
        }
        work.withLock { $0.alerts.states = states }
    }

    /// The book's firing alerts as the entities list them, by rule.
    static func openAlerts(_ book: AlertBook) -> [String: [HomeAssistantDiscovery.OpenAlert]] {
        var open: [String: [HomeAssistantDiscovery.OpenAlert]] = [:]
        for alert in book.alerts.values where alert.firing {
            let state: HomeAssistantDiscovery.OpenAlert.State =
                alert.heldBy != nil ? .held : alert.acknowledged != nil ? .acknowledged : .firing
            open[alert.rule, default: []].append(
                .init(
                    id: alert.id, sensor: alert.sensor, kind: alert.kind, status: alert.event.newStatus, state: state,
                    text: alert.stateText, opened: alert.opened,
                    acknowledged: alert.acknowledged.map { .init(by: $0.by, via: $0.via, at: $0.at) },
                    heldBy: alert.heldBy))
        }
        return open
    }

    /// The button of `rule` was pressed: its alerts that fire and that nobody acknowledged (nor asked to) are
    /// acknowledged through the book's requests, as `hubctl alerts ack` does. Held alerts are left: the entity does
    /// not count them as firing, so the press is not about them.
    private func acknowledge(_ ruleID: String, rule: String?, _ source: AlertSource) async {
        guard let rule else {
            logger.notice(
                "Home Assistant pressed acknowledge for a rule that makes no alerts", metadata: ["rule": "\(ruleID)"])
            return
        }
        do {
            let saved = try await source.place.saved()
            var asked = Set<String>()
            for case .acknowledge(let alert, _, _, _) in saved.pending { asked.insert(alert) }
            let chosen = saved.book.alerts.values.filter {
                $0.rule == rule && $0.firing && $0.heldBy == nil && $0.acknowledged == nil && !asked.contains($0.id)
            }.map(\.id).sorted()
            guard !chosen.isEmpty else {
                logger.info(
                    "Home Assistant pressed acknowledge: nothing firing to acknowledge", metadata: ["rule": "\(rule)"])
                return
            }
            let now = Timestamp.now
            try await source.place.send(
                chosen.map {
                    .acknowledge(
                        alert: $0, by: HomeAssistantDiscovery.acknowledgedBy,
                        via: HomeAssistantDiscovery.acknowledgedVia,
                        at: now)
                })
            logger.notice(
                "acknowledging from Home Assistant",
                metadata: ["rule": "\(rule)", "alerts": "\(chosen.joined(separator: ", "))"])
        } catch {
            logger.error(
                "cannot acknowledge from Home Assistant", metadata: ["rule": "\(rule)", "error": "\(error)"])
        }
    }
}
