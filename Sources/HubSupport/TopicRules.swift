/// MQTT topic rules (MQTT 3.1.1 §4.7), checked before libmosquitto sees a topic.
package enum TopicRules {
    /// Why `topic` can't be published to, or `nil` when it can.
    package static func problemWithPublishTopic(_ topic: String) -> String? {
        // Bytes, not Characters: '+', '#' and NUL are ASCII and never part of a multi-byte sequence, and this
        // runs for every sensor of a 100,000-sensor registry.
        let utf8 = topic.utf8
        if utf8.isEmpty { return "topic is empty" }
        if utf8.count > 65535 { return "topic is longer than 65535 bytes" }
        for byte in utf8 {
            switch byte {
            case UInt8(ascii: "+"), UInt8(ascii: "#"):
                return
                    "topic '\(UnsafeText.escaped(topic))' contains a wildcard (+ or #), which only subscriptions may use"
            case 0:
                return "topic contains a NUL character"
            default:
                continue
            }
        }
        return nil
    }

    /// Why `filter` can't be subscribed to, or `nil` when it can.
    /// Whether `topic` matches the subscription `filter` (`+` one level, `#` the rest), as MQTT 3.1.1 §4.7 says.
    package static func matches(filter: String, topic: String) -> Bool {
        let filterLevels = filter.split(separator: "/", omittingEmptySubsequences: false)
        let topicLevels = topic.split(separator: "/", omittingEmptySubsequences: false)
        for (index, level) in filterLevels.enumerated() {
            if level == "#" { return true }
            guard index < topicLevels.count else { return false }
            if level != "+" && level != topicLevels[index] { return false }
        }
        return filterLevels.count == topicLevels.count
    }

    package static func problemWithFilter(_ filter: String) -> String? {
        if filter.isEmpty { return "topic filter is empty" }
        if filter.utf8.count > 65535 { return "topic filter is longer than 65535 bytes" }
        if filter.unicodeScalars.contains(where: { $0.value == 0 }) { return "topic filter contains a NUL character" }
        let levels = filter.split(separator: "/", omittingEmptySubsequences: false)
        for (index, level) in levels.enumerated() {
            if level.contains("#") && (level != "#" || index != levels.count - 1) {
                return "in topic filter '\(UnsafeText.escaped(filter))', '#' must be a whole level and the last one"
            }
            if level.contains("+") && level != "+" {
                return "in topic filter '\(UnsafeText.escaped(filter))', '+' must be a whole level"
            }
        }
        return nil
    }
}
