import HubCore
import HubSupport

// The alert stage in a cluster (`SharedAlertBook`): the agent that keeps the book takes what the ingest queued for
// it, and people's requests, in steps that commit the book with the messages it made; every other agent only
// queues. The book's rules are one hub's (`alertNotifications`), applied to what the whole cluster committed.
extension NotificationRouter {
    /// Where hubd's API and Home Assistant's entities read the book and leave requests: the cluster's database, or
    /// the router's book in memory with the state directory's requests (`LiveAlerts`).
    public var alertPlace: any AlertPlace {
        sharedAlerts ?? LiveAlerts(files: AlertFiles(directory: stateDirectory), ledger: alerts)
    }

    /// A signal each time the book may have changed: the cluster keeper's commits, or the router's book in memory.
    public func alertChanges() -> AsyncStream<Void> { sharedAlerts?.committed() ?? alerts.changes() }

    /// The cluster's key for buttons and links, read (or made) before anything is sent or checked: every agent signs
    /// and checks with the same one. Tried again every 2 s until the database answers.
    func takeSharedKey(_ book: any SharedAlertBook) async {
        while !Task.isCancelled {
            do {
                let key = try await book.key()
                actionKeyCache.withLock { $0 = key }
                return
            } catch {
                logger.error("cannot read the cluster's key for alert buttons", metadata: ["error": "\(error)"])
                try? await Task.sleep(for: .seconds(2))
            }
        }
    }

    /// Keeps the book whenever this agent holds the duty; meanwhile, follows what the keeper commits (the book's
    /// silences hold back plain rules' notifications here too, and `/metrics` counts its alerts). Until cancelled.
    func followSharedAlerts(_ book: any SharedAlertBook) async {
        let keeping = Locked(false)
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await _ in book.committed() where !keeping.withLock({ $0 }) {
                    guard let loaded = try? await book.load(), !keeping.withLock({ $0 }) else { continue }
                    self.alerts.update { $0 = loaded }
                }
            }
            group.addTask {
                await book.whileKept {
                    keeping.withLock { $0 = true }
                    self.logger.notice("keeping the cluster's alert book", metadata: [:])
                    await self.keep(book)
                    self.logger.notice("no longer keeping the cluster's alert book", metadata: [:])
                    keeping.withLock { $0 = false }
                }
            }
        }
    }

    /// While kept: a step each time something is queued or the book has a deadline, and the listeners for buttons
    /// (one agent reads a bot's updates).
    private func keep(_ book: any SharedAlertBook) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.listenWhileKept() }
            group.addTask {
                for await _ in book.changes() { self.sharedAlertsDoorbell.ring() }
            }
            await steps(book)
            group.cancelAll()
        }
    }

    /// The backends' listeners for buttons, started again after each reload (a backend made anew, added or removed).
    private func listenWhileKept() async {
        while !Task.isCancelled {
            await withTaskGroup(of: Void.self) { group in
                for queue in queues.values { group.addTask { await self.listenForAnswers(on: queue) } }
                await listenersReload.wait(until: nil)
                group.cancelAll()
            }
        }
    }

    /// Steps until this agent no longer keeps the book, or is cancelled.
    private func steps(_ book: any SharedAlertBook) async {
        var failures = LogThrottle()
        while !Task.isCancelled {
            do {
                guard let more = try await sharedStep(book) else {
                    logger.notice("another agent keeps the alert book now", metadata: [:])
                    return
                }
                // A step takes so many rows at most: the rest at once.
                if more { sharedAlertsDoorbell.ring() }
            } catch {
                guard !Task.isCancelled else { return }
                if let count = failures.note() {
                    logger.error(
                        "cannot commit a step of the cluster's alert book; trying again",
                        metadata: ["error": "\(error)", "times": "\(count)"])
                }
                try? await Task.sleep(for: .seconds(1))
            }
            await sharedAlertsDoorbell.wait(until: alertDeadline())
        }
    }

    /// One step of the book (`SharedAlertBook.step`), on the book as committed: the memory is only what the last step
    /// left, which a step whose commit went unanswered, or another keeper's, may have made stale.
    private func sharedStep(_ book: any SharedAlertBook) async throws -> Bool? {
        let kept = try await book.step { step in
            let now = Timestamp.now
            if step.unreadable > 0 {
                self.logger.error(
                    "skipped unreadable rows queued for the alert book", metadata: ["rows": "\(step.unreadable)"])
            }
            var outcomes: [Int64: String] = [:]
            self.alerts.update { alerts in
                alerts = step.book
                for (id, request) in step.requests {
                    outcomes[id] = alerts.apply(request, now: now)
                    self.logger.notice(
                        "alert request", metadata: ["request": "\(request)", "outcome": "\(outcomes[id]!)"])
                }
            }
            if !step.events.isEmpty && self.setup.withLock({ $0.alerts.isEmpty }) {
                // Queued by an agent whose rules alert, taken by one whose rules (not reloaded yet) don't.
                self.logger.warning(
                    "events queued for the alert book dropped: no rule of this agent makes alerts",
                    metadata: ["events": "\(step.events.count)"])
            }
            let notifications = self.alertNotifications(for: step.events, now: now)
            return SharedAlertStep.Result(book: self.alerts.book, notifications: notifications, outcomes: outcomes)
        }
        // The messages are in the cluster's outbox: claimed at once.
        if kept != nil { sharedDoorbell.ring() }
        return kept
    }

    /// `answer`'s request in a cluster: queued for the keeper, whose outcome is awaited (10 s at most).
    func askShared(_ book: any SharedAlertBook, _ request: AlertRequest) async -> String {
        do {
            let id = try await book.ask(request)
            let deadline = ContinuousClock.now + .seconds(10)
            while ContinuousClock.now < deadline {
                if let outcome = try await book.outcome(of: id) { return outcome }
                try await Task.sleep(for: .milliseconds(100))
            }
            return "queued: the alert book's keeper has not taken it yet"
        } catch {
            logger.error("cannot hand a button's request to the alert book", metadata: ["error": "\(error)"])
            return "refused: the hub cannot reach its alert book now"
        }
    }
}
