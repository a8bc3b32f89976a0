import Foundation
import HubCore
import HubTestKit
import Testing

/// The dashboard as an installable web app in a real browser (headless Chromium over WebDriver): its manifest is
/// linked and parses, its service worker registers and activates, and "Notify me on this device" goes as far as
/// this browser can. Headless Chromium has no push service here (Google's is out of reach), so `subscribe` is
/// refused: the page must then say so, not fail silently.
@Suite struct DashboardPushBrowserTests {
    static let configuration = """
        notifiers:
          backends:
            browsers: { type: webpush, subject: "mailto:hub@example.org" }
        """

    @Test func theDashboardInstallsAndSubscribesAsFarAsTheBrowserCan() async throws {
        try await withBroker { broker in
            let hub = try RunningHub(configuration: Self.configuration)
            try await hub.prepare(broker, sensors: ["front door"])
            let address = try await hub.startAndWaitForHTTP()
            do {
                try await WebDriver.with { try await check($0, address: address) }
            } catch {
                await hub.stop()
                throw error
            }
            await hub.stop()
        }
    }

    func check(_ browser: WebDriver, address: String) async throws {
        try await browser.open("http://\(address)/")
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
        let state = try await browser.script("return document.getElementById('push-status').dataset.state") as? String
        let said = try await browser.text("#push-status") ?? ""
        print("DashboardPushBrowserTests: the page says (\(state ?? "?")): \(said)")
        if state == "done" {
            // A browser with a push service: the subscription is registered with the hub, with its choice.
            #expect(said == "This device gets notifications for door*.")
        } else {
            // It got past the service worker, the key and the permission: only the push service said no.
            #expect(
                said.hasPrefix("Not subscribed: the browser could not subscribe with its push service ("), "\(said)")
        }
    }
}
