import Foundation
import HubCore
import HubTestKit
import Testing

extension InChromium {
    /// A page on another origin, in a real browser (headless Chromium over WebDriver) that is logged in to the hub: it
    /// submits a form and makes `fetch`es to the API — a silence of everything until 2099, a sensor deleted, a read — and
    /// changes nothing (issue 51: any web page open on the hub's machine could silence every alarm). Twice: from another
    /// site (`localhost`, whose requests the session cookie does not go with: SameSite=Strict), and from the same site on
    /// another port (`127.0.0.1`, whose requests it does go with: the hub's Origin check refuses them).
    @Suite(.timeLimit(.minutes(3)))
    struct CrossSiteBrowserTests {
        static func page(hub: String) -> String {
            let everything = #"{"matchers":["sensor=*"],"endsAt":"2099-01-01T00:00:00Z","comment":"x"}"#
            return """
                <!doctype html><html><body>
                <form id="form" method="post" action="\(hub)/api/v1/silences" enctype="text/plain">
                <input name='{"matchers":["sensor=*"],"endsAt":"2099-01-01T00:00:00Z","comment":"' value='"}'>
                </form>
                <script>
                const hub = '\(hub)';
                const body = '\(everything)';
                window.results = {};
                const note = (key, promise) => promise.then(r => { window.results[key] = r; })
                  .catch(e => { window.results[key] = 'blocked: ' + e.name; });
                note('noCors', fetch(hub + '/api/v1/silences', {method: 'POST', mode: 'no-cors', credentials: 'include',
                  headers: {'Content-Type': 'text/plain'}, body}).then(r => 'sent, opaque ' + r.type));
                note('json', fetch(hub + '/api/v1/silences', {method: 'POST', credentials: 'include',
                  headers: {'Content-Type': 'application/json'}, body}).then(r => 'status ' + r.status));
                note('delete', fetch(hub + '/api/v1/sensors/kitchen', {method: 'DELETE', mode: 'no-cors',
                  credentials: 'include'}).then(r => 'sent, opaque ' + r.type));
                note('read', fetch(hub + '/api/v1/sensors', {credentials: 'include'}).then(r => r.text()));
                </script></body></html>
                """
        }

        @Test func anotherPageInALoggedInBrowserChangesNothing() async throws {
            try await withBroker { broker in
                let hub = try RunningHub(withToken: false)
                try await hub.prepare(broker, sensors: ["kitchen"])
                try await hub.addUser("ana", role: "admin")
                let address = try await hub.startAndWaitForHTTP()
                let origin = "http://\(address)"
                let evil = try await TestHTTPServer.start { _, _ in
                    .init(headers: [("Content-Type", "text/html; charset=utf-8")], body: Self.page(hub: origin))
                }
                defer { Task { await evil.stop() } }
                try await WebDriver.with { browser in
                    try await browser.logIn(origin)
                    for page in ["http://localhost:\(evil.port)/", "http://127.0.0.1:\(evil.port)/"] {
                        try await browser.open(page)
                        try await browser.waitUntil("the page's requests settled") {
                            (try await browser.script("return Object.keys(window.results || {}).length") as? Int) == 4
                        }
                        let results = try #require(try await browser.script("return window.results") as? [String: Any])
                        print("CrossSiteBrowserTests: \(page): \(results)")
                        // The page can read nothing, and its JSON write never left the browser (the preflight refused).
                        #expect((results["read"] as? String)?.hasPrefix("blocked") == true, "\(page): \(results)")
                        #expect((results["json"] as? String)?.hasPrefix("blocked") == true, "\(page): \(results)")
                        // The form, as a person's click would send it.
                        _ = try await browser.script("document.getElementById('form').submit(); return true")
                        try await browser.waitUntil("the form's answer") {
                            (try await browser.script("return location.href") as? String)?.hasPrefix(origin) == true
                        }
                        let answer = try await browser.script("return document.body.innerText") as? String ?? ""
                        #expect(
                            answer.contains("must come from the hub's own pages") || answer.contains("needs a login"),
                            "\(page): \(answer)")
                    }
                    // Nothing changed, and the hub's own page still works for the person logged in: even reached by a
                    // link on another site (whose navigation comes without the SameSite=Strict cookie), it shows, not the
                    // login page.
                    try await browser.open("http://localhost:\(evil.port)/")
                    _ = try await browser.script("location.href = '\(origin)/alerts'; return true")
                    try await browser.waitUntil("the alerts page, logged in") {
                        let location = try await browser.script("return location.href") as? String
                        let heading = try await browser.text("h1")
                        return location == "\(origin)/alerts" && heading == "Alerts"
                    }
                    #expect(try await browser.text("#silences td") == "None in force.")
                }
                #expect(try await hub.hubctl.run("silences", "list").standardOutput.contains("No silences in force"))
                #expect(try hub.sensor("kitchen") != nil)
                // The same-site page's requests carried the cookie, and were refused for their origin.
                try await hub.waitForLog("cross-site request refused")
                #expect(await hub.stop() == 0)
            }
        }
    }
}
