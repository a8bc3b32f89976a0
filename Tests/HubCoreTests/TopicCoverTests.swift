import HubSupport
import Testing

@Suite struct TopicCoverTests {
    @Test func oneTemplateIsOneFilter() {
        let topics = (0..<10_000).map { "bench/s\($0)" }
        #expect(TopicCover.filters(covering: topics) == ["bench/+"])
        let shelly = (0..<50).map { "shellies/door-\($0)/sensor/state" }
        #expect(TopicCover.filters(covering: shelly) == ["shellies/+/sensor/state"])
    }

    @Test func severalTemplatesAndLoneTopics() {
        let topics = (0..<5).map { "sensors/\($0)" } + (0..<3).map { "zigbee2mqtt/d\($0)" } + ["garage/door/state"]
        #expect(TopicCover.filters(covering: topics) == ["garage/door/state", "sensors/+", "zigbee2mqtt/+"])
        // Every topic is matched by a filter, and each filter by a topic.
        let filters = TopicCover.filters(covering: topics)
        for topic in topics { #expect(filters.contains { TopicRules.matches(filter: $0, topic: topic) }, "\(topic)") }
    }

    @Test func aLoneTopicAndDollarTopicsStayWhole() {
        #expect(TopicCover.filters(covering: ["kitchen"]) == ["kitchen"])
        #expect(TopicCover.filters(covering: ["$hub/a", "$hub/b"]) == ["$hub/+"])
        #expect(TopicCover.filters(covering: ["$a/x", "$b/x"]) == ["$a/x", "$b/x"])
        #expect(TopicCover.filters(covering: ["a/b", "c/d"], minimumGroup: 2) == ["a/b", "c/d"])
        #expect(TopicCover.filters(covering: [String]()) == [])
    }
}
