import Foundation
import HubTestKit
import Mosquitto
import Testing

/// Passwords and TLS against a real broker, and the errors a user reads when they are wrong.
@Suite(.timeLimit(.minutes(1)))
struct SecurityTests {
    static let users = ["hub": "correct horse"]

    @Test func rightPasswordConnects() async throws {
        try await withBroker(.init(users: Self.users)) { broker in
            let configuration = MosquittoConfiguration.test(broker) {
                $0.credentials = .init(username: "hub", password: "correct horse")
            }
            try await withClient(configuration) { client in
                try await client.client.publish(topic: "auth/ok", payload: "yes")
            }
        }
    }

    @Test(arguments: [MQTTProtocolVersion.v311, .v5])
    func wrongPasswordIsRefusedWithTheBrokersReason(version: MQTTProtocolVersion) async throws {
        try await withBroker(.init(users: Self.users)) { broker in
            let client = MosquittoClient(
                configuration: .test(broker) {
                    $0.credentials = .init(username: "hub", password: "wrong")
                    $0.protocolVersion = version
                },
                logger: testLogger())
            let error = await #expect(throws: MosquittoError.self) { try await client.connect() }
            switch (version, error) {
            case (.v311, .connectionRefused(let code, let reason)?):
                #expect(code == 5)
                #expect(reason == "Connection Refused: not authorised.")
            case (.v5, .connectionRefused(let code, let reason)?):
                #expect(code == 0x86 || code == 0x87)
                #expect(reason == "Bad user name or password" || reason == "Not authorized")
            default:
                Issue.record("expected a refusal, got \(String(describing: error))")
            }
            #expect(error?.description.hasPrefix("the broker refused the connection: ") == true)
            // A failed first connect leaves the client closed, not retrying behind the caller's back.
            await #expect(throws: MosquittoError.closed(operation: "publish to 'x'")) {
                try await client.publish(topic: "x", payload: "y")
            }
        }
    }

    @Test func anonymousClientIsRefusedWhenUsersAreRequired() async throws {
        try await withBroker(.init(users: Self.users)) { broker in
            let client = MosquittoClient(configuration: .test(broker), logger: testLogger())
            await #expect(
                throws: MosquittoError.connectionRefused(code: 5, reason: "Connection Refused: not authorised.")
            ) {
                try await client.connect()
            }
        }
    }

    @Test func tlsWithTheRightCA() async throws {
        let certificates = try await TestCertificates.shared()
        try await withBroker(.init(tls: certificates.localhost)) { broker in
            let configuration = MosquittoConfiguration.test(broker) {
                $0.host = "localhost"
                $0.tls = TLSConfiguration(trustRoots: .caFile(certificates.caFile))
            }
            try await withClient(configuration) { client in
                try await client.client.subscribe("tls/echo")
                try await client.client.publish(topic: "tls/echo", payload: "secret")
                #expect(try await client.messages.next().payloadString == "secret")
            }
        }
    }

    /// TLS to a broker across a network: the TCP connection is still being made when libmosquitto starts the
    /// handshake, whose first write then waits for the socket. libmosquitto goes on with the handshake only in its
    /// read (`mosquitto_loop` calls it when the socket turns writable), so a pass that read only what arrived never
    /// sent the ClientHello and woke for ever until the keepalive closed the connection. Both passes: holding
    /// acknowledgements (hubd's) and not (its `mqtt` backend's, hubctl's).
    @Test(arguments: [false, true]) func tlsWhileTheConnectionIsStillBeingMade(holding: Bool) async throws {
        let certificates = try await TestCertificates.shared()
        try await withBroker(.init(tls: certificates.localhost)) { broker in
            let front = try SlowConnectFront(before: broker.port)
            defer { front.stop() }
            let configuration = MosquittoConfiguration.test(broker) {
                $0.host = "localhost"
                $0.port = front.port
                $0.tls = TLSConfiguration(trustRoots: .caFile(certificates.caFile))
                $0.holdsAcknowledgements = holding
                $0.operationTimeout = .seconds(15)
            }
            let started = ContinuousClock.now
            try await withClient(configuration) { client in
                // The front held the connection back (its first SYN dropped): the case under test did happen.
                #expect(ContinuousClock.now - started >= .milliseconds(500))
                try await client.client.subscribe("tls/slow")
                try await client.client.publish(topic: "tls/slow", payload: "through")
                let message = try await client.messages.next()
                #expect(message.payloadString == "through")
                if holding { client.client.confirm(through: message.number) }
            }
            #expect(front.connections == 1)
        }
    }

    @Test func tlsWithACADirectoryAndTLS13() async throws {
        let certificates = try await TestCertificates.shared()
        let directory = try TemporaryDirectory()
        try FileManager.default.copyItem(atPath: certificates.caFile, toPath: directory.file("ca.crt"))
        let openssl = try requireExecutable("openssl", package: "openssl")
        let rehash = try await runProcess(openssl, ["rehash", directory.path])
        #expect(rehash.status == 0, "\(rehash.standardError)")
        try await withBroker(.init(tls: certificates.localhost)) { broker in
            let configuration = MosquittoConfiguration.test(broker) {
                $0.host = "localhost"
                $0.tls = TLSConfiguration(trustRoots: .caDirectory(directory.path), version: .tls1_3)
            }
            try await withClient(configuration) { client in
                try await client.client.publish(topic: "tls/dir", payload: "ok")
            }
        }
    }

    @Test func tlsWithTheWrongCAFails() async throws {
        let certificates = try await TestCertificates.shared()
        let reason = try await tlsFailure(serving: certificates.localhost, trusting: .caFile(certificates.otherCAFile))
        #expect(reason.contains("certificate verify failed"), "\(reason)")
    }

    /// The system's CAs do not include the test CA: the connection must fail, not fall back to no checking.
    @Test func tlsWithTheSystemCAsRejectsAPrivateCA() async throws {
        let reason = try await tlsFailure(serving: try await TestCertificates.shared().localhost, trusting: .system)
        #expect(reason.contains("certificate verify failed"), "\(reason)")
    }

    @Test func tlsHostnameMismatchFailsUnlessVerificationIsOff() async throws {
        let certificates = try await TestCertificates.shared()
        let reason = try await tlsFailure(serving: certificates.wrongHost, trusting: .caFile(certificates.caFile))
        #expect(reason.contains("host name verification failed"), "\(reason)")
        try await withBroker(.init(tls: certificates.wrongHost)) { broker in
            let lax = MosquittoConfiguration.test(broker) {
                $0.host = "localhost"
                $0.tls = TLSConfiguration(trustRoots: .caFile(certificates.caFile), verifyHostname: false)
            }
            try await withClient(lax) { client in
                try await client.client.publish(topic: "tls/lax", payload: "ok")
            }
        }
    }

    @Test func tlsClientCertificate() async throws {
        let certificates = try await TestCertificates.shared()
        let options = MosquittoBroker.Options(
            tls: certificates.localhost, extraLines: ["require_certificate true"])
        try await withBroker(options) { broker in
            let without = MosquittoClient(
                configuration: .test(broker) {
                    $0.host = "localhost"
                    $0.tls = TLSConfiguration(trustRoots: .caFile(certificates.caFile))
                },
                logger: testLogger())
            await #expect(throws: MosquittoError.self) { try await without.connect() }

            let with = MosquittoConfiguration.test(broker) {
                $0.host = "localhost"
                $0.tls = TLSConfiguration(
                    trustRoots: .caFile(certificates.caFile),
                    clientCertificate: .init(
                        certificateFile: certificates.clientCertificateFile, privateKeyFile: certificates.clientKeyFile)
                )
            }
            try await withClient(with) { client in
                try await client.client.publish(topic: "tls/client-cert", payload: "ok")
            }
        }
    }

    /// mosquitto's acl_file never refuses a SUBSCRIBE (it filters on delivery); its dynamic-security plugin does.
    @Test(arguments: [MQTTProtocolVersion.v311, .v5])
    func refusedSubscriptionIsAnErrorAndLeavesTheSet(version: MQTTProtocolVersion) async throws {
        let directory = try TemporaryDirectory()
        let configFile = directory.file("dynamic-security.json")
        let control = try requireExecutable("mosquitto_ctrl", package: "mosquitto-clients")
        let initialised = try await runProcess(control, ["dynsec", "init", configFile, "hub", "correct horse"])
        #expect(initialised.status == 0, "\(initialised.standardError)")
        // The initial admin role may subscribe to '#'; narrow it to 'allowed/#'.
        var document =
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: configFile)))
            as! [String: Any]
        var roles = document["roles"] as! [[String: Any]]
        var acls = roles[0]["acls"] as! [[String: Any]]
        acls.removeAll { ($0["acltype"] as? String) == "subscribePattern" && ($0["topic"] as? String) == "#" }
        acls.append(["acltype": "subscribePattern", "topic": "allowed/#", "priority": 0, "allow": true])
        roles[0]["acls"] = acls
        document["roles"] = roles
        try JSONSerialization.data(withJSONObject: document).write(to: URL(fileURLWithPath: configFile))
        let plugin = "/usr/lib/\(try await multiarch())/mosquitto_dynamic_security.so"
        let options = MosquittoBroker.Options(
            allowAnonymous: false, extraLines: ["plugin \(plugin)", "plugin_opt_config_file \(configFile)"])
        try await withBroker(options) { broker in
            let configuration = MosquittoConfiguration.test(broker) {
                $0.credentials = .init(username: "hub", password: "correct horse")
                $0.protocolVersion = version
            }
            try await withClient(configuration) { client in
                try await client.client.subscribe("allowed/x")
                await #expect(throws: MosquittoError.subscriptionRefused(filters: ["secret/#"])) {
                    try await client.client.subscribe(["secret/#", "allowed/y"])
                }
                #expect(client.client.subscriptions.keys.sorted() == ["allowed/x", "allowed/y"])
            }
        }
    }

    private func multiarch() async throws -> String {
        let gcc = try requireExecutable("gcc", package: "gcc")
        return try await runProcess(gcc, ["-print-multiarch"]).standardOutput
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Connects to a TLS broker serving `identity` while trusting `roots`; returns why it failed.
    private func tlsFailure(
        serving identity: TestCertificates.ServerIdentity, trusting roots: TLSConfiguration.TrustRoots
    )
        async throws -> String
    {
        try await withBroker(.init(tls: identity)) { broker in
            let client = MosquittoClient(
                configuration: .test(broker) {
                    $0.host = "localhost"
                    $0.tls = TLSConfiguration(trustRoots: roots)
                },
                logger: testLogger())
            do {
                try await client.connect()
            } catch MosquittoError.connectFailed(_, let reason) {
                return reason
            }
            throw TestKitError("connected to a broker whose certificate should have been rejected")
        }
    }
}
