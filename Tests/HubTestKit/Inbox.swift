import Foundation

/// Collects what an `AsyncSequence` yields so a test can wait for an element with a deadline — never sleep.
public actor Inbox<Element: Sendable> {
    private var buffer: [Element] = []
    /// Elements that arrived and were not taken yet.
    public var waiting: Int { buffer.count }
    private var finished = false
    private var waiters: [UUID: CheckedContinuation<Void, Never>] = [:]
    private var consumer: Task<Void, Never>?

    /// Starts consuming `sequence` in the background.
    public static func consuming<S: AsyncSequence & Sendable>(_ sequence: S) -> Inbox<Element>
    where S.Element == Element {
        let inbox = Inbox()
        let task = Task {
            do {
                for try await element in sequence { await inbox.append(element) }
            } catch {}
            await inbox.finish()
        }
        Task { await inbox.setConsumer(task) }
        return inbox
    }

    private func setConsumer(_ task: Task<Void, Never>) { consumer = task }

    private func append(_ element: Element) {
        buffer.append(element)
        wakeAll()
    }

    private func finish() {
        finished = true
        wakeAll()
    }

    private func wakeAll() {
        let all = waiters
        waiters = [:]
        for (_, waiter) in all { waiter.resume() }
    }

    private var expired: Set<UUID> = []

    private func expire(_ id: UUID) {
        expired.insert(id)
        waiters.removeValue(forKey: id)?.resume()
    }

    /// Starts the timer that ends the waits of one call at its deadline.
    private func startTimer(_ id: UUID, _ deadline: ContinuousClock.Instant) -> Task<Void, Never> {
        Task {
            try? await Task.sleep(until: deadline)
            self.expire(id)
        }
    }

    /// Returns on the next change, or at once when the call's deadline has passed.
    private func wait(_ id: UUID) async {
        guard !expired.contains(id) else { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            waiters[id] = continuation
        }
    }

    private func endTimer(_ id: UUID, _ timer: Task<Void, Never>) {
        timer.cancel()
        expired.remove(id)
        waiters.removeValue(forKey: id)
    }

    /// Waits for the first element matching `predicate`; it and everything before it are taken from the inbox.
    public func next(
        within timeout: Duration = .seconds(10),
        _ what: String = "an element",
        where predicate: @Sendable (Element) -> Bool = { _ in true }
    ) async throws -> Element {
        let deadline = ContinuousClock.now + timeout
        let id = UUID()
        let timer = startTimer(id, deadline)
        defer { endTimer(id, timer) }
        do {
            while true {
                if let index = buffer.firstIndex(where: predicate) {
                    let element = buffer[index]
                    buffer.removeFirst(index + 1)
                    return element
                }
                if finished { throw TestKitError("the sequence ended before \(what) arrived; it held \(buffer)") }
                if ContinuousClock.now >= deadline {
                    throw TestKitError("no \(what) within \(timeout); received meanwhile: \(buffer.prefix(20))")
                }
                await wait(id)
            }
        }
    }

    /// Takes every element that arrived and was not taken yet, without waiting.
    public func drain() -> [Element] {
        defer { buffer = [] }
        return buffer
    }

    /// Waits until `count` elements have arrived and takes them.
    public func take(_ count: Int, within timeout: Duration = .seconds(10)) async throws -> [Element] {
        let deadline = ContinuousClock.now + timeout
        let id = UUID()
        let timer = startTimer(id, deadline)
        defer { endTimer(id, timer) }
        do {
            while buffer.count < count {
                if finished { throw TestKitError("the sequence ended after \(buffer.count) of \(count) elements") }
                if ContinuousClock.now >= deadline {
                    throw TestKitError("only \(buffer.count) of \(count) elements within \(timeout)")
                }
                await wait(id)
            }
        }
        defer { buffer.removeFirst(count) }
        return Array(buffer.prefix(count))
    }

    /// Waits until the sequence ends; returns what was left.
    public func end(within timeout: Duration = .seconds(10)) async throws -> [Element] {
        let deadline = ContinuousClock.now + timeout
        let id = UUID()
        let timer = startTimer(id, deadline)
        defer { endTimer(id, timer) }
        do {
            while !finished {
                if ContinuousClock.now >= deadline { throw TestKitError("the sequence did not end within \(timeout)") }
                await wait(id)
            }
        }
        return buffer
    }

    deinit { consumer?.cancel() }
}
