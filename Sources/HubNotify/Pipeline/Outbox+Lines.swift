import Foundation
import HubCore

// The outbox's lines, as the log keeps them: written by hand (JSONWriter, for speed), read back by Codable.
extension Outbox {
    /// `{"done":"<key>"}` lines for `keys`.
    static func doneLines(_ keys: some Collection<String>) -> [UInt8] {
        var writer = JSONWriter(capacity: keys.count * 64)
        for key in keys {
            writer.raw("{\"done\":")
            writer.string(key)
            writer.raw("}\n")
        }
        return writer.bytes
    }

    /// `{"add":{…}}` for `notification`, in the shape `Entry`'s Codable reads (`OutboxLineTests` checks both ways).
    static func line(_ notification: Notification) -> [UInt8] {
        var writer = JSONWriter(capacity: 400)
        var first = true
        writer.raw("{\"add\":{")
        writer.key("id", first: &first)
        writer.string(notification.id)
        writer.key("backend", first: &first)
        writer.string(notification.backend)
        if let target = notification.target {
            writer.key("target", first: &first)
            writer.string(target)
        }
        writer.key("rule", first: &first)
        writer.string(notification.rule)
        writer.key("event", first: &first)
        notification.event.write(into: &writer)
        writer.key("title", first: &first)
        writer.string(notification.title)
        writer.key("body", first: &first)
        writer.string(notification.body)
        writer.key("priority", first: &first)
        writer.number(notification.priority)
        writer.key("created", first: &first)
        writer.timestamp(notification.created)
        if let alert = notification.alert {
            writer.key("alert", first: &first)
            var inner = true
            writer.raw("{")
            alert.writeFields(into: &writer, first: &inner)
            writer.raw("}")
        }
        writer.raw("}}")
        return writer.bytes
    }

    struct Entry: Codable {
        var add: Notification?
        var done: String?
    }
}
