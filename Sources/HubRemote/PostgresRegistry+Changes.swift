import HubCore
import HubSupport
import Logging
import PostgresNIO

extension PostgresRegistry {
    /// A signal after every change of the sensors or the broker settings that anyone (an agent, hubctl) commits, from
    /// a connection of its own that LISTENs; and one each time that connection is made, since what was announced while
    /// it was down is lost (PostgreSQL keeps nothing for a listener that is gone), so the caller reads the revision
    /// again. A server that stops answering without closing is noticed by a `SELECT 1` every 5 s.
    public func changes(logger: Logger) -> AsyncStream<Void> {
        Self.notifications(on: Self.channel, server: server, as: applicationName + " listener", logger: logger)
    }

    /// A signal after each notification on `channel`, and one each time the listening connection is made (what was
    /// announced while it was down is lost); the connection is made again, with back-off, whenever it fails.
    static func notifications(on channel: String, server: DatabaseSettings, as name: String, logger: Logger)
        -> AsyncStream<Void>
    {
        let (stream, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let location = server.url
        let follower = Task {
            var failures = 0
            while !Task.isCancelled {
                do {
                    try await Self.listen(on: channel, to: server, as: name, logger: logger) {
                        if failures > 0 {
                            logger.notice(
                                "following the database's notifications again",
                                metadata: ["store": "\(location)", "channel": "\(channel)"])
                        }
                        failures = 0
                        continuation.yield()
                    } changed: {
                        continuation.yield()
                    }
                } catch {
                    guard !Task.isCancelled else { break }
                    failures += 1
                    if failures == 1 {
                        logger.warning(
                            "cannot follow the database's notifications; trying again",
                            metadata: [
                                "store": "\(location)", "channel": "\(channel)", "error": "\(Self.reason(error))",
                            ])
                    }
                    try? await Task.sleep(for: RemoteForwarder.backOff(afterFailures: failures, maximum: .seconds(30)))
                }
            }
        }
        continuation.onTermination = { _ in follower.cancel() }
        return stream
    }

    /// Connects, LISTENs, calls `listening`, then `changed` for each notification, until the connection fails or
    /// stops answering (thrown) or the task is cancelled (returns).
    private static func listen(
        on channel: String, to server: DatabaseSettings, as name: String, logger: Logger, listening: () -> Void,
        changed: @escaping @Sendable () -> Void
    ) async throws {
        let connection = try await bounded(.seconds(30), late: { try? await $0.close() }) {
            try await PostgresConnection.connect(to: server, applicationName: name, logger: logger)
        }
        do {
            try await connection.listen(on: channel) { notifications in
                listening()
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        while true {
                            try await Task.sleep(for: .seconds(5))
                            _ = try await bounded(.seconds(5)) {
                                try await connection.query("SELECT 1", logger: logger)
                            }
                        }
                    }
                    group.addTask {
                        for try await _ in notifications { changed() }
                        try Task.checkCancellation()
                        throw ListenerEnded()
                    }
                    defer { group.cancelAll() }
                    _ = try await group.next()
                }
            }
        } catch {
            try? await connection.close()
            throw error
        }
        try? await connection.close()
    }
}

/// The server ended the notifications without an error.
struct ListenerEnded: Error, CustomStringConvertible {
    var description: String { "the database stopped sending notifications" }
}
