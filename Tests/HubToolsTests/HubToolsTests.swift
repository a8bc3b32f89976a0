import Foundation
import HubCore
import HubTestKit
import Testing

/// `hubd` and `hubctl` as a user runs them: separate processes against a real broker.
@Suite(.timeLimit(.minutes(1)))
struct HubToolsTests {
    let hubd: String
    let hubctl: Hubctl

    init() throws {
        hubd = try builtProduct("hubd")
        hubctl = try Hubctl()
    }

    @Test func versionAndHelp() async throws {
        for tool in [hubd, hubctl.executable] {
            let version = try await runProcess(tool, ["--version"])
            #expect(version.status == 0)
            #expect(version.standardOutput == "\(SensorHubVersion.current)\n")
        }
        let help = try await runProcess(hubd, ["--help"])
        #expect(help.standardOutput.contains("hubd subscribes to every sensor in the registry"))
        let checkHelp = try await hubctl.run("broker", "check", "--help")
        #expect(checkHelp.standardOutput.contains("hubctl broker check --host broker.lan"))
    }

    @Test func brokerCheckPassesAgainstAWorkingBroker() async throws {
        try await withBroker { broker in
            let result = try await hubctl.run("broker", "check", "--host", broker.host, "--port", "\(broker.port)")
            #expect(result.status == 0, "\(result.standardError)")
            #expect(result.standardOutput.contains("subscribe, publish and receive work"))
        }
    }

    @Test func brokerCheckNamesWhatIsWrong() async throws {
        let port = try freeLoopbackPort()
        let refused = try await hubctl.run("broker", "check", "--host", "127.0.0.1", "--port", "\(port)")
        #expect(refused.status == 69)
        #expect(
            refused.standardError == "hubctl: cannot connect to the broker at 127.0.0.1:\(port): Connection refused\n")

        try await withBroker(.init(users: ["hub": "right"])) { broker in
            let arguments = [
                "broker", "check", "--host", broker.host, "--port", "\(broker.port)", "--username", "hub",
                "--password-file", "-",
            ]
            let wrong = try await hubctl.run(arguments, input: "wrong\n")
            #expect(wrong.status == 69)
            #expect(
                wrong.standardError.contains("the broker refused the connection: Connection Refused: not authorised."))
            let right = try await hubctl.run(arguments, input: "right\n")
            #expect(right.status == 0, "\(right.standardError)")
        }
        let invalid = try await hubctl.run("broker", "check", "--password-file", "/dev/null")
        #expect(invalid.status == 64)
        #expect(invalid.standardError == "hubctl: a password needs a user name (--username)\n")
    }

    @Test func hubdPublishesItsAvailabilityAndOfflineWhenStopped() async throws {
        try await withBroker { broker in
            let hub = try RunningHub()
            try await hub.use(broker)
            try hub.start()
            try await expectRetained(broker, "sensorhub/availability", "online")
            #expect(await hub.stop(SIGTERM) == 0)
            try await expectRetained(broker, "sensorhub/availability", "offline")
        }
    }

    @Test func brokerPublishesTheWillWhenHubdDies() async throws {
        try await withBroker { broker in
            let hub = try RunningHub()
            try await hub.use(broker)
            try hub.start()
            try await expectRetained(broker, "sensorhub/availability", "online")
            #expect(await hub.stop(SIGKILL) == 128 + SIGKILL)
            try await expectRetained(broker, "sensorhub/availability", "offline")
        }
    }

    @Test func hubdWaitsForABrokerThatStartsLater() async throws {
        try await withBroker { broker in
            let hub = try RunningHub()
            try await hub.use(broker)
            await broker.stop()
            try hub.start()
            try await hub.waitForLog("cannot connect to the MQTT broker; retrying")
            // What it is trying is said (it said "none yet" before its first connection, issue 52).
            try await eventually("hubctl status names the broker") {
                try await hub.hubctl.run("status").standardOutput.contains(
                    "not connected (trying \(broker.host):\(broker.port))")
            }
            try await broker.start()
            try await expectRetained(broker, "sensorhub/availability", "online", within: .seconds(20))
            #expect(await hub.stop(SIGTERM) == 0)
        }
    }

    /// A broker restarted without persistence has forgotten the retained `online`; hubd says it again.
    @Test func hubdAnnouncesAgainAfterTheBrokerRestarts() async throws {
        try await withBroker { broker in
            let hub = try RunningHub()
            try await hub.use(broker)
            try hub.start()
            try await expectRetained(broker, "sensorhub/availability", "online")
            await broker.stop()
            try await broker.start()
            try await expectRetained(broker, "sensorhub/availability", "online", within: .seconds(20))
            #expect(await hub.stop(SIGTERM) == 0)
        }
    }

    /// Waits until the retained message on `topic` is `payload`, reading it with mosquitto_sub, a separate peer.
    private func expectRetained(
        _ broker: MosquittoBroker,
        _ topic: String,
        _ payload: String,
        within timeout: Duration = .seconds(10)
    ) async throws {
        let sub = try requireExecutable("mosquitto_sub", package: "mosquitto-clients")
        let deadline = ContinuousClock.now + timeout
        var last = ""
        while ContinuousClock.now < deadline {
            // --retained-only: print the stored message and exit (-W 1 when there is none yet).
            let read = try await runProcess(
                sub, ["-h", broker.host, "-p", "\(broker.port)", "-t", topic, "--retained-only", "-C", "1", "-W", "1"])
            last = read.standardOutput
            if last == payload + "\n" { return }
        }
        Issue.record("the retained message on \(topic) was \(last.debugDescription), not \(payload.debugDescription)")
    }
}
