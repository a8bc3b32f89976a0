import Foundation

/// Certificates made with `openssl` once per test run: a CA, server identities it signed, and an unrelated CA.
public struct TestCertificates: Sendable {
    /// A certificate and key a TLS broker serves, with the CA that signed it.
    public struct ServerIdentity: Sendable {
        public var caFile: String
        public var certificateFile: String
        public var keyFile: String
    }

    /// The CA that signed the server certificates.
    public let caFile: String
    /// A CA that signed nothing here: trusting only it must fail.
    public let otherCAFile: String
    /// A server certificate for `localhost` and 127.0.0.1.
    public let localhost: ServerIdentity
    /// A server certificate for `wrong.example` only: connecting to `localhost` must fail host name checks.
    public let wrongHost: ServerIdentity
    /// A client certificate and key signed by the CA.
    public let clientCertificateFile: String
    public let clientKeyFile: String

    /// The run's certificates, made on first use.
    /// The one set of this test process, made by the first caller. Made with `runProcess`, which waits without
    /// holding a thread: eight `openssl` runs on a loaded 2-core machine take seconds, and callers blocked in a
    /// `static let`'s initialiser held both of Swift's cooperative threads, stalling every other test's timers.
    public static func shared() async throws -> TestCertificates { try await generation.value }

    private static let generation = Task { try await TestCertificates() }

    private init() async throws {
        let openssl = try requireExecutable("openssl", package: "openssl")
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("sensorhub-certs-\(getpid())-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        func path(_ name: String) -> String { "\(directory)/\(name)" }
        func run(_ arguments: [String]) async throws {
            let result = try await runProcess(openssl, arguments)
            guard result.status == 0 else {
                throw TestKitError(
                    "openssl \(arguments.prefix(2).joined(separator: " ")) failed: \(result.standardError)")
            }
        }
        func makeCA(_ name: String, _ subject: String) async throws {
            try await run([
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-keyout", path("\(name).key"), "-out", path("\(name).crt"), "-days", "2", "-subj", subject,
                "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
            ])
        }
        func makeLeaf(_ name: String, _ subject: String, _ extensions: String) async throws {
            try await run([
                "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-keyout", path("\(name).key"), "-out", path("\(name).csr"), "-subj", subject,
            ])
            try extensions.write(toFile: path("\(name).ext"), atomically: true, encoding: .utf8)
            try await run([
                "x509", "-req", "-in", path("\(name).csr"), "-CA", path("ca.crt"), "-CAkey", path("ca.key"),
                "-CAcreateserial", "-out", path("\(name).crt"), "-days", "2", "-extfile", path("\(name).ext"),
            ])
        }
        try await makeCA("ca", "/CN=SensorHub Test CA")
        try await makeCA("other-ca", "/CN=Unrelated Test CA")
        try await makeLeaf(
            "localhost", "/CN=localhost",
            "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n")
        try await makeLeaf(
            "wrong-host", "/CN=wrong.example", "subjectAltName=DNS:wrong.example\nextendedKeyUsage=serverAuth\n")
        try await makeLeaf("client", "/CN=sensorhub-client", "extendedKeyUsage=clientAuth\n")
        // mosquitto may run as another user: let it read what it serves.
        for file in try FileManager.default.contentsOfDirectory(atPath: directory) {
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path(file))
        }
        caFile = path("ca.crt")
        otherCAFile = path("other-ca.crt")
        localhost = ServerIdentity(
            caFile: caFile, certificateFile: path("localhost.crt"), keyFile: path("localhost.key"))
        wrongHost = ServerIdentity(
            caFile: caFile, certificateFile: path("wrong-host.crt"), keyFile: path("wrong-host.key"))
        clientCertificateFile = path("client.crt")
        clientKeyFile = path("client.key")
    }
}
