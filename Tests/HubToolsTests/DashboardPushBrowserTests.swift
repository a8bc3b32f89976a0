import Foundation
import HubCore
import HubTestKit
import Testing

extension InChromium {
    /// The dashboard as an installable web app in a real browser (headless Chromium over WebDriver): its manifest is
    /// linked and parses, its service worker registers and activates, and "Notify me on this device" goes as far as
    /// this browser can. Headless Chromium has no push service here (Google's is out of reach), so `subscribe` never
    /// answers: the page must then say so, not fail silently. With the browser's push service stood in for (a local
    /// server, and `pushManager.subscribe` answering with keys made by the page's WebCrypto), the rest runs for real:
    /// the page registers the subscription and its choice with hubd, hubd pushes, and what it pushed decrypts.
    @Suite struct DashboardPushBrowserTests {
        static let configuration = """
            notifiers:
              backends:
                browsers: { type: webpush, subject: "mailto:hub@example.org", retry_delay: 100ms }
              rules:
                all: { backends: [browsers], title: "{sensor} is {new}" }
            """

        @Test func theDashboardInstallsAndSubscribesAsFarAsTheBrowserCan() async throws {
            try await withBroker { broker in
                let hub = try RunningHub(configuration: Self.configuration)
                try await hub.prepare(broker, sensors: ["front door", "kitchen"])
                try await hub.addUser("ben", role: "member")
                let address = try await hub.startAndWaitForHTTP()
                let pushService = try await TestHTTPServer.start { _, _ in .init(status: 201) }
                defer { Task { await pushService.stop() } }
                do {
                    try await WebDriver.with { browser in
                        try await check(browser, address: address)
                        try await subscribeThroughAStandIn(browser, hub: hub, broker: broker, pushService: pushService)
                    }
                } catch {
                    await hub.stop()
                    throw error
                }
                await hub.stop()
            }
        }

        func check(_ browser: WebDriver, address: String) async throws {
            try await browser.logIn("http://\(address)", user: "ben")
            // 127.0.0.1 is a secure context: what service workers and push need.
            #expect(try await browser.script("return window.isSecureContext") as? Bool == true)
            let manifest = try #require(
                try await browser.script(
                    """
                    const link = document.querySelector('link[rel=manifest]');
                    return fetch(link.href).then(r => r.json()).then(m =>
                      ({name: m.name, display: m.display, start: m.start_url, icon: m.icons[0].src}));
                    """) as? [String: Any])
            #expect(manifest["name"] as? String == "SensorHub" && manifest["display"] as? String == "standalone")
            #expect(manifest["start"] as? String == "/" && manifest["icon"] as? String == "/icon.svg")
            let icon = try await browser.script(
                """
                return new Promise(done => { const i = new Image(); i.onload = () => done(i.naturalWidth);
                  i.onerror = () => done(0); i.src = '/icon.svg'; });
                """)
            #expect((icon as? Int ?? 0) > 0, "the icon does not load as an image")
            let worker = try await browser.script(
                """
                return navigator.serviceWorker.register('/sw.js').then(() => navigator.serviceWorker.ready)
                  .then(r => r.active ? r.active.scriptURL : 'not active');
                """)
            #expect(worker as? String == "http://\(address)/sw.js")

            // The button, with notifications allowed: service worker, key, permission, then the push service.
            try await browser.setPermission("notifications", "granted")
            _ = try await browser.script(
                """
                window.sensorhubPushTimeout = 5;
                document.getElementById('push-sensors').value = 'door*';
                document.getElementById('push-button').click(); return true;
                """)
            do {
                try await browser.waitUntil("the page says how subscribing went", within: .seconds(30)) {
                    let state = try await browser.script("return document.getElementById('push-status').dataset.state")
                    return ["done", "error"].contains(state as? String ?? "")
                }
            } catch {
                let said = try await browser.text("#push-status") ?? ""
                throw TestKitError("the page still says '\(said)' after 30 s")
            }
            let state =
                try await browser.script("return document.getElementById('push-status').dataset.state") as? String
            let said = try await browser.text("#push-status") ?? ""
            print("DashboardPushBrowserTests: the page says (\(state ?? "?")): \(said)")
            if state == "done" {
                // A browser with a push service: the subscription is registered with the hub, with its choice.
                #expect(said == "This device gets notifications for door*.")
            } else {
                // It got past the service worker, the key and the permission: only the push service said no.
                #expect(
                    said.hasPrefix("Not subscribed: the browser could not subscribe with its push service ("), "\(said)"
                )
            }
        }

        /// The page's own script, with only the browser's push service stood in for: it registers the subscription with
        /// the sensors typed, hubd pushes to it what that choice wants (decrypted by http_ece with the page's key), and
        /// pressing the button again changes the choice (PATCH).
        func subscribeThroughAStandIn(
            _ browser: WebDriver, hub: RunningHub, broker: MosquittoBroker, pushService: TestHTTPServer
        ) async throws {
            let endpoint = pushService.url + "/push/browser-1"
            let (privateKey, auth) = try await browser.standInForThePushService(endpoint: endpoint)

            try await browser.pressNotifyMe(sensors: "*door", expecting: "This device gets notifications for *door.")
            // The page subscribed with the hub's VAPID key, and the hub keeps the device with its choice.
            let key =
                try await browser.script("return fetch('/api/v1/webpush/key').then(r => r.json())") as? [String: Any]
            #expect(try await browser.script("return window.subscribed") as? String == key?["publicKey"] as? String)
            let list = try await hub.hubctl.run("devices", "list")
            #expect(
                list.standardOutput.contains("webpush") && list.standardOutput.contains("*door"),
                "\(list.standardOutput)")

            // The kitchen is not the door: only the door's change reaches the browser.
            try await publish(broker, [("kitchen", Array("open".utf8)), ("front door", Array("open".utf8))])
            let door = try await pushService.waitForRequests(1)[0]
            let checked = try await PythonPeers.checkWebPush(
                endpoint: endpoint, authorization: try #require(door.header("Authorization")), body: door.body,
                privateKey: privateKey, auth: auth)
            let payload = try JSONSerialization.jsonObject(with: Data(checked.plaintext.utf8)) as? [String: Any]
            #expect(
                payload?["title"] as? String == "front door is open" && payload?["sensor"] as? String == "front door")
            #expect(checked.k == key?["publicKey"] as? String)

            // Pressed again with other sensors: the same device, its choice changed (PATCH); now the kitchen comes.
            try await browser.pressNotifyMe(
                sensors: "kitchen", expecting: "This device gets notifications for kitchen.")
            let edited = try await hub.hubctl.run("devices", "list")
            #expect(
                edited.standardOutput.split(separator: "\n").count == list.standardOutput.split(separator: "\n").count)
            #expect(edited.standardOutput.contains("kitchen") && !edited.standardOutput.contains("*door"))
            try await publish(broker, [("kitchen", Array("closed".utf8))])
            let kitchen = try await pushService.waitForRequests(2)[1]
            let second = try await PythonPeers.checkWebPush(
                endpoint: endpoint, authorization: try #require(kitchen.header("Authorization")), body: kitchen.body,
                privateKey: privateKey, auth: auth)
            #expect(second.plaintext.contains(#""sensor":"kitchen""#))
            #expect(pushService.requests.count == 2)
        }
    }
}

extension WebDriver {
    /// Stands in for the browser's push service on the open dashboard: `pushManager.subscribe` answers with a
    /// subscription at `endpoint` whose keys the page's WebCrypto made (headless Chromium reaches no push service
    /// here). Returns the subscription's private key (a JWK's `d`) and auth secret, base64url, to decrypt with.
    func standInForThePushService(endpoint: String) async throws -> (privateKey: String, auth: String) {
        let stubbed =
            try await script(
                """
                const b64 = bytes => btoa(String.fromCharCode(...bytes)).replace(/\\+/g, '-').replace(/\\//g, '_')
                  .replace(/=+$/, '');
                return crypto.subtle.generateKey({name: 'ECDH', namedCurve: 'P-256'}, true, ['deriveBits']).then(async keys => {
                  const p256dh = b64(new Uint8Array(await crypto.subtle.exportKey('raw', keys.publicKey)));
                  const d = (await crypto.subtle.exportKey('jwk', keys.privateKey)).d;
                  const auth = b64(crypto.getRandomValues(new Uint8Array(16)));
                  const subscription = {endpoint: '\(endpoint)', options: {},
                    toJSON: () => ({endpoint: '\(endpoint)', expirationTime: null, keys: {p256dh, auth}}),
                    unsubscribe: async () => true};
                  PushManager.prototype.subscribe = async function (options) {
                    subscription.options = options;
                    window.subscribed = b64(new Uint8Array(options.applicationServerKey));
                    return subscription;
                  };
                  PushManager.prototype.getSubscription = async () => window.subscribed ? subscription : null;
                  return {d, auth};
                });
                """) as? [String: Any]
        return (try #require(stubbed?["d"] as? String), try #require(stubbed?["auth"] as? String))
    }

    /// Types `sensors`, presses the button and waits for the page to say `expecting`.
    func pressNotifyMe(sensors: String, expecting: String) async throws {
        _ = try await script(
            """
            document.getElementById('push-sensors').value = '\(sensors)';
            document.getElementById('push-button').click(); return true;
            """)
        try await waitUntil("the page says: \(expecting)", within: .seconds(20)) {
            try await text("#push-status") == expecting
        }
    }
}
