import AsyncHTTPClient
import Foundation
import HubCore
import HubTestKit
import NIOCore
import Testing

extension InChromium {
    /// The dashboard in a real browser: headless Chromium, driven over WebDriver (chromedriver), opens a running
    /// hubd's page; the sensor table and the charts render, and a status change appears without a reload, a device's
    /// attributes with it, as text, and a mobile sensor's row keeps its link to its sessions.
    @Suite struct DashboardBrowserTests {
        @Test func dashboardRendersAndUpdatesLive() async throws {
            try await withBroker { broker in
                // The particulate sensor is a mobile one too: its reading starts a session, and its row links to them.
                let hub = try RunningHub(configuration: "sessions:\n  - sensors: [air quality]\n")
                // A thermometer that publishes JSON: its temperature the value, the rest attributes (markup among them).
                try hub.writeRegistry(numeric: "cellar", topic: "z/cellar", value: "temperature", unit: "°C")
                try await hub.prepare(broker, sensors: ["front door"])
                try await hub.addUser()
                let add = try await hub.hubctl.run(
                    "sensors", "add", "air quality", "--kind", "particulate", "--topic", "sensorhub/sds011/A160/state")
                #expect(add.status == 0)
                try hub.start()
                let line = try await hub.waitForLog("HTTP API and dashboard listening")
                let address = try #require(line.split(separator: " ").first { $0.hasPrefix("address=") }?.dropFirst(8))
                // The ready line may come before the HTTP one, which consumed it: ask the status file instead.
                try await eventually("hubd connected") { hub.status?.connected == true }
                let reading = ParticulateReading(pm25: 27.4, pm10: 40, time: .now, device: "A160")
                try await publish(
                    broker,
                    [
                        ("front door", Array("closed".utf8)), ("sensorhub/sds011/A160/state", Array(reading.json.utf8)),
                        ("z/cellar", Array(#"{"temperature":12.5,"battery":80,"note":"<b>x</b>"}"#.utf8)),
                    ])
                try await eventually("statuses recorded") {
                    try hub.sensor("front door")?.status == "closed" && hub.sensor("air quality")?.status == "Moderate"
                        && hub.sensor("cellar")?.status == "12.5"
                }

                try await WebDriver.with { browser in
                    try await check(browser, address: String(address), broker: broker)
                    // hubd stops at once with the page still open and following /api/v1/stream (a stream ends at
                    // shutdown, not after its hour).
                    let start = ContinuousClock.now
                    let status = await hub.stop()
                    #expect(status == 0 && ContinuousClock.now - start < .seconds(5), "\(String(describing: status))")
                }
            }
        }

        func check(_ browser: WebDriver, address: String, broker: MosquittoBroker) async throws {
            // Not logged in: the login page, and back to the dashboard once logged in.
            try await browser.open("http://\(address)/")
            try await browser.waitUntil("the login page") {
                try await browser.script("return location.pathname") as? String == "/login"
            }
            try await browser.logIn("http://\(address)")
            let status = "#sensors .sensor[data-name='front door'] .status"
            try await browser.waitUntil("the sensors drawn") { try await browser.text(status) == "closed" }
            #expect(try await browser.text("#air .big") == "AQI 85 · Moderate")
            // The charts, drawn by dygraphs from /dashboard/chart.json: a canvas with the reading on it.
            try await browser.waitUntil("the PM2.5 chart drawn") {
                try await browser.script(
                    "const f = document.getElementById('chart-pm25'); return !!f.querySelector('canvas') && f.dataset.points === '1'"
                )
                    as? Bool == true
            }
            #expect(try await browser.text("#chart-pm25 .dygraph-title") == "PM2.5 (µg/m³)")
            // A marker on the page: still there after the change means the page was not reloaded.
            _ = try await browser.script("window.sensorhubMarker = 42; return true")
            try await publish(broker, [("front door", Array("open".utf8))])
            try await browser.waitUntil("the new status on the page") { try await browser.text(status) == "open" }
            #expect(try await browser.script("return window.sensorhubMarker") as? Int == 42)
            // The table as the script rebuilt it: the numeric sensor's value with its unit, its attributes as text.
            #expect(try await browser.text("#sensors .sensor[data-name='cellar'] .status") == "12.5 °C")
            #expect(
                try await browser.text("#sensors .sensor[data-name='cellar'] .attributes")
                    == "battery: 80 · note: <b>x</b>")
            #expect(try await browser.script("return document.querySelectorAll('#sensors b').length") as? Int == 0)
            // A mobile sensor's row, as the script rebuilt it, links to its sessions and says it is recording.
            let sessions =
                try await browser.script(
                    """
                    const a = document.querySelector("#sensors .sensor[data-name='air quality'] a.sessions");
                    return a ? a.getAttribute('href') + ' | ' + a.parentElement.textContent : null
                    """) as? String
            #expect(sessions == "/sessions?sensor=air%20quality | sessions · recording")
            #expect(
                try await browser.script("return document.querySelectorAll('#sensors a.sessions').length") as? Int == 1)
            // Drawn as it scrolls into view (a building may have hundreds).
            _ = try await browser.script(
                "document.querySelector('figure[data-src$=\"sensor=cellar\"]').scrollIntoView(); return true")
            try await browser.waitUntil("the cellar's chart drawn") {
                try await browser.script(
                    "const f = document.querySelector('figure[data-src$=\"sensor=cellar\"]'); return !!f.querySelector('canvas')"
                ) as? Bool == true
            }
            #expect(
                try await browser.text("figure[data-src$='sensor=cellar'] .dygraph-title") == "cellar (°C)")
        }
    }
}

/// Just enough of the W3C WebDriver protocol, over chromedriver, to drive headless Chromium.
final class WebDriver: Sendable {
    let process: ChildProcess
    let base: String
    let session: String
    /// `host:port` of Chromium's DevTools (chromedriver's `goog:chromeOptions.debuggerAddress`): where a test speaks
    /// the DevTools protocol to the page's targets, its service worker among them (`Tests/Peers/cdp_worker.py`).
    let debuggerAddress: String?

    static func start() async throws -> WebDriver {
        let driver = try requireExecutable("chromedriver", package: "chromium-driver")
        let chromium = try requireExecutable("chromium", package: "chromium")
        let port = try freeLoopbackPort()
        let process = try ChildProcess(
            driver, ["--port=\(port)"])
        let base = "http://127.0.0.1:\(port)"
        let deadline = ContinuousClock.now + .seconds(20)
        while (try? await request("GET", base + "/status")) == nil {
            guard ContinuousClock.now < deadline else {
                process.send(SIGKILL)
                throw TestKitError("chromedriver did not start")
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        let capabilities: [String: Any] = [
            "capabilities": [
                "alwaysMatch": [
                    "goog:chromeOptions": [
                        "binary": chromium,
                        "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
                    ]
                ]
            ]
        ]
        let answer = try await request("POST", base + "/session", capabilities)
        guard let value = answer["value"] as? [String: Any], let session = value["sessionId"] as? String else {
            process.send(SIGKILL)
            throw TestKitError("no WebDriver session: \(answer)")
        }
        let options = (value["capabilities"] as? [String: Any])?["goog:chromeOptions"] as? [String: Any]
        return WebDriver(
            process: process, base: base, session: session, debuggerAddress: options?["debuggerAddress"] as? String)
    }

    /// Runs `body` with a browser, which is closed afterwards, whether `body` threw or not.
    static func with(_ body: (WebDriver) async throws -> Void) async throws {
        let browser = try await start()
        do {
            try await body(browser)
        } catch {
            await browser.stop()
            throw error
        }
        await browser.stop()
    }

    private init(process: ChildProcess, base: String, session: String, debuggerAddress: String?) {
        self.process = process
        self.base = base
        self.session = session
        self.debuggerAddress = debuggerAddress
    }

    func open(_ url: String) async throws {
        _ = try await Self.request("POST", "\(base)/session/\(session)/url", ["url": url])
    }

    /// Logs in at `origin`'s login page as a person would (the form typed in and sent), and waits for the dashboard.
    func logIn(_ origin: String, user: String = "ana", password: String = RunningHub.password) async throws {
        try await open(origin + "/login")
        let fields = try JSONSerialization.data(withJSONObject: [user, password])
        _ = try await script(
            """
            const [user, password] = \(String(decoding: fields, as: UTF8.self));
            document.querySelector('input[name=user]').value = user;
            document.querySelector('input[name=password]').value = password;
            document.querySelector('form').submit(); return true;
            """)
        try await waitUntil("logged in") {
            try await script("return location.pathname + ' ' + document.readyState") as? String == "/ complete"
        }
    }

    func text(_ selector: String) async throws -> String? {
        let found = try await Self.request(
            "POST", "\(base)/session/\(session)/element", ["using": "css selector", "value": selector])
        guard let element = (found["value"] as? [String: Any])?.values.first as? String else { return nil }
        let text = try await Self.request("GET", "\(base)/session/\(session)/element/\(element)/text")
        return text["value"] as? String
    }

    /// The element `selector` finds, or an error naming it.
    func element(_ selector: String) async throws -> String {
        let found = try await Self.request(
            "POST", "\(base)/session/\(session)/element", ["using": "css selector", "value": selector])
        guard let element = (found["value"] as? [String: Any])?.values.first as? String else {
            throw TestKitError("no element \(selector) on the page: \(found)")
        }
        return element
    }

    /// Every element `selector` finds.
    func elements(_ selector: String) async throws -> [String] {
        let found = try await Self.request(
            "POST", "\(base)/session/\(session)/elements", ["using": "css selector", "value": selector])
        return (found["value"] as? [[String: Any]] ?? []).compactMap { $0.values.first as? String }
    }

    /// What Chromium's accessibility tree names the element (WebDriver's computed label): what a screen reader says.
    func accessibleName(_ element: String) async throws -> String {
        let answer = try await Self.request("GET", "\(base)/session/\(session)/element/\(element)/computedlabel")
        return answer["value"] as? String ?? ""
    }

    /// Whether the element is shown.
    func isDisplayed(_ element: String) async throws -> Bool {
        try await Self.request("GET", "\(base)/session/\(session)/element/\(element)/displayed")["value"] as? Bool
            ?? false
    }

    /// Clicks `selector` as a person would (WebDriver's element click: scrolled into view, at its centre; refused
    /// when something covers it).
    func click(_ selector: String) async throws {
        // Found again when the page drew that part again between finding and clicking (a person would press the
        // new button where the old one was).
        for attempt in 1...3 {
            let answer = try await Self.request(
                "POST", "\(base)/session/\(session)/element/\(try await element(selector))/click", [:])
            guard let error = (answer["value"] as? [String: Any])?["error"] as? String else { return }
            if error != "stale element reference" || attempt == 3 { throw TestKitError("click \(selector): \(error)") }
        }
    }

    /// Types `text` into the field `selector` (after clearing it), key by key.
    func type(_ selector: String, _ text: String) async throws {
        let id = try await element(selector)
        _ = try await Self.request("POST", "\(base)/session/\(session)/element/\(id)/clear", [:])
        let answer = try await Self.request(
            "POST", "\(base)/session/\(session)/element/\(id)/value", ["text": text])
        if let error = (answer["value"] as? [String: Any])?["error"] {
            throw TestKitError("type into \(selector): \(error)")
        }
    }

    /// Accepts the page's `confirm()`.
    func acceptDialog() async throws {
        _ = try await Self.request("POST", "\(base)/session/\(session)/alert/accept", [:])
    }

    /// Sets the window's size (the viewport of a phone: 390 × 844).
    func resize(width: Int, height: Int) async throws {
        _ = try await Self.request(
            "POST", "\(base)/session/\(session)/window/rect", ["width": width, "height": height])
    }

    /// A PNG of the page as it is now.
    func screenshot() async throws -> Data {
        let answer = try await Self.request("GET", "\(base)/session/\(session)/screenshot")
        guard let text = answer["value"] as? String, let data = Data(base64Encoded: text) else {
            throw TestKitError("no screenshot: \(answer)")
        }
        return data
    }

    func script(_ source: String) async throws -> Any? {
        try await Self.request("POST", "\(base)/session/\(session)/execute/sync", ["script": source, "args": []])[
            "value"]
    }

    /// A Chrome DevTools Protocol command through chromedriver (`goog/cdp/execute`): its result.
    func devTools(_ command: String, _ parameters: [String: Any] = [:]) async throws -> [String: Any] {
        let answer = try await Self.request(
            "POST", "\(base)/session/\(session)/goog/cdp/execute", ["cmd": command, "params": parameters])
        guard let value = answer["value"] as? [String: Any], value["error"] == nil else {
            throw TestKitError("\(command): \(answer)")
        }
        return value
    }

    /// Sets a permission for the page's origin (the WebDriver Permissions extension): `granted`, `denied` or `prompt`.
    func setPermission(_ name: String, _ state: String) async throws {
        let answer = try await Self.request(
            "POST", "\(base)/session/\(session)/permissions", ["descriptor": ["name": name], "state": state])
        if let error = (answer["value"] as? [String: Any])?["error"] { throw TestKitError("set \(name): \(error)") }
    }

    func waitUntil(_ what: String, within timeout: Duration = .seconds(15), _ condition: () async throws -> Bool)
        async throws
    {
        let deadline = ContinuousClock.now + timeout
        while try await !condition() {
            guard ContinuousClock.now < deadline else { throw TestKitError("timed out waiting for \(what)") }
            try await Task.sleep(for: .milliseconds(200))
        }
    }

    /// Ends the session (closing Chromium) and chromedriver.
    func stop() async {
        _ = try? await Self.request("DELETE", "\(base)/session/\(session)")
        process.send(SIGTERM)
        if await process.wait(timeout: .seconds(10)) == nil { process.send(SIGKILL) }
    }

    static func request(_ method: String, _ url: String, _ body: [String: Any]? = nil) async throws -> [String: Any] {
        var request = HTTPClientRequest(url: url)
        request.method = .init(rawValue: method)
        if let body {
            request.body = .bytes(ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: body)))
            request.headers.add(name: "Content-Type", value: "application/json")
        }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(60))
        let buffer = try await response.body.collect(upTo: 16 * 1024 * 1024)
        return (try JSONSerialization.jsonObject(with: Data(buffer.readableBytesView)) as? [String: Any]) ?? [:]
    }
}
