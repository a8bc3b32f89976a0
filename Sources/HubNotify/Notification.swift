import Crypto
import Foundation
import HubCore
import HubSupport

/// One event rendered for one backend (and, for push, one device): what goes into the outbox and is retried until
/// it is delivered, fails for good, or grows too old.
public struct Notification: Sendable, Hashable, Codable {
    /// The event's id, the same for every backend it goes to, and across retries and restarts: receivers
    /// de-duplicate on it (delivery is at least once).
    public var id: String
    /// The backend's name in the configuration.
    public var backend: String
    /// Which device, for a backend that sends one notification per device (APNs); a key id, never the token.
    public var target: String?
    /// The rule that sent it.
    public var rule: String
    public var event: SensorEvent
    public var title: String
    public var body: String
    /// 1 (min) to 5 (urgent); 3 is the default.
    public var priority: Int
    /// When it was first queued; retries end when it is older than the backend's maximum age.
    public var created: Timestamp
    /// For a message of the alert stage: its group, why it was sent and the alerts it names.
    public var alert: AlertContext?

    /// What a message of the alert stage is about.
    public struct AlertContext: Sendable, Hashable, Codable {
        /// The group's key: the handle by which a backend replaces the group's earlier notification.
        public var group: String
        public var reason: AlertMessage.Reason
        public var alerts: [String]
        /// Buttons for the alerts still firing: acknowledge, snooze.
        public var actions: [Action]

        /// One button: a signed token (`ActionToken`), and the link that acts on it when the hub has a public URL.
        public struct Action: Sendable, Hashable, Codable {
            public var title: String
            public var token: String
            /// `<alerts.public_url>/a/<token>`: GET shows a confirmation page, POST acts.
            public var url: String?

            public init(title: String, token: String, url: String?) {
                self.title = title
                self.token = token
                self.url = url
            }
        }

        /// The group's handle on this hub (`AlertContext.handle(of:key:)`); nil in a notification an earlier version
        /// queued.
        public var handle: String?

        /// The group's key as a push service takes an id to replace by (ntfy's sequence id, an APNs collapse id,
        /// a Web Push tag, a chat's thread): `sh-` and 12 hex digits, unique to this hub (issue 52: six hubs used
        /// `sh-838d6dffc6c7` for rule `leak`, so two on one ntfy topic replaced and cleared each other's
        /// notifications).
        public var replaceHandle: String { handle ?? "sh-" + ActionToken.handle(of: "group:" + group) }

        /// A group's handle under the hub's key (the key of its buttons, random, one per hub or cluster): 12 hex digits
        /// of an HMAC-SHA256 of the group's key.
        public static func handle(of group: String, key: SymmetricKey) -> String {
            let code = HMAC<SHA256>.authenticationCode(for: Array(("group:" + group).utf8), using: key)
            return "sh-" + code.prefix(6).map { String(format: "%02x", $0) }.joined()
        }

        private enum CodingKeys: String, CodingKey { case group, reason, alerts, actions, handle }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            group = try container.decode(String.self, forKey: .group)
            reason = try container.decode(AlertMessage.Reason.self, forKey: .reason)
            alerts = try container.decode([String].self, forKey: .alerts)
            actions = try container.decodeIfPresent([Action].self, forKey: .actions) ?? []
            handle = try container.decodeIfPresent(String.self, forKey: .handle)
        }

        public init(
            group: String, reason: AlertMessage.Reason, alerts: [String], actions: [Action] = [], handle: String? = nil
        ) {
            self.group = group
            self.reason = reason
            self.alerts = alerts
            self.actions = actions
            self.handle = handle
        }

        /// As members of an object being written: `group`, `reason`, `alerts`.
        func writeFields(into writer: inout JSONWriter, first: inout Bool) {
            writer.key("group", first: &first)
            writer.string(group)
            writer.key("reason", first: &first)
            writer.string(reason.rawValue)
            writer.key("alerts", first: &first)
            writer.strings(alerts)
            writer.key("actions", first: &first)
            writer.raw("[")
            for (index, action) in actions.enumerated() {
                if index > 0 { writer.raw(",") }
                var inner = true
                writer.raw("{")
                writer.key("title", first: &inner)
                writer.string(action.title)
                writer.key("token", first: &inner)
                writer.string(action.token)
                if let url = action.url {
                    writer.key("url", first: &inner)
                    writer.string(url)
                }
                writer.raw("}")
            }
            writer.raw("]")
        }
    }

    /// The outbox's key: one delivery of one event to one backend (and device).
    public var key: String { target.map { "\(id)/\(backend)/\($0)" } ?? "\(id)/\(backend)" }

    public init(
        id: String, backend: String, target: String? = nil, rule: String, event: SensorEvent, title: String,
        body: String, priority: Int = 3, created: Timestamp = .now, alert: AlertContext? = nil
    ) {
        self.alert = alert
        self.id = id
        self.backend = backend
        self.target = target
        self.rule = rule
        self.event = event
        self.title = title
        self.body = body
        self.priority = priority
        self.created = created
    }

    /// The notification as receivers get it (webhook and exec bodies, file lines, MQTT payloads): flat, stable keys.
    public var json: [UInt8] {
        var writer = JSONWriter(capacity: 256)
        var first = true
        writer.raw("{")
        writer.key("id", first: &first)
        writer.string(id)
        event.writeFields(into: &writer, first: &first, names: .receivers)
        writer.key("rule", first: &first)
        writer.string(rule)
        writer.key("title", first: &first)
        writer.string(title)
        writer.key("message", first: &first)
        writer.string(body)
        writer.key("priority", first: &first)
        writer.number(priority)
        alert?.writeFields(into: &writer, first: &first)
        writer.raw("}")
        return writer.bytes
    }
}

/// What a backend says about one attempt.
public enum DeliveryResult: Sendable, Hashable, CustomStringConvertible {
    /// Delivered: done.
    case delivered
    /// Not now: try again, after `after` when the receiver said how long (HTTP `Retry-After`).
    case retry(reason: String, after: Duration? = nil)
    /// Never going to work (a 4xx, a command that exits with an error): give up.
    case failed(reason: String)
    /// The receiver is gone for good, as receivers routinely go (APNs retired the device's token): given up and
    /// counted like a failure, but logged at notice, not as an error.
    case retired(reason: String)

    public var description: String {
        switch self {
        case .delivered: return "delivered"
        case .retry(let reason, let after):
            return "will retry: \(reason)" + (after.map { " (retry after \(DurationText.format($0)))" } ?? "")
        case .failed(let reason), .retired(let reason): return "failed: \(reason)"
        }
    }
}

/// What `expand` throws when a push backend has nobody at all to send to (no device registered): the router logs
/// it and counts the notification as failed. An empty list instead means devices are there but none chose the
/// event: nothing to send, nothing failed.
public struct NoRecipients: Error, Sendable, CustomStringConvertible {
    public var description: String

    public init(_ description: String) {
        self.description = description
    }
}

/// What a publish throws when the broker refused the message for good (an MQTT 5 PUBACK saying the client is not
/// authorised for the topic, or that the topic or payload is invalid): the `mqtt` backend gives it up rather than
/// retrying it forever. A broker speaking MQTT 3.1.1 has no way to say so; it drops such a message in silence.
public struct PublishRefused: Error, Sendable, CustomStringConvertible {
    public var description: String

    public init(_ description: String) {
        self.description = description
    }
}

/// A way to deliver notifications: a phone push service, an HTTP endpoint, a command, a file.
///
/// `send` makes one attempt and says how it went; the queue in front of it does the retrying, the timeouts and the
/// bookkeeping. A backend is called concurrently up to its configured concurrency.
public protocol Notifier: Sendable {
    /// Makes one attempt to deliver `notification`.
    func send(_ notification: Notification) async -> DeliveryResult
    /// How many notifications one attempt may take (`send(batch:)`); 1 unless a backend can do better in bulk.
    var batchSize: Int { get }
    /// One attempt for several notifications, a result for each, in order.
    func send(batch: [Notification]) async -> [DeliveryResult]
    /// The copies of one notification this backend needs: one per device that chose the event for push (none when
    /// no device did; `NoRecipients` when there is no device at all), else just the one. The router calls it on the
    /// pipeline's executor: it reads what it needs (the devices' file) and does not wait on the network.
    func expand(_ notification: Notification) throws -> [Notification]
    /// Releases what the backend holds (HTTP connections).
    func shutdown() async
    /// True when `send` itself gives up at the policy's timeout (an HTTP client's deadline); the queue then runs
    /// no watchdog of its own for each attempt.
    var enforcesTimeout: Bool { get }
}

/// A notifier whose attempt needs no task: it starts on the caller's thread and tells `done` once, on whichever
/// thread its I/O ends (an MQTT client's network thread). Its queue starts a notification as it is queued, when
/// nothing waits before it (`BackendQueue.enqueue`, on the pipeline's thread): no task and no timer wakes for it.
protocol StartingNotifier: Notifier {
    func start(_ notification: Notification, done: @escaping @Sendable (DeliveryResult) -> Void)
}

extension StartingNotifier {
    func send(_ notification: Notification) async -> DeliveryResult {
        await withCheckedContinuation { continuation in
            start(notification) { continuation.resume(returning: $0) }
        }
    }

    /// Every one started at once, in order: one connection keeps the order they were started in, so a subscriber
    /// (or a retained message) ends on a sensor's latest event.
    func send(batch: [Notification]) async -> [DeliveryResult] {
        guard !batch.isEmpty else { return [] }
        return await withCheckedContinuation { continuation in
            let answers = Locked(
                (left: batch.count, results: [DeliveryResult](repeating: .delivered, count: batch.count)))
            for (index, notification) in batch.enumerated() {
                start(notification) { result in
                    let all = answers.withLock { answers -> [DeliveryResult]? in
                        answers.results[index] = result
                        answers.left -= 1
                        return answers.left == 0 ? answers.results : nil
                    }
                    if let all { continuation.resume(returning: all) }
                }
            }
        }
    }
}

extension Notifier {
    public func expand(_ notification: Notification) throws -> [Notification] { [notification] }
    public var batchSize: Int { 1 }
    public func send(batch: [Notification]) async -> [DeliveryResult] {
        var results: [DeliveryResult] = []
        for notification in batch { results.append(await send(notification)) }
        return results
    }
    public func shutdown() async {}
    public var enforcesTimeout: Bool { false }
}
