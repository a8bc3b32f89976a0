import Foundation
import HubCore
import HubHistory
import HubSupport
import Hummingbird
import NIOCore

/// The dashboard's home page: what fires, at the top, with acknowledge and snooze a tap away; the sensors by room,
/// coloured by what their status means (`SensorLook`), searchable; the silences in force; the backends' health; the
/// air and the charts. The page is a shell the script (`HomeScript`, `/dashboard/app.js`) fills from the same JSON
/// API hubctl's users script against, and fills again when `/api/v1/stream` says something changed. Device text goes
/// on the page as `textContent` only, never as markup. What a person may do follows their role: viewers look,
/// members act on alerts and silences, admins add, rename and remove sensors (the API refuses the rest anyway).
extension HubAPI {
    func dashboard(_ context: HubRequestContext) async throws -> Response {
        let air = snapshot(false).air.first
        let numeric = try await readStore().sensors.filter { $0.kind == .numeric }.sortedByName()
        let access = context.identity?.access ?? .read
        let now = Timestamp.now
        var html = Self.pageHead(title: "SensorHub") + topBar(context, current: "/")
        html += "<link rel=\"stylesheet\" href=\"/dashboard/dygraph.css\">\n"
        html += "<main data-access=\"\(["read", "act", "manage"][access.rawValue - 1])\""
        html += " data-who=\"\(escape(context.identity?.name ?? ""))\">\n"
        html += bookResetBanner((try? await savedAlerts())?.book, now: now)
        html += """
            <h1 class="visually-hidden">SensorHub</h1>
            <section id="firing" aria-label="Alerts firing" aria-live="polite"></section>
            <p id="connection" class="banner" role="status" hidden></p>

            """
        html += airCard(air)
        html += """
            <div class="toolbar">
            <input type="search" id="search" placeholder="Search sensors" aria-label="Search sensors by name, status or room">
            <button type="button" id="silence-open" data-needs="act">Add a silence</button>
            <button type="button" id="sensor-open" data-needs="manage">Add a sensor</button>
            <button type="button" id="discover-open" data-needs="manage">Discover devices</button>
            </div>
            <div id="sensors" aria-live="polite"><p class="muted">Loading…</p></div>
            <section id="silences-section" hidden><h2>Silences</h2><table id="silences" class="cards"><thead><tr>
            <th>Holds</th><th>Until</th><th>By</th><th>Comment</th><th><span class="visually-hidden">Actions</span></th>
            </tr></thead><tbody></tbody></table></section>
            <section id="backends-section" hidden><h2>Notifications</h2><table id="backends" class="cards"><thead><tr>
            <th>Backend</th><th>Queue</th><th>Last delivered</th><th>Last error</th>
            <th><span class="visually-hidden">Actions</span></th></tr></thead><tbody></tbody></table></section>

            """
        html += charts(air: air != nil, numeric: numeric)
        // Only where a webpush backend is configured: the button could do nothing otherwise.
        if webPushKey() != nil { html += DashboardPush.section }
        html += """
            <p class="muted">Updated live. API: <a href="/api/v1/openapi.yaml">/api/v1</a> · <a href="/metrics">metrics</a></p>
            </main>
            \(Self.dialogs)
            <script src="/dashboard/dygraph.js" defer></script>
            <script src="/dashboard/app.js" defer></script>
            </body></html>

            """
        return Response(
            status: .ok, headers: [.contentType: "text/html; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: html)))
    }

    /// The forms the home page opens: a silence with its preview, a sensor to add, a new name.
    static let dialogs = """
        <dialog id="silence-dialog" aria-labelledby="silence-title"><form method="dialog" id="silence-form">
        <h2 id="silence-title">Add a silence</h2>
        <label>Matching <input name="matchers" required placeholder="front door · door* · room=garage kind=offline"
         autocomplete="off" aria-describedby="silence-help"></label>
        <p id="silence-help" class="muted">Sensor names or globs (door*); name=value for a label, kind, rule or status. All must match.</p>
        <fieldset class="plain"><legend>For</legend><div class="lengths" id="silence-lengths">
        <button type="button" data-length="30m">30 min</button><button type="button" data-length="1h">1 h</button>
        <button type="button" data-length="2h" aria-pressed="true">2 h</button><button type="button" data-length="8h">8 h</button>
        <button type="button" data-length="1d">1 day</button><button type="button" data-length="7d">1 week</button>
        </div></fieldset>
        <label>Comment <input name="comment" maxlength="500" placeholder="painting the door"></label>
        <div class="preview" id="silence-preview" aria-live="polite"></div>
        <p class="error" id="silence-error" role="alert"></p>
        <div class="buttons"><button type="button" value="cancel" data-close>Cancel</button>
        <button type="submit" class="primary">Add the silence</button></div>
        </form></dialog>
        <dialog id="sensor-dialog" aria-labelledby="sensor-title"><form method="dialog" id="sensor-form">
        <h2 id="sensor-title">Add a sensor</h2>
        <label>Name <input name="name" required autocomplete="off" placeholder="front door"></label>
        <label>Device <select name="preset">
        <option value="">Plain: the firmware publishes its status as it is</option>
        <option value="zigbee2mqtt">Zigbee2MQTT</option><option value="tasmota">Tasmota</option>
        <option value="esphome">ESPHome</option><option value="shelly">Shelly (Gen2+)</option></select></label>
        <label data-for="preset">Its name in Zigbee2MQTT, Tasmota topic, ESPHome node/sensor/id or Shelly prefix/component:id
         <input name="device" autocomplete="off" placeholder="the sensor's name when left empty"></label>
        <label data-for="preset">Value <input name="value" autocomplete="off" placeholder="contact, water_leak, temperature…"></label>
        <label data-for="plain">Topic <input name="topic" autocomplete="off" placeholder="from the name when left empty"></label>
        <label data-for="plain">Kind <select name="kind"><option value="status">status</option>
        <option value="numeric">numeric</option><option value="particulate">particulate</option></select></label>
        <p class="error" id="sensor-error" role="alert"></p>
        <div class="buttons"><button type="button" value="cancel" data-close>Cancel</button>
        <button type="submit" class="primary">Add</button></div>
        </form></dialog>
        <dialog id="discover-dialog" aria-labelledby="discover-title"><form method="dialog" id="discover-form">
        <h2 id="discover-title">Devices on the broker</h2>
        <p id="discover-status" class="muted" aria-live="polite"></p>
        <div id="discover-list"></div>
        <p class="error" id="discover-error" role="alert"></p>
        <div class="buttons"><button type="button" value="cancel" data-close>Close</button>
        <button type="button" id="discover-again">Listen again</button>
        <button type="submit" class="primary" id="discover-add" disabled>Add the chosen</button></div>
        </form></dialog>
        <dialog id="rename-dialog" aria-labelledby="rename-title"><form method="dialog" id="rename-form">
        <h2 id="rename-title">Rename</h2>
        <label>New name <input name="name" required autocomplete="off"></label>
        <p class="muted">Its topic stays: the firmware needs no change.</p>
        <p class="error" id="rename-error" role="alert"></p>
        <div class="buttons"><button type="button" value="cancel" data-close>Cancel</button>
        <button type="submit" class="primary">Rename</button></div>
        </form></dialog>
        """

    func airCard(_ air: SensorTracker.AirSnapshot?) -> String {
        guard let air else { return "" }
        guard let reading = air.reading, let aqi = AQI.index(pm25: reading.pm25, pm10: reading.pm10) else {
            return """
                <div id="air" class="card grey"><div class="big">\(escape(air.sensor))</div>\
                <div class="values">waiting for a reading</div><div class="when muted"></div></div>

                """
        }
        let category = AQI.category(aqi)
        let values =
            "PM2.5 \(reading.pm25.map(ParticulateReading.format) ?? "–") µg/m³ · PM10 \(reading.pm10.map(ParticulateReading.format) ?? "–") µg/m³"
        return """
            <div id="air" class="card \(category.colour)"><div class="muted">\(escape(air.sensor))</div>\
            <div class="big">AQI \(aqi) · \(escape(category.name))</div><div class="values">\(values)</div>\
            <div class="when">\(air.alerting ? "Alert: above the threshold · " : "")\(reading.time.relative(to: .now))</div></div>

            """
    }

    /// The charts: PM2.5 and PM10 when there is a particulate sensor, then one a numeric sensor, drawn by the page's
    /// script with dygraphs from `/dashboard/chart.json` as they scroll into view (a building may have hundreds).
    func charts(air: Bool, numeric: [Sensor]) -> String {
        guard air || !numeric.isEmpty else { return "" }
        var html = """
            <h2>Charts</h2>
            <nav id="periods" class="periods" aria-label="Chart period"><a href="#" data-period="hour">Hour</a>\
            <a href="#" data-period="day" aria-current="true">Day</a><a href="#" data-period="week">Week</a>\
            <a href="#" data-period="month">Month</a></nav>
            <p class="muted">Hover or touch for values; drag across a chart to zoom, double-click to zoom out.</p>
            <div class="charts">

            """
        func chart(_ id: String?, name: String, query: String) {
            let source = "/dashboard/chart.json?" + query
            html += "<figure class=\"chart\"" + (id.map { " id=\"\($0)\"" } ?? "")
            html += " data-src=\"\(escape(source))\" role=\"img\" aria-label=\"\(escape(name)) chart\">"
            html += "<div class=\"plot\"></div></figure>\n"
        }
        if air {
            chart("chart-pm25", name: "PM2.5", query: "pollutant=pm25")
            chart("chart-pm10", name: "PM10", query: "pollutant=pm10")
        }
        for sensor in numeric {
            chart(nil, name: sensor.name, query: "sensor=" + WebText.percentEncoded(sensor.name))
        }
        return html + "</div>\n"
    }

    /// The start of every page, to `<body>`: one style sheet (`WebStyle`, no external assets: the pages work
    /// offline).
    static func pageHead(title: String) -> String {
        """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>\(escape(title))</title>
        <link rel="manifest" href="/manifest.webmanifest"><link rel="icon" href="/icon.svg" type="image/svg+xml">
        <meta name="theme-color" content="#1d2330">
        <link rel="stylesheet" href="/dashboard/app.css">
        </head><body>

        """
    }

    /// The pages a person moves between, in the top bar.
    static let places: [(path: String, name: String)] = [
        ("/", "Home"), ("/events", "Events"), ("/alerts", "Alerts"), ("/sessions", "Sessions"),
        ("/route", "Route"),
    ]

    /// The bar at the top of every page once logged in: the places, who is logged in, and logging out.
    func topBar(_ context: HubRequestContext, current: String) -> String {
        var html = "<header class=\"top\"><a class=\"brand\" href=\"/\">SensorHub</a><nav aria-label=\"Pages\">"
        for place in Self.places {
            let here = place.path == current ? " aria-current=\"page\"" : ""
            html += "<a href=\"\(place.path)\"\(here)>\(place.name)</a>"
        }
        return html + "</nav>" + userBar(context) + "</header>\n"
    }

    /// A class per AQI level for the air card (`.yellow`), in the level's colour from `AQI.categories`; white text
    /// on the dark ones.
    static let levelStyles =
        AQI.categories.map { ".\($0.colour){background:\($0.hex)}" }.joined()
        + ".purple,.maroon{color:#fff}"

    /// The status as the table shows it: a numeric sensor's value with its unit (`21.5 °C`), with bands the band and
    /// the value (`Moderate (3.4 UVI)`).
    static func shownStatus(_ sensor: Sensor) -> String { sensor.shownStatus }

    /// A device's attributes on one line: `battery: 90 · linkquality: 120`.
    static func text(of attributes: SensorAttributes) -> String {
        attributes.map { "\($0.name): \($0.value)" }.joined(separator: " · ")
    }
}

/// Text safe inside HTML and SVG (`WebText.html`).
func escape(_ text: String) -> String { WebText.html(text) }
