import Foundation
import HubTestKit
import Logging
import Mosquitto

/// A logger for clients under test: quiet unless `TEST_LOG_LEVEL` asks for more.
func testLogger(_ label: String = "test") -> Logger {
    var logger = Logger(label: label)
    logger.logLevel =
        ProcessInfo.processInfo.environment["TEST_LOG_LEVEL"].flatMap { Logger.Level(rawValue: $0) } ?? .critical
    return logger
}

extension MosquittoConfiguration {
    /// A configuration for `broker` with short timeouts and a quick reconnect, so failures show fast.
    static func test(
        _ broker: MosquittoBroker,
        clientID: String? = nil,
        _ adjust: (inout MosquittoConfiguration) -> Void = { _ in }
    ) -> MosquittoConfiguration {
        var configuration = MosquittoConfiguration(host: broker.host, port: broker.port, clientID: clientID)
        configuration.operationTimeout = .seconds(5)
        configuration.reconnectDelay = .milliseconds(100)...(.milliseconds(500))
        adjust(&configuration)
        return configuration
    }
}

/// A connected client with inboxes on its messages and events; `close()` disconnects it.
struct Connected {
    let client: MosquittoClient
    let messages: Inbox<MQTTMessage>
    let events: Inbox<ConnectionEvent>
    let sessionPresent: Bool

    static func connect(_ configuration: MosquittoConfiguration) async throws -> Connected {
        let client = MosquittoClient(configuration: configuration, logger: testLogger())
        let messages = Inbox.consuming(client.messages)
        let events = Inbox.consuming(client.events)
        let sessionPresent = try await client.connect()
        return Connected(client: client, messages: messages, events: events, sessionPresent: sessionPresent)
    }

    func close() async { await client.disconnect() }
}

/// Runs `body` with a client connected to `broker`, disconnecting it afterwards even when `body` throws.
@discardableResult
func withClient<T: Sendable>(
    _ configuration: MosquittoConfiguration,
    _ body: (Connected) async throws -> T
) async throws -> T {
    let connected = try await Connected.connect(configuration)
    do {
        let result = try await body(connected)
        await connected.close()
        return result
    } catch {
        await connected.close()
        throw error
    }
}

extension Array where Element == UInt8 {
    /// Deterministic bytes covering every value, for byte-for-byte round trips.
    static func pattern(count: Int) -> [UInt8] {
        var state: UInt32 = 0x1234_5678
        return (0..<count).map { _ in
            state = state &* 1_664_525 &+ 1_013_904_223
            return UInt8(truncatingIfNeeded: state >> 24)
        }
    }
}

/// A held, persistent session at `broker` that has kept `statuses` (QoS 1 on `door`) for its next connection:
/// subscribed once, then sent them while nobody was connected. Returns the session's configuration.
func keptSession(
    _ broker: MosquittoBroker, clientID: String, statuses: [String] = ["open", "closed"]
) async throws -> MosquittoConfiguration {
    let held = MosquittoConfiguration.test(broker, clientID: clientID) {
        $0.cleanSession = false
        $0.holdsAcknowledgements = true
        $0.confirmationTimeout = .seconds(30)
    }
    try await withClient(held) { try await $0.client.subscribe("door", qos: .atLeastOnce) }
    try await withClient(.test(broker)) { sender in
        for status in statuses { try await sender.client.publish(topic: "door", payload: status, qos: .atLeastOnce) }
    }
    return held
}
