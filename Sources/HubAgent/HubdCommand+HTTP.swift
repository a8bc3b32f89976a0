import ArgumentParser
import Foundation
import HubCore
import HubNotify
import HubRemote
import HubSupport
import Hummingbird
import Logging
import Metrics
import Mosquitto
import Prometheus
import ServiceLifecycle
import UnixSignals

extension HubdCommand {
    /// The whole of `hubd.yaml`, read once: the hub's settings and its notifiers (at start and on SIGHUP).
    static func readConfiguration(option: String?) throws(ConfigurationError) -> (
        HubConfiguration, NotifierConfiguration, ConfigNode
    ) {
        let file = try HubConfiguration.file(option: option)
        let configuration = try HubConfiguration.read(file)
        try checkPublic(file)
        return (configuration, try NotifierConfiguration.read(file), file)
    }

    /// The HTTP API and dashboard, unless `http.listen` is off.
    static func httpService(
        _ configuration: HubConfiguration, notifiers: NotifierConfiguration, hub: Hub, metrics: MetricsExporter,
        logger: Logger
    ) throws -> (any Service)? {
        let address: BindAddress
        var settings = HTTPAccess.Settings()
        settings.configuredToken = configuration.httpToken
        settings.publicPaths = Set(configuration.httpPublic)
        settings.corsOrigins = Set(configuration.httpCORSOrigins)
        settings.imageOrigins = configuration.httpMapTiles.map { [$0.origin] } ?? []
        settings.trustedProxies = Set(configuration.httpTrustedProxies)
        settings.tls = configuration.httpTLS != nil
        // The names the hub answers to: this machine's, the configured ones, and the public URL's.
        var hosts = EdgeMiddleware.machineNames().union(configuration.httpHosts)
        if let url = notifiers.alerts.publicURL, let host = URLComponents(string: url)?.host {
            hosts.insert(host.lowercased())
        }
        settings.hosts = hosts
        switch configuration.httpListen {
        case .off:
            return nil
        case .tcp(let host, let port):
            address = .hostname(host, port: port)
            if !EdgeMiddleware.isAddress(host) && host != "localhost" { settings.hosts?.insert(host.lowercased()) }
        case .unix(let path):
            // A socket file left by an earlier run would make the bind fail.
            unlink(path)
            address = .unixDomainSocket(path: path)
            // No browser can be rebound onto a socket file: whatever proxy reaches it chose the name.
            settings.hosts = nil
        }
        let tls = try configuration.httpTLS.map { try TLSFiles(certificate: $0.certificate, key: $0.key) }
        let access = HTTPAccess(settings: settings, stateDirectory: hub.stateDirectory, logger: logger)
        let api = HubAPI(
            snapshot: hub.snapshot, store: hub.store, stateDirectory: hub.stateDirectory,
            access: access, metrics: metrics, logger: logger,
            webPushKey: { [router = hub.router] in router.webPushPublicKey },
            roads: configuration.routeRoads.flatMap { roads(from: $0, logger: logger) },
            mapTiles: configuration.httpMapTiles, session: hub.session, history: hub.history,
            actionKey: { [router = hub.router] in router.actionKey() }, alerts: hub.router.alertPlace,
            pushoverCallback: { [router = hub.router] in router.pushoverCallback(receipt: $0) },
            alertSetup: { [router = hub.router] in router.alertSetup },
            notifiers: { [router = hub.router] in router.configuration.backends.map { ($0.name, $0.type) } },
            notifierTest: { [router = hub.router] name, event in try await router.test(name, event: event) },
            discover: hub.discover)
        let (document, error) = access.accounts.document()
        if let error {
            logger.error("the accounts file can't be read: nobody can log in", metadata: ["error": "\(error)"])
        } else if document.users.isEmpty {
            logger.notice(
                "no household accounts yet: make the first with `hubctl users add NAME --role admin`; until then only tokens get in (hubctl tokens add, http.token)",
                metadata: ["accounts": "\(access.accounts.store.path)"])
        }
        if !configuration.httpPublic.isEmpty {
            logger.notice(
                "http.public: open to anyone without a login",
                metadata: ["paths": "\(configuration.httpPublic.joined(separator: ", "))"])
        }
        if !configuration.httpListen.isLocal && configuration.httpTLS == nil {
            logger.warning(
                "listening beyond this machine over plain HTTP: passwords and session cookies cross the network in clear; set http.tls_certificate and http.tls_key, or put a reverse proxy with HTTPS in front (docs/security.md)",
                metadata: ["address": "\(configuration.httpListen)"])
        }
        var httpLogger = logger
        httpLogger.logLevel = min(logger.logLevel, .notice)
        let server = HTTPServer(
            responder: api.router().buildResponder(), address: address, serverName: "SensorHub", logger: httpLogger,
            tls: tls,
            onServerRunning: { channel in
                let bound =
                    channel.localAddress.map { address -> String in
                        if let port = address.port, let ip = address.ipAddress {
                            return ip.contains(":") ? "[\(ip)]:\(port)" : "\(ip):\(port)"
                        }
                        return address.pathname.map { "unix:\($0)" } ?? "\(address)"
                    } ?? configuration.httpListen.description
                if case .unix(let path) = configuration.httpListen {
                    // The reverse proxy connects as its own user: the socket is the group's too (a socket file
                    // needs write permission to connect; hubd's umask made it the owner's only).
                    chmod(path, 0o660)
                }
                logger.notice(
                    "HTTP API and dashboard listening",
                    metadata: [
                        "address": "\(bound)", "scheme": "\(tls == nil ? "http" : "https")",
                        "token": "\(configuration.httpToken == nil ? "none" : "http.token (admin)")",
                    ])
            })
        return HTTPService(server: server, listen: configuration.httpListen, tls: tls, logger: logger)
    }

    /// Refuses an `http.public` path that is not a read route of the hub's (a write is never opened), naming those
    /// that may be.
    static func checkPublic(_ file: ConfigNode) throws(ConfigurationError) {
        let openable = Set(HubAPI.openable)
        for (path, node) in try file["http"]["public"].stringItems() ?? [] where !openable.contains(path) {
            let public_ = HubAPI.table.filter { if case .everyone = $0.access { true } else { false } }.map(\.path)
            if public_.contains(path) { continue }
            throw node.invalidValue(
                path, "a read route of the hub's, one of: \(HubAPI.openable.sorted().joined(separator: ", "))")
        }
    }
}

extension HubdCommand {
    /// `route.roads`, read once; a file that can't be read is logged, and routes go across the grid instead.
    static func roads(from path: String, logger: Logger) -> RoadNetwork? {
        do {
            let roads = try RoadNetwork(geoJSON: Data(contentsOf: URL(fileURLWithPath: path)))
            logger.notice(
                "road network for /api/v1/route",
                metadata: ["file": "\(path)", "nodes": "\(roads.nodes.count)", "edges": "\(roads.edgeCount)"])
            return roads
        } catch {
            logger.error(
                "route.roads can't be used; /api/v1/route goes across the pollution grid",
                metadata: ["file": "\(path)", "error": "\(error)"])
            return nil
        }
    }
}
