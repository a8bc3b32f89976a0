import Foundation
import HubCore
import HubSupport
import Logging

/// The receipts of a Pushover backend's emergency messages (priority 2, repeated on the phone until someone
/// acknowledges it in the app), kept in `pushover-<backend>.receipts.json` in the state directory so that a restart
/// forgets none of them. The hub polls those sent without a `callback` (a hub with no public address: polling works
/// behind NAT) and takes an acknowledgement in the app as one of the alert; and when the alert is acknowledged some
/// other way, it cancels the phone's retries (`POST /1/receipts/{receipt}/cancel.json`).
final class PushoverReceipts: Sendable {
    struct Receipt: Sendable, Hashable, Codable {
        var receipt: String
        /// The alert group's handle (`AlertContext.replaceHandle`).
        var group: String
        /// The message's Acknowledge token, for an acknowledgement seen by polling.
        var token: String?
        /// Whether Pushover calls the hub back instead (`callback`): then it is not polled.
        var polled: Bool
        /// After this Pushover retries no more (`emergency_expire`, and a minute): forgotten.
        var until: Timestamp
    }

    /// Pushover asks for no more than one poll of a receipt every 5 seconds.
    static let pollInterval = Duration.seconds(5)

    let path: String
    private let logger: Logger
    private let receipts: Locked<[Receipt]>
    /// Rung when a receipt to poll comes: the poller sleeps while there is none.
    let doorbell = Doorbell()
    private let writing = Locked(())

    init(directory: String, backend: String, logger: Logger) {
        path = "\(directory)/pushover-\(backend).receipts.json"
        self.logger = logger
        var kept: [Receipt] = []
        if let data = FileManager.default.contents(atPath: path) {
            do {
                kept = try JSONDecoder().decode([Receipt].self, from: data)
            } catch {
                logger.error(
                    "cannot read the Pushover receipts; their alerts are not polled",
                    metadata: ["path": "\(path)", "error": "\(error)"])
            }
        }
        receipts = Locked(kept)
    }

    func add(_ receipt: Receipt) {
        receipts.withLock { $0.append(receipt) }
        save()
        if receipt.polled { doorbell.ring() }
    }

    /// The receipts to poll now (expired ones are forgotten).
    func toPoll(now: Timestamp) -> [Receipt] {
        let (due, changed) = receipts.withLock { receipts -> ([Receipt], Bool) in
            let before = receipts.count
            receipts.removeAll { $0.until < now }
            return (receipts.filter(\.polled), receipts.count != before)
        }
        if changed { save() }
        return due
    }

    /// A callback's receipt, if it is one of these: it is polled from now on (and at once), so that who acknowledged
    /// is what Pushover's API says, never what a POST's body claims. Whether it is one of these.
    func pollNow(_ receipt: String) -> Bool {
        let known = receipts.withLock { receipts -> Bool in
            guard let index = receipts.firstIndex(where: { $0.receipt == receipt }) else { return false }
            receipts[index].polled = true
            return true
        }
        if known {
            save()
            doorbell.ring()
        }
        return known
    }

    /// Takes out the receipts of `group` (to cancel them), or the one named `receipt`.
    @discardableResult
    func take(group: String? = nil, receipt: String? = nil) -> [Receipt] {
        let taken = receipts.withLock { receipts -> [Receipt] in
            let taken = receipts.filter { $0.group == group || $0.receipt == receipt }
            receipts.removeAll { $0.group == group || $0.receipt == receipt }
            return taken
        }
        if !taken.isEmpty { save() }
        return taken
    }

    private func save() {
        writing.withLock { _ in
            let receipts = self.receipts.withLock { $0 }
            do {
                try replaceFileAtomically(at: path, with: Array(try JSONEncoder().encode(receipts)))
            } catch {
                logger.error(
                    "cannot write the Pushover receipts; a restart would forget them",
                    metadata: ["path": "\(path)", "error": "\(error)"])
            }
        }
    }
}

extension PushoverNotifier: AnswerListener {
    /// Polls the receipts of emergency messages sent without a callback, every 5 seconds while there are any: an
    /// acknowledgement in the Pushover app acknowledges the alert (by the device that acknowledged it).
    func listen(logger: Logger, _ answer: @escaping @Sendable (_ token: String, _ by: String) async -> String) async {
        var backoff = AnswerBackoff()
        while !Task.isCancelled {
            let due = receipts.toPoll(now: .now)
            if due.isEmpty {
                await receipts.doorbell.wait(until: nil)
                continue
            }
            for receipt in due where !Task.isCancelled {
                do {
                    try await poll(receipt, logger: logger, answer)
                    backoff.succeeded()
                } catch {
                    // Polled again at the next round (every 5 s, as Pushover asks).
                    await backoff.failed("cannot poll a Pushover receipt", error, logger: logger, waiting: false)
                }
            }
            try? await Task.sleep(for: PushoverReceipts.pollInterval)
        }
    }

    private func poll(
        _ receipt: PushoverReceipts.Receipt, logger: Logger,
        _ answer: @escaping @Sendable (_ token: String, _ by: String) async -> String
    ) async throws {
        let url = settings.url + "/1/receipts/\(receipt.receipt).json?token=\(settings.token)"
        let reply = try await http.get(url, limit: 16_384)
        if (400..<500).contains(reply.status) && reply.status != 429 {
            // Pushover does not know it (or the token): polling again will not change that.
            receipts.take(receipt: receipt.receipt)
            logger.warning(
                "Pushover refused a receipt; it is not polled again",
                metadata: [
                    "receipt": "\(receipt.receipt)", "status": "\(reply.status)",
                    "errors": "\(Self.errors(reply.body) ?? "")",
                ])
            return
        }
        guard reply.status == 200, let tree = try? JSONTree.parse(Array(reply.body.utf8)) else {
            throw PushoverReceiptError(description: "\(settings.host) answered HTTP \(reply.status)")
        }
        if case .number(1, _)? = tree["acknowledged"] {
            receipts.take(receipt: receipt.receipt)
            guard let token = receipt.token else { return }
            var person = "Pushover"
            if case .string(let device)? = tree["acknowledged_by_device"], !device.isEmpty {
                person = "Pushover (\(Template.clip(device, 25)))"
            }
            let words = await answer(token, person)
            logger.info(
                "Pushover emergency acknowledged in the app",
                metadata: ["receipt": "\(receipt.receipt)", "by": "\(person)", "outcome": "\(words)"])
        } else if case .number(1, _)? = tree["expired"] {
            receipts.take(receipt: receipt.receipt)
        }
    }

    /// Cancels the phone's retries of the group's emergency messages: it was acknowledged some other way.
    func cancelRetries(_ notification: Notification) async -> DeliveryResult {
        guard let group = notification.alert?.replaceHandle else { return .delivered }
        for receipt in receipts.take(group: group) {
            let url = settings.url + "/1/receipts/\(receipt.receipt)/cancel.json"
            let what = "Pushover at \(settings.host) (cancelling \(receipt.receipt))"
            switch await http.postForm(url, fields: [("token", settings.token)]) {
            case .success(let answer):
                // 4xx: gone already (acknowledged, expired); anything else is tried again by the queue.
                if answer.status >= 500 || answer.status == 429 {
                    receipts.add(receipt)
                    return HTTPDelivery.result(answer, what: what)
                }
            case .failure(let error):
                receipts.add(receipt)
                return HTTPDelivery.result(error, what: what)
            }
        }
        return .delivered
    }
}

struct PushoverReceiptError: Error, CustomStringConvertible {
    var description: String
}
