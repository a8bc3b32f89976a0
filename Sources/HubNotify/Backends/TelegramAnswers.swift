import Foundation
import HubCore
import Logging

/// A backend that hears people's answers to its messages: a button pressed on the phone, fetched by the hub (so it
/// works behind NAT, with no public address).
protocol AnswerListener: Notifier {
    /// Runs until cancelled; each answer's token goes to `answer`, whose words are shown to the person.
    func listen(logger: Logger, _ answer: @escaping @Sendable (_ token: String, _ by: String) async -> String) async
}

/// How a listener takes a failed fetch (the server down, a bad token): the first failure and every 60th logged,
/// and a wait of 2 s a failure in a row, 30 s at most, before the next try.
struct AnswerBackoff {
    private(set) var failures = 0

    mutating func succeeded() { failures = 0 }

    /// Logs `what` (when due) and, unless `waiting` is false (a listener that waits anyway), waits.
    mutating func failed(_ what: String, _ error: any Error, logger: Logger, waiting: Bool = true) async {
        failures += 1
        if failures == 1 || failures % 60 == 0 {
            logger.warning("\(what); trying again", metadata: ["error": "\(error)", "failures": "\(failures)"])
        }
        if waiting { try? await Task.sleep(for: .seconds(min(30, 2 * failures))) }
    }
}

extension TelegramNotifier: AnswerListener {
    /// What a button's `callback_data` starts with: the rest is an `ActionToken`.
    static let callbackPrefix = "sh:"

    /// Long-polls `getUpdates` for button presses (`callback_query`), answers each (`answerCallbackQuery`) and takes
    /// the buttons off a message whose alerts were acknowledged or snoozed (`editMessageReplyMarkup`). Telegram
    /// delivers no update through `getUpdates` while a webhook is set: a bot that has one gets no button presses.
    func listen(logger: Logger, _ answer: @escaping @Sendable (_ token: String, _ by: String) async -> String) async {
        let base = settings.url + "/bot" + settings.token
        // The long poll ends before the backend's own timeout.
        let wait = max(0, min(25, Int(http.timeout.components.seconds) - 2))
        var offset: Int64 = 0
        var backoff = AnswerBackoff()
        while !Task.isCancelled {
            let url =
                base + "/getUpdates?timeout=\(wait)&offset=\(offset)&allowed_updates=%5B%22callback_query%22%5D"
            let updates: [JSONTree]
            let asked = ContinuousClock.now
            do {
                let reply = try await http.get(url, limit: 1 << 20)
                guard reply.status == 200,
                    case .array(let list)? = (try? JSONTree.parse(Array(reply.body.utf8)))?["result"]
                else {
                    throw TelegramAnswerError(description: "getUpdates answered HTTP \(reply.status)")
                }
                updates = list
                backoff.succeeded()
                // A server that answers a long poll at once with nothing is not waited on in a tight loop.
                if list.isEmpty && ContinuousClock.now - asked < .seconds(1) { try? await Task.sleep(for: .seconds(1)) }
            } catch {
                await backoff.failed("cannot fetch Telegram button presses", error, logger: logger)
                continue
            }
            for update in updates {
                if case .number(let id, _)? = update["update_id"] { offset = max(offset, Int64(id) + 1) }
                guard let query = update["callback_query"], case .string(let queryID)? = query["id"],
                    case .string(let data)? = query["data"], data.hasPrefix(Self.callbackPrefix)
                else { continue }
                let person =
                    query["from"].flatMap { from -> String? in
                        if case .string(let name)? = from["username"] { return "@" + name }
                        if case .string(let name)? = from["first_name"] { return name }
                        return nil
                    } ?? "telegram"
                // This press takes the message's buttons off itself (below): the acknowledgement it makes must not
                // take them off a second time, and the group's next update is a new message.
                if case .number(let messageID, _)? = query["message"]?["message_id"], messageID.isFinite,
                    abs(messageID) < 1e15
                {
                    groups.forget(message: Int(messageID))
                }
                let words = await answer(String(data.dropFirst(Self.callbackPrefix.count)), person)
                _ = await http.postJSON(base + "/answerCallbackQuery") { writer, first in
                    writer.key("callback_query_id", first: &first)
                    writer.string(queryID)
                    writer.key("text", first: &first)
                    writer.string(words)
                }
                guard words.hasPrefix("Acknowledged") || words.hasPrefix("Snoozed"),
                    case .number(let messageID, _)? = query["message"]?["message_id"],
                    let chat = query["message"]?["chat"]?["id"]
                else { continue }
                _ = await removeButtons(base: base, chat: chat, message: Int(messageID))
            }
        }
    }
}

struct TelegramAnswerError: Error, CustomStringConvertible {
    var description: String
}
