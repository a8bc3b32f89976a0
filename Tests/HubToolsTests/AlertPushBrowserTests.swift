import AsyncHTTPClient
import Foundation
import HubCore
import HubNotify
import HubTestKit
import NIOCore
import Testing

extension InChromium {
    /// Acknowledging an alert through Web Push's own path, end to end: hubd on a real Mosquitto, the dashboard subscribed
    /// in headless Chromium (the browser's push service stood in for by a local server, as in `DashboardPushBrowserTests`),
    /// and the dashboard's real service worker. A leak makes hubd push an alert (RFC 8291, decrypted by http_ece); its
    /// plaintext goes to the worker's `push` handler as the push service would hand it (DevTools'
    /// `ServiceWorker.deliverPushMessage`), which shows a notification tagged with the group's handle and with Acknowledge
    /// and Snooze buttons; a `notificationclick` on Acknowledge, dispatched in the worker's own context, makes the worker
    /// POST `/a/<token>`: the alert is acknowledged in the hub (via the link) and its reminders, which came every 2 s
    /// until then, stop. The same push handed over again and its button pressed again is refused (409) and logged, as
    /// is an expired token (410: one the hub's key signed with an expiry gone by). A forged token is
    /// `AlertHubTests.acknowledgedFromNtfysButton`'s.
    @Suite struct AlertPushBrowserTests {
        static let configuration = """
            notifiers:
              backends:
                browsers: { type: webpush, subject: "mailto:hub@example.org", retry_delay: 100ms }
              rules:
                leak: { events: [changed], statuses: [wet], backends: [browsers], group_wait: 0s, repeat: [2s] }
            """

        @Test func acknowledgedFromTheServiceWorkersButton() async throws {
            try await withBroker { broker in
                let hub = try RunningHub(configuration: Self.configuration)
                try await hub.prepare(broker, sensors: ["kitchen leak"])
                try await hub.addUser("ben", role: "member")
                let address = try await hub.startAndWaitForHTTP()
                let pushService = try await TestHTTPServer.start { _, _ in .init(status: 201) }
                defer { Task { await pushService.stop() } }
                do {
                    try await WebDriver.with { browser in
                        try await acknowledge(
                            browser, hub: hub, address: address, broker: broker, pushService: pushService)
                    }
                } catch {
                    await hub.stop()
                    throw error
                }
                await hub.stop()
            }
        }

        func acknowledge(
            _ browser: WebDriver, hub: RunningHub, address: String, broker: MosquittoBroker, pushService: TestHTTPServer
        ) async throws {
            let origin = "http://\(address)"
            let debugger = try #require(browser.debuggerAddress, "chromedriver named no DevTools address")
            try await browser.logIn(origin, user: "ben")
            try await browser.setPermission("notifications", "granted")
            let endpoint = pushService.url + "/push/browser-1"
            let (privateKey, auth) = try await browser.standInForThePushService(endpoint: endpoint)
            try await browser.pressNotifyMe(sensors: "*leak", expecting: "This device gets notifications for *leak.")
            func decrypted(_ request: TestHTTPServer.Request) async throws -> (
                plaintext: String, payload: [String: Any]
            ) {
                let checked = try await PythonPeers.checkWebPush(
                    endpoint: endpoint, authorization: try #require(request.header("Authorization")),
                    body: request.body,
                    privateKey: privateKey, auth: auth)
                let payload = try JSONSerialization.jsonObject(with: Data(checked.plaintext.utf8)) as? [String: Any]
                return (checked.plaintext, try #require(payload, "the push is not a JSON object: \(checked.plaintext)"))
            }

            // The leak: hubd pushes the alert, with its group's handle and its two buttons' tokens.
            try await publish(broker, "kitchen leak", "wet", retain: true)
            let (plaintext, payload) = try await decrypted(try await pushService.waitForRequests(1)[0])
            let group = try #require(payload["group"] as? String)
            #expect(group.hasPrefix("sh-") && group.count == 15, "\(group)")
            let actions = try #require(payload["actions"] as? [[String: Any]])
            #expect(actions.map { $0["action"] as? String } == ["acknowledge", "snooze"], "\(actions)")
            let token = try #require(actions.first?["token"] as? String)
            #expect(token.count == 31)

            // What the browser's push service would hand the worker: its real push handler shows it.
            let shown = try await PythonPeers.deliverPush(debugger: debugger, origin: origin, plaintext: plaintext)
            #expect(shown.count == 1, "\(shown)")
            let notification = try #require(shown.first)
            #expect(notification["title"] as? String == payload["title"] as? String && notification["title"] != nil)
            #expect((notification["title"] as? String)?.contains("kitchen leak") == true, "\(notification)")
            #expect(notification["tag"] as? String == group)
            let buttons = (notification["actions"] as? [[String: Any]] ?? []).map {
                "\($0["action"] as? String ?? "?")=\($0["title"] as? String ?? "?")"
            }
            #expect(buttons == ["acknowledge=Acknowledge", "snooze=Snooze 1 h"], "\(notification)")

            // Nobody acknowledged yet: reminders come (every 2 s).
            _ = try await pushService.waitForRequests(2, within: .seconds(10))
            let reminder = try await decrypted(pushService.requests[1]).payload
            #expect((reminder["title"] as? String)?.hasPrefix("Still") == true, "\(reminder)")

            // Acknowledge, pressed in the worker's own context: it POSTs the token to the hub it came from. (A script-made
            // event's waitUntil throws InvalidStateError, printed below; the worker's fetch has gone out by then.)
            let clicked = try await PythonPeers.clickNotification(
                debugger: debugger, origin: origin, tag: group, action: "acknowledge")
            print("AlertPushBrowserTests: the worker's click: \(clicked)")
            let sent = try #require((clicked["requests"] as? [[String: Any]])?.first, "\(clicked)")
            #expect(sent["method"] as? String == "POST" && sent["url"] as? String == "\(origin)/a/\(token)", "\(sent)")
            #expect(sent["status"] as? Int == 200, "\(clicked)")
            #expect(clicked["left"] as? Int == 0, "the worker left the notification shown: \(clicked)")
            try await hub.waitForLog("alert request", "acknowledged: leak/kitchen leak/status")
            let acknowledgedAt = ContinuousClock.now
            let show = try await hub.hubctl.run("alerts", "show", "leak/kitchen leak/status")
            // The worker's request carries the browser's login: the book names the person, and how.
            #expect(show.standardOutput.contains("by ben via link"), "\(show.standardOutput)")
            let listed = try await get("\(origin)/api/v1/alerts")
            let alerts = try #require(try JSONSerialization.jsonObject(with: Data(listed.utf8)) as? [[String: Any]])
            let alert = try #require(alerts.first { $0["id"] as? String == "leak/kitchen leak/status" }, "\(listed)")
            #expect((alert["acknowledged"] as? [String: Any])?["via"] as? String == "link", "\(alert)")

            // The same push handed over again (a push service may), the same button pressed: refused, and logged.
            let again = try await PythonPeers.deliverPush(debugger: debugger, origin: origin, plaintext: plaintext)
            #expect(again.map { $0["tag"] as? String } == [group], "\(again)")
            let replayed = try await PythonPeers.clickNotification(
                debugger: debugger, origin: origin, tag: group, action: "acknowledge")
            let refused = try #require((replayed["requests"] as? [[String: Any]])?.first, "\(replayed)")
            #expect(
                refused["url"] as? String == "\(origin)/a/\(token)" && refused["status"] as? Int == 409, "\(replayed)")
            try await hub.waitForLog("alert link refused", "already used")

            // An expired token for the same message: signed with the hub's own key, its week gone by.
            let key = try ActionToken.key(directory: hub.hubctl.state.path)
            let real = try ActionToken(verifying: token, key: key, now: .now)
            let expired = ActionToken(
                handle: real.handle, action: .acknowledge, expires: .now.adding(milliseconds: -60_000))
            let gone = try await post("\(origin)/a/\(expired.signed(with: key))")
            #expect(gone.status == 410 && gone.body.contains("expired"), "\(gone)")
            try await hub.waitForLog("alert link refused", "the link has expired")

            // No reminder after the acknowledgement: 5 s, more than twice the repeat. (A copy taken back — no buttons —
            // may go; a reminder has them.) A second's grace for one already on its way.
            try await Task.sleep(until: acknowledgedAt + .seconds(6))
            let after = pushService.requests.filter { $0.received > acknowledgedAt + .seconds(1) }
            for request in after {
                let later = try await decrypted(request).payload
                #expect((later["actions"] as? [Any] ?? []).isEmpty, "a reminder after the acknowledgement: \(later)")
                #expect((later["title"] as? String)?.hasPrefix("Still") != true, "\(later)")
            }
            let status = try await hub.hubctl.run("alerts", "list")
            #expect(status.standardOutput.contains("acknowledged"), "\(status.standardOutput)")
        }

        private func get(_ url: String) async throws -> String {
            let response = try await HTTPClient.shared.execute(
                authorized(HTTPClientRequest(url: url)), timeout: .seconds(30))
            return String(buffer: try await response.body.collect(upTo: 1024 * 1024))
        }

        private func post(_ url: String) async throws -> (status: UInt, body: String) {
            var request = HTTPClientRequest(url: url)
            request.method = .POST
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
            return (response.status.code, String(buffer: try await response.body.collect(upTo: 1024 * 1024)))
        }
    }
}
