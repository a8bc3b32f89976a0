import HubSupport
import Mosquitto
import Testing

/// Settings libmosquitto would reject with a bare "invalid arguments" are named before it sees them.
@Suite struct ConfigurationTests {
    @Test func defaultsAreValid() throws {
        try MosquittoConfiguration().validate()
    }

    @Test(arguments: [
        (
            MosquittoConfiguration(cleanSession: false),
            "a persistent session (clean session off) needs a fixed client id"
        ),
        (MosquittoConfiguration(port: 0), "port 0 is outside 1–65535"),
        (MosquittoConfiguration(port: 70000), "port 70000 is outside 1–65535"),
        (MosquittoConfiguration(keepAlive: .zero), "keep-alive of 0 s is outside 5–65535 s"),
        (MosquittoConfiguration(host: ""), "host is empty"),
        (MosquittoConfiguration(clientID: ""), "client id is empty; leave it unset for a random one"),
        (MosquittoConfiguration(credentials: .init(username: "", password: "x")), "user name is empty"),
        (
            MosquittoConfiguration(will: .init(topic: "hub/#", payload: "offline")),
            "will topic: topic 'hub/#' contains a wildcard (+ or #), which only subscriptions may use"
        ),
        (
            MosquittoConfiguration(tls: .init(trustRoots: .caFile("/nonexistent/ca.crt"))),
            "TLS CA file '/nonexistent/ca.crt' does not exist"
        ),
        (MosquittoConfiguration(messageBufferLimit: 0), "the message buffer limit must be at least 1"),
    ])
    func invalidSettingsAreNamed(configuration: MosquittoConfiguration, message: String) {
        #expect(throws: MosquittoError.invalidConfiguration(message)) { try configuration.validate() }
    }

    @Test func invalidMessagesReadWell() {
        let error = MosquittoError.invalidConfiguration("port 0 is outside 1–65535")
        #expect(error.description == "invalid MQTT configuration: port 0 is outside 1–65535")
    }

    @Test(arguments: ["kitchen", "home/+/status", "home/#", "#", "+", "a//b", "$SYS/broker/uptime"])
    func validFilters(filter: String) {
        #expect(TopicRules.problemWithFilter(filter) == nil)
    }

    @Test(arguments: ["", "home/#/x", "home#", "ho+me/x", "a/b+"])
    func invalidFilters(filter: String) {
        #expect(TopicRules.problemWithFilter(filter) != nil)
    }

    @Test(arguments: ["kitchen", "front door", "home/kitchen/status", "küche"])
    func validTopics(topic: String) {
        #expect(TopicRules.problemWithPublishTopic(topic) == nil)
    }

    @Test(arguments: ["", "home/+", "home/#", "a\u{0}b"])
    func invalidTopics(topic: String) {
        #expect(TopicRules.problemWithPublishTopic(topic) != nil)
    }
}
