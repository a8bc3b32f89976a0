import Foundation
import HubCore
import HubRemote
import HubTestKit
import Testing

/// TLS to the remote: a server with a certificate of the test CA is reached with `tls: require` and `ca_file`, and
/// refused without the CA, with another CA, or when it offers no TLS at all.
@Suite struct RemoteTLSTests {
    @Test func requireWithTheRightCAConnectsOverTLSAndOtherwiseNot() async throws {
        let certificates = try await TestCertificates.shared()
        try await withPostgres(tls: certificates.localhost) { server in
            try await server.createDatabase("tls")
            var remote = settings(server, database: "tls")
            remote.server.host = "localhost"
            remote.server.tls = .require
            remote.server.caFile = certificates.caFile
            let connection = try await PostgresRemote.connect(remote, logger: testLogger)
            try await connection.send([Make.fixed(1)])
            // While it is open: its backend says TLS (psql itself comes over the Unix socket, without).
            let encrypted = try await server.count("SELECT count(*) FROM pg_stat_ssl WHERE ssl", database: "tls")
            await connection.close()
            #expect(encrypted == 1)
            #expect(try await server.count("SELECT count(*) FROM readings", database: "tls") == 1)

            var otherCA = remote
            otherCA.server.caFile = certificates.otherCAFile
            await #expect(throws: (any Error).self) { try await PostgresRemote.connect(otherCA, logger: testLogger) }
            var systemRoots = remote
            systemRoots.server.caFile = nil
            await #expect(throws: (any Error).self) {
                try await PostgresRemote.connect(systemRoots, logger: testLogger)
            }
        }
    }

    @Test func aServerWithoutTLSIsRefusedWhenTLSIsRequired() async throws {
        try await withPostgres { server in
            var required = settings(server, database: "postgres")
            required.server.tls = .require
            await #expect(throws: (any Error).self) { try await PostgresRemote.connect(required, logger: testLogger) }
        }
    }

    @Test func theCAFileIsReadFromTheConfiguration() throws {
        let directory = try TemporaryDirectory(prefix: "remote-tls")
        try "-----BEGIN CERTIFICATE-----\n".write(toFile: directory.file("ca.pem"), atomically: true, encoding: .utf8)
        let yaml = "remote: {url: 'postgres://hub@db/sensors', tls: require, ca_file: ca.pem}"
        try yaml.write(toFile: directory.file("hubd.yaml"), atomically: true, encoding: .utf8)
        let configuration = try HubConfiguration.load(option: directory.file("hubd.yaml"), environment: [:])
        #expect(configuration.remote?.server.caFile == directory.file("ca.pem"))
        #expect(throws: ConfigurationError.self) {
            try "remote: {url: 'postgres://hub@db/sensors', ca_file: missing.pem}".write(
                toFile: directory.file("hubd.yaml"), atomically: true, encoding: .utf8)
            _ = try HubConfiguration.load(option: directory.file("hubd.yaml"), environment: [:])
        }
    }
}
