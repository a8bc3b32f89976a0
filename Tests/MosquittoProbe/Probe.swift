// A small client on the Mosquitto wrapper, for what a test can't do in-process and for the receive benchmark.
import ArgumentParser
import Foundation
import Logging
import Mosquitto

@main
struct Probe: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mosquitto-probe",
        abstract: "Exercise the Mosquitto wrapper from a separate process.",
        subcommands: [Receive.self, Hold.self, Past1024.self]
    )
}

struct BrokerOptions: ParsableArguments {
    @Option var host = "127.0.0.1"
    @Option var port = 1883
    @Option var clientID: String?
    @Option var qos = 0
    @Option var logLevel: Logger.Level = .warning

    func makeLogger() -> Logger {
        var handler = StreamLogHandler.standardError(label: "probe")
        handler.logLevel = logLevel
        return Logger(label: "probe") { _ in handler }
    }

    var mqttQoS: MQTTQoS { MQTTQoS(rawValue: Int32(qos)) ?? .atMostOnce }
}

/// Prints a line and flushes, so a parent process reading our output sees it at once.
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

extension Probe {
    /// Receives a burst and prints how fast it came: the receive benchmark's subject.
    struct Receive: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Subscribe, say 'ready', receive COUNT messages, print the rate.")
        @OptionGroup var broker: BrokerOptions
        @Option var filter = "bench/#"
        @Option var count = 100_000
        @Option(help: "Give up after this many seconds, saying how many arrived.") var timeout: Double = 120

        func run() async throws {
            var configuration = MosquittoConfiguration(host: broker.host, port: broker.port, clientID: broker.clientID)
            configuration.messageBufferLimit = count + 1
            let client = MosquittoClient(configuration: configuration, logger: broker.makeLogger())
            try await client.connect()
            try await client.subscribe(filter, qos: broker.mqttQoS)
            say("ready")
            let watchdog = Task {
                try await Task.sleep(for: .milliseconds(Int(timeout * 1000)))
                await client.disconnect()
            }
            defer { watchdog.cancel() }
            var received = 0
            var bytes = 0
            var first: ContinuousClock.Instant?
            for await message in client.messages {
                if first == nil { first = .now }
                received += 1
                bytes += message.payload.count
                if received == count { break }
            }
            // Wall-clock time of the last message, comparable with `date +%s.%N` in the benchmark script, which
            // should not count the disconnect that follows.
            var now = timespec()
            clock_gettime(CLOCK_REALTIME, &now)
            say("last-message-at \(now.tv_sec).\(String(format: "%09d", now.tv_nsec))")
            let elapsed = first.map { ContinuousClock.now - $0 } ?? .zero
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            let stats = client.statistics
            say(
                "received \(received) messages (\(bytes) payload bytes) in \(String(format: "%.3f", seconds)) s"
                    + " from first to last; dropped \(stats.dropped)")
            await client.disconnect()
            if received < count { throw ExitCode(1) }
        }
    }

    /// Connects with a last will and waits to be killed: the test of the will.
    struct Hold: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Connect with a will, say 'connected', and wait to be killed.")
        @OptionGroup var broker: BrokerOptions
        @Option var willTopic: String
        @Option var willPayload: String

        func run() async throws {
            var configuration = MosquittoConfiguration(host: broker.host, port: broker.port, clientID: broker.clientID)
            configuration.will = .init(topic: willTopic, payload: willPayload, qos: .atLeastOnce, retain: false)
            let client = MosquittoClient(configuration: configuration, logger: broker.makeLogger())
            try await client.connect()
            say("connected")
            for await _ in client.events {}
        }
    }

    /// Pushes the next socket past select()'s limit of 1023, which libmosquitto's own loop can't watch, and
    /// reports whether the client reconnects on it and a QoS 1 publish makes the round trip.
    struct Past1024: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "past-1024",
            abstract: "Connect, fill every descriptor below 1024 when the connection drops, then publish once back.")
        @OptionGroup var broker: BrokerOptions

        func run() async throws {
            var limit = rlimit()
            getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
            limit.rlim_cur = max(limit.rlim_cur, min(limit.rlim_max, 4096))
            setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
            guard limit.rlim_cur > 1100 else { throw ValidationError("cannot raise the open-file limit above 1100") }
            var configuration = MosquittoConfiguration(host: broker.host, port: broker.port)
            configuration.reconnectDelay = .milliseconds(200)...(.seconds(1))
            let client = MosquittoClient(configuration: configuration, logger: broker.makeLogger())
            try await client.connect()
            say("connected")
            var filler: [Int32] = []
            for await event in client.events {
                switch event {
                case .disconnected:
                    // The lost connection's descriptor is free again: take it and every other one below 1024.
                    while true {
                        let fd = open("/dev/null", O_RDONLY)
                        guard fd >= 0 else { break }
                        filler.append(fd)
                        if fd >= 1024 { break }
                    }
                    say("filled \(filler.count) descriptors, the last \(filler.last ?? -1)")
                case .connected where !filler.isEmpty:
                    say("reconnected")
                    try await client.publish(topic: "probe/past-1024", payload: "round trip", qos: .atLeastOnce)
                    say("published")
                    await client.disconnect()
                    return
                case .closed(let error):
                    say("closed: \(error.map { "\($0)" } ?? "no error")")
                    return
                default:
                    break
                }
            }
        }
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
