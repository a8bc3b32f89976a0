import HTTPTypes
import HubAccess
import Hummingbird

/// Who may use a route.
enum RouteAccess: Sendable, Hashable, CustomStringConvertible {
    /// Anyone: the documented public list (docs/security.md), each for its reason.
    case everyone(String)
    /// An identity that may do this much.
    case needs(Access)

    var description: String {
        switch self {
        case .everyone: "public"
        case .needs(let access): access.description
        }
    }
}

/// One route: its method and path (as the OpenAPI document writes it), who may use it, and what answers.
struct HubRoute: Sendable {
    let method: HTTPRequest.Method
    let path: String
    let access: RouteAccess
    let handle: @Sendable (HubAPI, Request, HubRequestContext) async throws -> Response

    init(
        _ method: HTTPRequest.Method, _ path: String, _ access: RouteAccess,
        _ handle: @escaping @Sendable (HubAPI, Request, HubRequestContext) async throws -> Response
    ) {
        (self.method, self.path, self.access, self.handle) = (method, path, access, handle)
    }
}

/// Every route the hub serves, and who may use it: the router is made from this table alone, so a route that is not
/// here does not exist, and one that is here has decided (deny by default: `SecurityTests` walks the table against a
/// running hubd and fails for a route reachable without an identity that is not on the public list).
extension HubAPI {
    static let table: [HubRoute] =
        assets.map { asset in
            HubRoute(.get, asset.path, .everyone("a static file (\(asset.what))")) { api, request, _ in
                api.staticFile(asset, request: request)
            }
        } + [
            // Public: what a browser needs before it has logged in, what a phone's notification needs, and the health
            // probe.
            HubRoute(.get, "/healthz", .everyone("a liveness probe: says ok, connected and a count")) { api, _, _ in
                try api.health()
            },
            HubRoute(.get, "/login", .everyone("the login page")) { api, request, context in
                api.loginPage(next: request.uri.queryParameters.get("next").map { String($0) }, context)
            },
            HubRoute(.post, "/login", .everyone("logging in")) { api, request, context in
                try await api.logIn(request, context)
            },
            HubRoute(.post, "/logout", .everyone("logging out ends only the caller's own session")) {
                api, request, context in
                try api.logOut(request, context)
            },
            HubRoute(.get, "/api/v1/webpush/key", .everyone("the VAPID public key: public by design")) { api, _, _ in
                try api.webPushKeyAnswer()
            },
            HubRoute(.get, "/a/{id}", .everyone("a notification's link: its signed token guards it")) {
                api, _, context in try await api.alertLinkPage(context)
            },
            HubRoute(.post, "/a/{id}", .everyone("a notification's button: its signed token guards it")) {
                api, request, context in try await api.alertLinkAct(request, context)
            },

            // Reads.
            HubRoute(.get, "/", .needs(.read)) { api, _, context in try await api.dashboard(context) },
            HubRoute(.get, "/metrics", .needs(.read)) { api, _, _ in api.prometheus() },
            HubRoute(.get, "/dashboard/chart.svg", .needs(.read)) { api, request, _ in try await api.chart(request) },
            HubRoute(.get, "/dashboard/chart.json", .needs(.read)) { api, request, _ in try await api.chartData(request)
            },
            HubRoute(.get, "/sessions", .needs(.read)) { api, request, context in
                try await api.sessionsPage(request, context)
            },
            HubRoute(.get, "/sessions/{id}", .needs(.read)) { api, _, context in try await api.sessionPage(context) },
            HubRoute(.get, "/route", .needs(.read)) { api, request, context in try await api.routePage(request, context)
            },
            HubRoute(.get, "/alerts", .needs(.read)) { api, _, context in try await api.alertsPage(context) },
            HubRoute(.get, "/api/v1/openapi.yaml", .needs(.read)) { _, _, _ in
                Response(
                    status: .ok, headers: [.contentType: "application/yaml"],
                    body: .init(byteBuffer: .init(string: OpenAPIDocument.yaml)))
            },
            HubRoute(.get, "/api/v1/me", .needs(.read)) { api, _, context in api.me(context) },
            HubRoute(.get, "/api/v1/logins", .needs(.read)) { api, _, context in api.listLogins(context) },
            HubRoute(.delete, "/api/v1/logins/{id}", .needs(.read)) { api, _, context in try api.endLogin(context) },
            HubRoute(.get, "/api/v1/sensors", .needs(.read)) { api, _, _ in
                let (sensors, mobile) = try await api.liveSensors()
                return api.sensorsResponse(sensors, mobile: mobile, looks: await api.looks(sensors))
            },
            HubRoute(.get, "/api/v1/sensors/{name}", .needs(.read)) { api, _, context in
                let (sensor, mobile) = try await api.sensor(context)
                return api.sensorResponse(sensor, mobile: mobile)
            },
            HubRoute(.get, "/api/v1/events", .needs(.read)) { api, request, _ in try await api.events(request) },
            HubRoute(.get, "/api/v1/air", .needs(.read)) { api, _, _ in json(api.air()) },
            HubRoute(.get, "/api/v1/air/history", .needs(.read)) { api, request, _ in try await api.airHistory(request)
            },
            HubRoute(.get, "/api/v1/alert", .needs(.read)) { api, _, _ in json(api.alert()) },
            HubRoute(.get, "/api/v1/route", .needs(.read)) { api, request, _ in try await api.route(request) },
            HubRoute(.get, "/api/v1/sessions", .needs(.read)) { api, request, _ in try await api.listSessions(request)
            },
            HubRoute(.get, "/api/v1/sessions/{id}", .needs(.read)) { api, _, context in
                try await api.sessionDetail(context)
            },
            HubRoute(.get, "/api/v1/sessions/{id}/track", .needs(.read)) { api, request, context in
                try await api.sessionTrack(request, context)
            },
            HubRoute(.get, "/api/v1/alerts", .needs(.read)) { api, _, _ in try await api.listAlerts() },
            HubRoute(.get, "/api/v1/silences", .needs(.read)) { api, _, _ in try await api.listSilences() },
            HubRoute(.get, "/api/v1/silences/preview", .needs(.read)) { api, request, _ in
                try await api.previewSilence(request)
            },
            HubRoute(.get, "/api/v1/notifiers", .needs(.read)) { api, _, _ in api.listNotifiers() },
            HubRoute(.get, "/api/v1/stream", .needs(.read)) { api, _, _ in api.stream() },
            HubRoute(.get, "/events", .needs(.read)) { api, _, context in try await api.eventsPage(context) },

            // Acting on alerts, phones, sessions: members and write tokens.
            HubRoute(.post, "/api/v1/alerts/{id}/ack", .needs(.act)) { api, request, context in
                try await api.acknowledgeAlert(request, context)
            },
            HubRoute(.post, "/api/v1/alerts/{id}/snooze", .needs(.act)) { api, request, context in
                try await api.snoozeAlert(request, context)
            },
            HubRoute(.post, "/api/v1/notifiers/{name}/test", .needs(.act)) { api, request, context in
                try await api.testNotifier(request, context)
            },
            HubRoute(.post, "/api/v1/silences", .needs(.act)) { api, request, context in
                try await api.addSilence(request, context)
            },
            HubRoute(.delete, "/api/v1/silences/{id}", .needs(.act)) { api, request, context in
                try await api.expireSilence(request, context)
            },
            HubRoute(.get, "/api/v1/devices", .needs(.act)) { api, request, _ in try api.listDevices(request) },
            HubRoute(.post, "/api/v1/devices", .needs(.act)) { api, request, context in
                try await api.addDevice(request, context)
            },
            HubRoute(.patch, "/api/v1/devices/{id}", .needs(.act)) { api, request, context in
                try await api.editDevice(request, context)
            },
            HubRoute(.delete, "/api/v1/devices/{id}", .needs(.act)) { api, request, context in
                try await api.removeDevice(request, context)
            },
            HubRoute(.post, "/api/v1/sensors/{name}/session", .needs(.act)) { api, request, context in
                try await api.controlSession(request, context)
            },

            // Managing the hub: admins and admin tokens.
            HubRoute(.post, "/api/v1/sensors", .needs(.manage)) { api, request, context in
                try await api.addSensor(request, context)
            },
            HubRoute(.get, "/api/v1/discover", .needs(.manage)) { api, request, _ in
                try await api.discoverDevices(request)
            },
            HubRoute(.post, "/api/v1/discover/add", .needs(.manage)) { api, request, context in
                try await api.addDiscovered(request, context)
            },
            HubRoute(.patch, "/api/v1/sensors/{name}", .needs(.manage)) { api, request, context in
                try await api.renameSensor(request, context)
            },
            HubRoute(.delete, "/api/v1/sensors/{name}", .needs(.manage)) { api, request, context in
                try await api.removeSensor(request, context)
            },
        ]

    /// The static files every page may need before a login.
    static let assets: [StaticAsset] = [
        StaticAsset("/manifest.webmanifest", "the web app's manifest", manifest, "application/manifest+json"),
        StaticAsset("/sw.js", "the service worker", serviceWorker, javascript),
        StaticAsset("/icon.svg", "the icon", icon, "image/svg+xml"),
        StaticAsset("/dashboard/app.js", "the home page's script", HomeScript.text, javascript),
        StaticAsset("/dashboard/app.css", "the pages' style", WebStyle.text, "text/css; charset=utf-8"),
        StaticAsset("/dashboard/events.js", "the events page's script", EventsScript.text, javascript),
        StaticAsset(
            "/dashboard/follow.js", "the script of a page that follows the hub", PageScript.reloading, javascript),
        StaticAsset("/dashboard/push.js", "the push button's script", DashboardPush.script, javascript),
        StaticAsset("/dashboard/dygraph.js", "the charts' library", Dygraphs.script, javascript),
        StaticAsset("/dashboard/dygraph.css", "the charts' style", Dygraphs.style, "text/css; charset=utf-8"),
    ]
    static let javascript = "text/javascript; charset=utf-8"

    /// Every route, for the OpenAPI test: method and path as the document writes it.
    static var routes: [(HTTPRequest.Method, String)] { table.map { ($0.method, $0.path) } }

    func router() -> Router<HubRequestContext> {
        let router = Router(context: HubRequestContext.self)
        router.add(middleware: EdgeMiddleware(access: access))
        router.add(middleware: ErrorMiddleware(logger: logger))
        // Request counts and durations through swift-metrics (hubd bootstraps it with the Prometheus registry).
        router.add(middleware: MetricsMiddleware())
        for route in Self.table {
            router.on(RouterPath(route.path), method: route.method) { request, context in
                var context = context
                do {
                    context.identity = try self.admit(route, request, context)
                } catch let redirect as PageRedirect {
                    return redirect.response
                }
                return try await route.handle(self, request, context)
            }
        }
        return router
    }

    /// Who may pass: nobody is asked on a public route (though a logged-in person is known there), a read that
    /// `http.public` opens lets anyone look, every other route needs an identity that may do what it does.
    func admit(_ route: HubRoute, _ request: Request, _ context: HubRequestContext) throws -> Identity? {
        switch route.access {
        case .everyone:
            if case .identity(let identity) = access.identify(request, context) { return identity }
            return nil
        case .needs(let needed):
            if needed == .read, route.method == .get, access.settings.publicPaths.contains(route.path) {
                if case .identity(let identity) = access.identify(request, context) { return identity }
                return nil
            }
            return try access.require(needed, request, context)
        }
    }

    /// The read routes `http.public` may open (GET, read access, not public already).
    static var openable: [String] {
        table.filter { route in route.method == .get && route.access == .needs(.read) }.map(\.path)
    }
}
