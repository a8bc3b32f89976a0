import HubCore
import Logging
import NIOSSL
import PostgresNIO

extension PostgresConnection {
    /// Connects to `server` as `settings` say (TLS, its CA, the password), telling the server who we are
    /// (`application_name`, seen in `pg_stat_activity`) and asking it to notice a vanished client within about
    /// 20 s (TCP keepalives every 5 s, 3 missed): PostgresNIO sets no keepalive of its own. A transaction left idle
    /// for 10 s is ended by the server.
    static func connect(
        to server: DatabaseSettings, applicationName: String, timeout: Duration = .seconds(10), logger: Logger
    ) async throws -> PostgresConnection {
        var client = TLSConfiguration.makeClientConfiguration()
        if let caFile = server.caFile { client.trustRoots = .file(caFile) }
        let tls: PostgresConnection.Configuration.TLS
        switch server.tls {
        case .disable: tls = .disable
        case .prefer: tls = .prefer(try NIOSSLContext(configuration: client))
        case .require: tls = .require(try NIOSSLContext(configuration: client))
        }
        var configuration = PostgresConnection.Configuration(
            host: server.host, port: server.port, username: server.user, password: server.password,
            database: server.database, tls: tls)
        configuration.options.connectTimeout = .init(timeout)
        configuration.options.additionalStartupParameters = [
            ("application_name", applicationName),
            ("tcp_keepalives_idle", "5"), ("tcp_keepalives_interval", "5"), ("tcp_keepalives_count", "3"),
            // A client that stops mid-transaction (a paused process answers keepalives) must not hold its rows'
            // locks, and a cluster's steps on those sensors, for longer: the server ends its session.
            ("idle_in_transaction_session_timeout", "10000"),
        ]
        return try await PostgresConnection.connect(
            configuration: configuration, id: Int.random(in: 0..<Int(Int32.max)), logger: logger)
    }
}
