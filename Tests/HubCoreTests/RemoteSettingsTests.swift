import Foundation
import HubCore
import HubTestKit
import Testing

/// `remote:` in hubd.yaml: the database URL, the password from a file or the environment (never the URL), the
/// mode, the hub's name, errors naming the key.
@Suite struct RemoteSettingsTests {
    func load(_ yaml: String, environment: [String: String] = [:]) throws -> HubConfiguration {
        let directory = try TemporaryDirectory(prefix: "remote-settings")
        try yaml.write(toFile: directory.file("hubd.yaml"), atomically: true, encoding: .utf8)
        try "s3cret\n".write(toFile: directory.file("pg.pass"), atomically: true, encoding: .utf8)
        var environment = environment
        environment["HUB_CONFIG"] = directory.file("hubd.yaml")
        environment["CREDENTIALS_DIRECTORY"] = directory.path
        return try HubConfiguration.load(option: nil, environment: environment)
    }

    func error(_ yaml: String, environment: [String: String] = [:]) -> String {
        do {
            _ = try load(yaml, environment: environment)
            return ""
        } catch {
            return "\(error)"
        }
    }

    @Test func absentOrEmptyIsNoRemote() throws {
        #expect(try load("").remote == nil)
        #expect(try load("remote:\n").remote == nil)
    }

    @Test func everyKeyIsRead() throws {
        let remote = try #require(
            try load(
                """
                remote:
                  url: postgresql://hub@db.example.net:6543/air
                  password_file: pg.pass
                  mode: record
                  hub: flat-3
                  batch: 100
                  interval: 250ms
                  tls: require
                  postgis: false
                  max_back_off: 1m
                """
            ).remote)
        #expect(remote.server.host == "db.example.net" && remote.server.port == 6543)
        #expect(remote.server.user == "hub" && remote.server.database == "air" && remote.server.password == "s3cret")
        #expect(remote.mode == .record && remote.hub == "flat-3" && remote.batch == 100)
        #expect(remote.interval == .milliseconds(250) && remote.server.tls == .require && !remote.postgis)
        #expect(remote.maximumBackOff == .seconds(60))
        #expect(remote.server.url == "postgres://hub@db.example.net:6543/air")
    }

    @Test func defaultsAndTheHostName() throws {
        let remote = try #require(try load("remote: {url: 'postgres://hub@localhost/sensors'}").remote)
        #expect(remote.server.port == 5432 && remote.mode == .stream && remote.server.tls == .prefer && remote.postgis)
        #expect(remote.batch == 500 && remote.interval == .seconds(1) && remote.server.password == nil)
        #expect(remote.hub == RemoteSettings.hostName && RemoteSettings.isValidHubName(remote.hub))
    }

    @Test func thePasswordComesFromCredentialsOrTheEnvironment() throws {
        let fromCredentials = try load(
            "remote: {url: 'postgres://hub@localhost/sensors', password_file: $CREDENTIALS_DIRECTORY/pg.pass}")
        #expect(fromCredentials.remote?.server.password == "s3cret")
        let fromEnvironment = try load(
            "remote: {url: 'postgres://hub@localhost/sensors'}", environment: ["HUB_REMOTE_PASSWORD": "from-env"])
        #expect(fromEnvironment.remote?.server.password == "from-env")
        // The whole section from the environment alone.
        let onlyEnvironment = try load(
            "", environment: ["HUB_REMOTE_URL": "postgres://hub@localhost/sensors", "HUB_REMOTE_HUB": "env-hub"])
        #expect(onlyEnvironment.remote?.hub == "env-hub")
    }

    @Test func mistakesNameTheKey() {
        #expect(error("remote: {url: 'postgres://hub:pw@localhost/sensors'}").contains("remote.url"))
        #expect(error("remote: {url: 'postgres://hub:pw@localhost/sensors'}").contains("password_file"))
        #expect(error("remote: {url: 'postgres://localhost/sensors'}").contains("no user"))
        #expect(error("remote: {url: 'postgres://hub@localhost'}").contains("no database"))
        #expect(error("remote: {url: 'mysql://hub@localhost/sensors'}").contains("remote.url"))
        #expect(error("remote: {mode: stream}").contains("remote.url: missing"))
        #expect(error("remote: {url: 'postgres://h@x/db', mode: live}").contains("remote.mode"))
        #expect(error("remote: {url: 'postgres://h@x/db', tls: maybe}").contains("remote.tls"))
        #expect(error("remote: {url: 'postgres://h@x/db', hub: 'my hub'}").contains("remote.hub"))
        #expect(error("remote: {url: 'postgres://h@x/db', batch: 0}").contains("remote.batch"))
        #expect(error("remote: {url: 'postgres://h@x/db', colour: red}").contains("remote.colour"))
        #expect(
            error("remote: {url: 'postgres://h@x/db', password_file: missing.pass}").contains("remote.password_file"))
    }

    /// `store:` names the same kind of database, in its long form or as the URL alone; without a URL the registry
    /// stays in the state directory.
    @Test func theStoreSectionNamesADatabase() throws {
        #expect(try load("").store == nil)
        #expect(try load("store: {flush_interval: 2s}").store == nil)
        let short = try #require(try load("store: postgres://hub@db.example.net/building").store)
        #expect(short.host == "db.example.net" && short.database == "building" && short.tls == .prefer)
        let long = try load(
            """
            store:
              url: postgres://hub@db.example.net:6543/building
              password_file: pg.pass
              tls: require
              flush_interval: 2s
            """)
        #expect(long.store?.port == 6543 && long.store?.password == "s3cret" && long.store?.tls == .require)
        #expect(long.flushInterval == .seconds(2))
        let environment = try load(
            "store: postgres://hub@localhost/building", environment: ["HUB_STORE_PASSWORD": "from-env"])
        #expect(environment.store?.password == "from-env")
        #expect(error("store: 'postgres://hub:pw@localhost/b'").contains("store.password_file"))
        #expect(error("store: {url: 'postgres://hub@localhost/b', colour: red}").contains("store.colour"))
        #expect(error("store: {password: x}").contains("store.url: missing"))
    }

    /// `cluster:` names the group and the agent, and needs a shared store.
    @Test func theClusterSectionNeedsAStore() throws {
        #expect(try load("").cluster == nil)
        let store = "store: postgres://hub@db/building\n"
        let cluster = try #require(try load(store + "cluster: {group: block-a, agent: hub-2, lease: 30s}").cluster)
        #expect(cluster.group == "block-a" && cluster.agent == "hub-2" && cluster.lease == .seconds(30))
        #expect(cluster.renewal == .seconds(10))
        let defaults = try #require(try load(store + "cluster: {group: block-a}").cluster)
        #expect(defaults.agent == RemoteSettings.hostName && defaults.lease == .seconds(15))
        #expect(error("cluster: {group: block-a}").contains("needs store: postgres://"))
        #expect(error(store + "cluster: {agent: x}").contains("cluster.group: missing"))
        #expect(error(store + "cluster: {group: 'a b'}").contains("cluster.group"))
        #expect(error(store + "cluster: {group: g, lease: 1s}").contains("cluster.lease"))
        #expect(error(store + "cluster: {group: g, colour: red}").contains("cluster.colour"))
    }
}
