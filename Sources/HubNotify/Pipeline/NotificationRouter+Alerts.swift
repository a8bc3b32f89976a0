import Crypto
import HubCore
import HubSupport

// The alert stage in the router: events of rules with alerting go into the alert book, and what it says is due
// becomes notifications like any other (the outbox, the queues, the retries).
extension NotificationRouter {
    /// Takes `events` into the book and returns what is due now, as notifications for each backend (and device).
    /// Nothing, at no cost, when no rule makes alerts.
    func alertNotifications(for events: [SensorEvent], now: Timestamp = .now) -> [Notification] {
        let (setup, queues) = self.setup.withLock { ($0.alerts, $0.queues) }
        guard !setup.isEmpty else { return [] }
        let messages = alerts.update { book in
            book.apply(events, setup, now: now)
            return book.tick(setup, now: now)
        }
        let (publicURL, specs) = self.setup.withLock { ($0.configuration.alerts.publicURL, $0.configuration.backends) }
        let linking = Set(specs.filter { type(of: $0.settings).linksInText }.map(\.name))
        let takingBack = Set(specs.filter { type(of: $0.settings).takesBack }.map(\.name))
        let key = actionKey()
        var notifications: [Notification] = []
        for message in messages {
            var actions: [Notification.AlertContext.Action] = []
            if let key, ![.resolved, .notice, .acknowledged, .silence].contains(message.reason) {
                let handle = ActionToken.handle(of: message.key)
                let expires = now.adding(milliseconds: ActionToken.lifetime)
                for action in [ActionToken.Action.acknowledge, .snooze] {
                    let token = ActionToken(handle: handle, action: action, expires: expires).signed(with: key)
                    actions.append(.init(title: action.word, token: token, url: publicURL.map { "\($0)/a/\(token)" }))
                }
            }
            logger.info(
                "alert message",
                metadata: [
                    "reason": "\(message.reason.rawValue)", "rule": "\(message.rule)", "group": "\(message.group)",
                    "alerts": "\(message.alerts.count)", "title": "\(message.title)",
                    "backends": "\(message.backends.joined(separator: ","))",
                ])
            for backend in message.backends {
                guard let queue = queues[backend] else { continue }
                // Only where a copy can be taken back: elsewhere an acknowledgement would be one more message.
                if message.reason == .acknowledged && !takingBack.contains(backend) { continue }
                var body = message.body
                if linking.contains(backend) {
                    // No buttons the hub can hear: the same actions as links (GET asks to confirm, POST acts).
                    for action in actions { if let url = action.url { body += "\n\(action.title): \(url)" } }
                }
                let notification = Notification(
                    id: message.key, backend: backend, rule: message.rule, event: message.event, title: message.title,
                    body: body, priority: message.priority,
                    alert: .init(
                        group: message.group, reason: message.reason, alerts: message.alerts, actions: actions,
                        handle: key.map { Notification.AlertContext.handle(of: message.group, key: $0) }))
                do {
                    notifications += try queue.notifier.expand(notification)
                } catch {
                    queue.noRecipients(notification, reason: "\(error)")
                }
            }
        }
        return notifications
    }

    /// The alert stage's setup now (the rules, quiet hours, storm limits): what says why an alert waits.
    public var alertSetup: AlertBook.Setup { setup.withLock { $0.alerts } }

    /// Those of `events` that may change the alert book: what a cluster's ingest queues for its keeper. None when no
    /// rule makes alerts.
    public func alertEvents(_ events: [SensorEvent]) -> [SensorEvent] {
        let setup = self.setup.withLock { $0.alerts }
        guard !setup.isEmpty else { return [] }
        return events.filter { AlertBook.takes($0, setup) }
    }

    /// The hub's key for the tokens of buttons and links (`ActionToken.key`), read or made once; `nil` (logged) when
    /// the state directory can't hold it: messages then go without buttons.
    public func actionKey() -> SymmetricKey? {
        actionKeyCache.withLock { cache in
            // In a cluster, the cluster's (`takeSharedKey`): none until the database gave it.
            if let key = cache { return key } else if sharedAlerts != nil { return nil }
            do {
                cache = try ActionToken.key(directory: stateDirectory)
            } catch {
                logger.error("cannot read or make the key for alert buttons", metadata: ["error": "\(error)"])
            }
            return cache
        }
    }

    /// Listens for people's answers on `queue`'s backend (Telegram's buttons) while a rule with alerting sends to it:
    /// otherwise it carries no buttons, and a bot's updates are left to whoever else reads them.
    func listenForAnswers(on queue: BackendQueue) async {
        guard let listener = queue.notifier as? any AnswerListener else { return }
        let sends = configuration.rules.contains { rule in
            guard let policy = rule.alerting else { return false }
            return rule.backends.contains(queue.name) || policy.escalate.contains { $0.backends.contains(queue.name) }
        }
        guard sends else { return }
        logger.info("listening for button presses", metadata: ["backend": "\(queue.name)"])
        await listener.listen(logger: logger) { token, person in
            await self.answer(token, by: person, via: queue.name)
        }
    }

    /// Acts on a button's token from `via`: the words the person sees.
    func answer(_ text: String, by person: String, via: String, now: Timestamp = .now) async -> String {
        guard let key = actionKey() else { return "The hub cannot check this button now." }
        let token: ActionToken
        do {
            token = try ActionToken(verifying: text, key: key, now: now)
        } catch {
            logger.warning("alert button refused", metadata: ["backend": "\(via)", "reason": "\(error)"])
            return "Refused: \(error)."
        }
        let request = AlertRequest.act(handle: token.handle, action: token.action, by: person, via: via, at: now)
        // In a cluster the book's keeper acts on it (this agent, as it listens, but through its steps).
        let outcome =
            if let book = sharedAlerts { await askShared(book, request) } else {
                alerts.update { $0.apply(request, now: now) }
            }
        logger.notice(
            "alert request", metadata: ["request": "button via \(via) by \(person)", "outcome": "\(outcome)"])
        guard !outcome.hasPrefix("refused") else {
            logger.warning("alert button refused", metadata: ["backend": "\(via)", "reason": "\(outcome)"])
            return outcome.replacingOccurrences(of: "refused: ", with: "Not done: ")
        }
        if outcome.hasPrefix("queued") { return "Taken: the hub acts on it in a moment." }
        if sharedAlerts == nil {
            alerts.save(lasting: true)
            wantPass()
        }
        return outcome.hasPrefix("acknowledged") ? "Acknowledged." : "Snoozed for an hour."
    }

    /// A Pushover emergency's callback, POSTed to a link with `receipt` in its body: when a Pushover backend of this
    /// hub sent that receipt, it polls Pushover for it now, and the acknowledgement is taken from Pushover's answer
    /// (by the device Pushover names); whether one did. The body alone is never believed (anyone can POST it).
    public func pushoverCallback(receipt: String) -> Bool {
        queues.values.contains { queue in (queue.notifier as? PushoverNotifier)?.receipts.pollNow(receipt) == true }
    }

    /// Takes what people asked (`alert-requests.jsonl`) into the book, when the file changed since the last time.
    func takeRequests(now: Timestamp = .now) {
        guard
            requestsWaiting.withLock({ waiting in
                defer { waiting = false }; return waiting
            })
        else { return }
        do {
            try requests.take { requests, unreadable in
                alerts.update { book in
                    for request in requests {
                        let outcome = book.apply(request, now: now)
                        logger.notice("alert request", metadata: ["request": "\(request)", "outcome": "\(outcome)"])
                    }
                }
                if unreadable > 0 {
                    logger.error(
                        "skipped unreadable alert requests",
                        metadata: ["lines": "\(unreadable)", "path": "\(self.requests.path)"])
                }
                return alerts.save(lasting: !requests.isEmpty)
            }
        } catch {
            logger.error("cannot take the alert requests", metadata: ["error": "\(error)"])
        }
    }

    /// When the alert book next has something to send, or alert messages held for its save may go, on the router's
    /// clock.
    func alertDeadline(now: Timestamp = .now) -> ContinuousClock.Instant? {
        let held = heldAlertMessagesDeadline()
        let setup = self.setup.withLock { $0.alerts }
        guard !setup.isEmpty, let next = alerts.update({ $0.nextDeadline(setup, now: now) }) else { return held }
        let book = ContinuousClock.now + .milliseconds(max(0, next.millisecondsSince1970 - now.millisecondsSince1970))
        return held.map { min($0, book) } ?? book
    }

    /// Whether an event a plain rule (one without alerting) would send is held by a silence: counted and logged.
    func isSilenced(
        _ event: SensorEvent, rule: NotificationRule, silences: [Silence], setup: AlertBook.Setup, now: Timestamp
    ) -> Bool {
        guard !silences.isEmpty else { return false }
        let fields = AlertFields(
            rule: rule.name, sensor: event.sensor, kind: event.kind.rawValue, status: event.newStatus,
            labels: setup.facts(event.sensor).labels)
        guard let silence = silences.first(where: { $0.silences(fields, at: now) }) else { return false }
        inbox.withLock { $0.counters.silenced += 1 }
        logger.info(
            "notification held by a silence",
            metadata: [
                "rule": "\(rule.name)", "sensor": "\(event.sensor)", "status": "\(event.newStatus)",
                "silence": "\(silence.id)",
            ])
        return true
    }
}
