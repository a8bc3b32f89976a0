import Foundation
import HubCore
import HubTestKit
import Testing

extension InChromium {
    /// Every page of the dashboard, in headless Chromium at a desk's size (1280 × 900) and a phone's (390 × 844): none
    /// scrolls sideways, every control has a name in Chromium's accessibility tree, and every text keeps a contrast of
    /// at least 4.5:1 with what is behind it (WCAG AA), the state colours included. With `HUB_SCREENSHOTS=DIR` each page
    /// is saved there as a PNG: `make docs` writes docs/images/ so.
    @Suite struct DashboardLookTests {
        static let sizes: [(name: String, width: Int, height: Int)] = [("desktop", 1280, 900), ("phone", 390, 844)]

        @Test func everyPageFitsAPhoneNamesItsControlsAndReads() async throws {
            try await withBroker { broker in
                let ntfy = try await TestHTTPServer.start()
                defer { Task { await ntfy.stop() } }
                let port = try freeLoopbackPort()
                let hub = try RunningHub(
                    configuration: """
                        alerts:
                          public_url: http://127.0.0.1:\(port)
                          sensors:
                            "front door": { labels: { room: hall } }
                            "hall temperature": { labels: { room: hall } }
                            "kitchen leak": { labels: { room: kitchen } }
                            "back door": { labels: { room: garden } }
                        notifiers:
                          backends:
                            phone: { type: ntfy, url: "\(ntfy.url)", topic: house }
                          rules:
                            house:
                              sensors: ["* door", "* leak"]
                              events: [changed]
                              statuses: [open, leak]
                              backends: [phone]
                              group_wait: 0s
                        """)
                try await hub.prepare(broker)
                try await hub.add(arguments: [
                    ["front door", "--preset", "zigbee2mqtt", "--value", "contact"],
                    ["back door", "--preset", "zigbee2mqtt", "--value", "contact"],
                    ["kitchen leak", "--preset", "zigbee2mqtt", "--value", "water_leak"],
                    ["hall temperature", "--preset", "zigbee2mqtt", "--value", "temperature"],
                    ["garage"],
                ])
                try await hub.addUser()
                try await hub.startAndWaitUntilReady(["HUB_HTTP_LISTEN": "127.0.0.1:\(port)"])
                try await publish(
                    broker,
                    [
                        ("zigbee2mqtt/front door", Array(#"{"contact":false,"battery":12,"linkquality":18}"#.utf8)),
                        ("zigbee2mqtt/back door", Array(#"{"contact":true,"battery":90,"linkquality":120}"#.utf8)),
                        ("zigbee2mqtt/kitchen leak", Array(#"{"water_leak":true,"battery":70}"#.utf8)),
                        ("zigbee2mqtt/hall temperature", Array(#"{"temperature":20.9,"humidity":50}"#.utf8)),
                        ("zigbee2mqtt/hall temperature", Array(#"{"temperature":21.2,"humidity":49}"#.utf8)),
                        ("zigbee2mqtt/hall temperature", Array(#"{"temperature":21.5,"humidity":48}"#.utf8)),
                        ("zigbee2mqtt/back door/availability", Array("offline".utf8)),
                    ])
                let told = try await ntfy.waitForRequests(1)
                let actions = try #require(told.first?.header("X-Actions"))
                let link = try #require(
                    actions.split(separator: ";").first?.split(separator: ",").map {
                        $0.trimmingCharacters(in: .whitespaces)
                    }[2])
                let silence = try await hub.hubctl.run(
                    "silences", "add", "garage", "--for", "2h", "--comment", "painting")
                #expect(silence.status == 0, "\(silence.standardError)")
                let origin = "http://127.0.0.1:\(port)"
                try await WebDriver.with { browser in
                    try await look(browser, origin: origin, link: link)
                }
                await hub.stop()
            }
        }

        func look(_ browser: WebDriver, origin: String, link: String) async throws {
            let pages: [(name: String, path: String, ready: String)] = [
                ("login", "/login", "form"),
                ("home", "/", "#sensors .sensor"),
                ("events", "/events", "#events tbody td[data-label=Sensor]"),
                ("alerts", "/alerts", "#alerts td"),
                ("sessions", "/sessions", "main h1"),
                ("acknowledge", String(link.dropFirst(origin.count)), "main.narrow button"),
            ]
            let folder = ProcessInfo.processInfo.environment["HUB_SCREENSHOTS"]
            for size in Self.sizes {
                try await browser.resize(width: size.width, height: size.height)
                for page in pages {
                    if page.name == "home" { try await browser.logIn(origin) }
                    try await browser.open(origin + page.path)
                    try await browser.waitUntil("\(page.name) drawn") { try await browser.text(page.ready) != nil }
                    try await Self.check(browser, "\(page.name) at \(size.name)")
                    if let folder {
                        let file = URL(fileURLWithPath: folder).appendingPathComponent("\(page.name)-\(size.name).png")
                        try await browser.screenshot().write(to: file)
                    }
                }
            }
            // The charts, scrolled to (drawn as they come into view), at both sizes.
            for size in Self.sizes {
                try await browser.resize(width: size.width, height: size.height)
                try await browser.open(origin + "/")
                _ = try await browser.script("document.getElementById('periods').scrollIntoView(); return true")
                try await browser.waitUntil("the temperature's chart") {
                    try await browser.text("figure.chart .dygraph-title") == "hall temperature (°C)"
                }
                let wide = try await browser.script("return document.documentElement.scrollWidth <= window.innerWidth")
                #expect(wide as? Bool == true, "the charts at \(size.name)")
                if let folder {
                    let file = URL(fileURLWithPath: folder).appendingPathComponent("charts-\(size.name).png")
                    try await browser.screenshot().write(to: file)
                }
            }
            // The home page at a glance: the states' colours on the cards and the flags on the front door's.
            try await browser.open(origin + "/")
            try await browser.waitUntil("the cards") { try await browser.text(".sensor[data-name='garage']") != nil }
            let looks = try await browser.script(
                "return [...document.querySelectorAll('.sensor')].map(e => e.dataset.name + '=' + e.dataset.look).sort().join(' ')"
            )
            #expect(
                looks as? String
                    == "back door=offline front door=alert garage=waiting hall temperature=fine kitchen leak=alert")
            #expect(try await browser.text(".sensor[data-name='front door'] .flag") == "battery 12 %")
            #expect(try await browser.elements(".sensor[data-name='front door'] .flag").count == 2)
            // The banner: both alerts, the leak named with its room.
            let banner =
                try await browser.script(
                    "return [...document.querySelectorAll('#firing .alert .what')].map(e => e.textContent).join(' | ')")
                as? String
            #expect(banner?.contains("kitchen leak: leak · kitchen, since ") == true, "\(banner ?? "")")
            #expect(banner?.contains("front door open · hall, since ") == true, "\(banner ?? "")")
            // Installable as an app (a phone's "Add to Home screen"): Chromium's own check of the manifest and its
            // icon finds nothing missing.
            let installability = try await browser.devTools("Page.getInstallabilityErrors")
            let errors = installability["installabilityErrors"] as? [[String: Any]]
            #expect(errors?.isEmpty == true, "\(installability)")
            let manifest = try await browser.devTools("Page.getAppManifest")
            #expect((manifest["url"] as? String)?.hasSuffix("/manifest.webmanifest") == true, "\(manifest)")
            #expect((manifest["errors"] as? [Any])?.isEmpty == true, "\(manifest)")
        }

        /// The page as it is now: it does not scroll sideways, every visible control has a name in Chromium's
        /// accessibility tree, and every text keeps a contrast of at least 4.5:1.
        static func check(_ browser: WebDriver, _ what: String) async throws {
            let wide =
                try await browser.script("return [document.documentElement.scrollWidth, window.innerWidth]") as? [Int]
            let (scroll, viewport) = (wide?.first ?? 0, wide?.last ?? 0)
            if scroll > viewport {
                // What sticks out: the deepest elements whose right edge is past the window's.
                let out = try await browser.script(
                    """
                    const past = e => e.getBoundingClientRect().right > window.innerWidth + 0.5;
                    return [...document.querySelectorAll('body *')].filter(e => past(e) && ![...e.children].some(past))
                      .slice(0, 5).map(e => e.outerHTML.slice(0, 120));
                    """)
                Issue.record("\(what): \(scroll) px wide in \(viewport): \(out ?? [])")
            }
            for control in try await browser.elements("button, a, input, select, textarea") {
                guard try await browser.isDisplayed(control) else { continue }
                let name = try await browser.accessibleName(control)
                // An empty name may be a control the page has just drawn again (the element gone stale): the page as it
                // is now is asked which controls have nothing to be named by.
                if name.trimmingCharacters(in: .whitespaces).isEmpty,
                    let unnamed = try await browser.script(Self.unnamed) as? [String], !unnamed.isEmpty
                {
                    Issue.record("\(what): controls with no name: \(unnamed)")
                }
            }
            let low = try await browser.script(Self.contrast) as? [String] ?? ["the script failed"]
            #expect(low.isEmpty, "\(what): \(low)")
        }

        /// The visible controls with nothing a screen reader could name them by: what to look at when one has no name.
        static let unnamed = """
            return [...document.querySelectorAll('button, a, input, select, textarea')].filter(e => e.getClientRects().length
              && !(e.getAttribute('aria-label') || e.textContent.trim() || e.title || (e.labels && e.labels.length)))
              .map(e => e.outerHTML.slice(0, 160));
            """

        /// Every visible text's contrast with what is behind it (WCAG 2's relative luminance), below 4.5:1 listed.
        static let contrast = """
            const lum = c => c.slice(0, 3).map(v => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); })
              .reduce((s, v, i) => s + v * [0.2126, 0.7152, 0.0722][i], 0);
            const rgba = s => { const m = s.match(/[\\d.]+/g).map(Number); return m.length === 3 ? [...m, 1] : m; };
            const behind = e => { for (; e; e = e.parentElement) { const c = rgba(getComputedStyle(e).backgroundColor); if (c[3] > 0.5) return c; } return [255, 255, 255, 1]; };
            const low = [];
            for (const e of document.querySelectorAll('body *')) {
              if (!e.getClientRects().length || e.closest('dialog:not([open])') || e.disabled) continue;
              if (![...e.childNodes].some(n => n.nodeType === 3 && n.textContent.trim())) continue;
              const [a, b] = [lum(rgba(getComputedStyle(e).color)), lum(behind(e))].sort((x, y) => y - x);
              const ratio = (a + 0.05) / (b + 0.05);
              if (ratio < 4.5) low.push(e.tagName + '.' + e.className + ' "' + e.textContent.trim().slice(0, 30) + '" ' + ratio.toFixed(2));
            }
            return low;
            """
    }
}
