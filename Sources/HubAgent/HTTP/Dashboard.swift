import Foundation
import HubCore
import HubHistory
import HubSupport
import Hummingbird
import NIOCore

/// The dashboard: one server-rendered page (no CDN, no npm) with the sensor table (a device's attributes under its
/// sensor's name), the air-quality card in its level's colour, and charts as SVG (PM for the particulate sensor, one
/// for every numeric sensor); a few lines of script poll the API every two seconds to keep it live. The script puts
/// device text on the page as `textContent` only, never as markup.
extension HubAPI {
    func dashboard(_ context: HubRequestContext) async throws -> Response {
        let (sensors, mobile) = try await liveSensors()
        let air = snapshot(false).air.first
        let now = Timestamp.now
        var html = Self.pageHead(title: "SensorHub") + userBar(context) + "<h1>SensorHub</h1>\n"
        html += bookResetBanner((try? await savedAlerts())?.book, now: now)
        html += airCard(air)
        html += """
            <h2>Sensors</h2>
            <table id="sensors"><thead><tr><th>Name</th><th>Status</th><th>Last updated</th><th>Topic</th></tr></thead>
            <tbody>
            """
        if sensors.isEmpty {
            html += "<tr><td colspan=\"4\">No sensors yet: <code>hubctl sensors add NAME</code></td></tr>\n"
        }
        for sensor in sensors {
            let updated = sensor.lastUpdated.map { $0.relative(to: now) } ?? "never"
            html += "<tr data-name=\"\(escape(sensor.name))\"><td>\(escape(sensor.name))"
            if !sensor.attributes.isEmpty {
                html += "<div class=\"attributes muted\">\(escape(Self.text(of: sensor.attributes)))</div>"
            }
            if mobile.contains(sensor.name) {
                let link = "/sessions?sensor=" + WebText.percentEncoded(sensor.name)
                html += "<div class=\"attributes muted\"><a class=\"sessions\" href=\"\(escape(link))\">sessions</a>"
                html += (sensor.session == nil ? "" : " · recording") + "</div>"
            }
            html += "</td><td class=\"status\">\(escape(Self.shownStatus(sensor)))</td>"
            html += "<td class=\"updated\">\(escape(updated))</td><td>\(escape(sensor.topic))</td></tr>\n"
        }
        html += "</tbody></table>\n"
        html += charts(air: air != nil, numeric: sensors.filter { $0.kind == .numeric })
        // Only where a webpush backend is configured: the button could do nothing otherwise.
        if webPushKey() != nil { html += DashboardPush.section }
        html += """
            <p class="muted">Updated live. <a href="/alerts">Alerts</a> · API: <a href="/api/v1/openapi.yaml">/api/v1</a> · <a href="/metrics">metrics</a></p>
            <script src="/dashboard/app.js" defer></script>
            </body></html>

            """
        return Response(
            status: .ok, headers: [.contentType: "text/html; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: html)))
    }

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

    /// The charts: PM2.5 and PM10 when there is a particulate sensor, then one a numeric sensor (loaded as they
    /// scroll into view: a building may have hundreds).
    func charts(air: Bool, numeric: [Sensor]) -> String {
        guard air || !numeric.isEmpty else { return "" }
        var html = """
            <h2>Charts</h2>
            <nav id="periods"><a href="#" data-period="hour">Hour</a><a href="#" data-period="day">Day</a>\
            <a href="#" data-period="week">Week</a><a href="#" data-period="month">Month</a></nav>
            <div class="charts">

            """
        func image(_ id: String?, alt: String, query: String, lazy: Bool) {
            let source = "/dashboard/chart.svg?" + query
            html += "<img class=\"chart\"" + (id.map { " id=\"\($0)\"" } ?? "") + " alt=\"\(escape(alt))\""
            html += " data-src=\"\(escape(source))\" src=\"\(escape(source + "&period=day"))\""
            html += (lazy ? " loading=\"lazy\"" : "") + ">\n"
        }
        if air {
            image("chart-pm25", alt: "PM2.5 chart", query: "pollutant=pm25", lazy: false)
            image("chart-pm10", alt: "PM10 chart", query: "pollutant=pm10", lazy: false)
        }
        for sensor in numeric {
            let name = WebText.percentEncoded(sensor.name)
            image(nil, alt: sensor.name + " chart", query: "sensor=" + name, lazy: true)
        }
        return html + "</div>\n"
    }

    /// The start of every dashboard page, to `<body>`: one style sheet (no external assets: the pages work offline).
    static func pageHead(title: String) -> String {
        """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>\(escape(title))</title>
        <link rel="manifest" href="/manifest.webmanifest"><link rel="icon" href="/icon.svg" type="image/svg+xml">
        <meta name="theme-color" content="#1d2330">
        <style>
        body{font-family:system-ui,-apple-system,sans-serif;margin:0;padding:1rem;background:#f6f7f9;color:#1d2330}
        h1{font-size:1.3rem;margin:0 0 1rem} h2{font-size:1.05rem;margin:1.5rem 0 .5rem}
        table{border-collapse:collapse;width:100%;background:#fff;border-radius:8px;overflow:hidden}
        th,td{text-align:left;padding:.5rem .6rem;border-bottom:1px solid #e4e7ec;font-size:.95rem}
        th{background:#eef1f5;font-weight:600} td.status{font-weight:600}
        .card{border-radius:10px;padding:1rem;color:#111;max-width:28rem;margin-bottom:1rem}
        .card .big{font-size:2rem;font-weight:700} .muted{color:#5b6472;font-size:.85rem}
        \(levelStyles)
        .grey{background:#d0d5dd}
        .charts img,.charts svg{width:100%;max-width:40rem;background:#fff;border-radius:8px;display:block;margin-bottom:.5rem}
        .attributes{font-weight:400;margin-top:.15rem}
        nav a{margin-right:.8rem}
        #push input,#push button{font:inherit;padding:.35rem .5rem;margin:.2rem .4rem .2rem 0}
        #push-status[data-state=error]{color:#b42318} #push-status[data-state=done]{color:#067647}
        .map svg{width:100%;max-width:40rem;background:#fff;border-radius:8px;display:block}
        dl.figures{display:grid;grid-template-columns:max-content 1fr;gap:.2rem 1rem;margin:0 0 1rem}
        dl.figures dt{color:#5b6472} dl.figures dd{margin:0;font-weight:600}
        .userbar{float:right;text-align:right} .userbar form{display:inline} .userbar button{font:inherit;margin-left:.4rem}
        main.login{max-width:22rem;margin:3rem auto} main.login label{display:block;margin:.6rem 0}
        main.login input{display:block;width:100%;box-sizing:border-box;font:inherit;padding:.5rem;margin-top:.2rem}
        main.login button{font:inherit;padding:.5rem 1.2rem;margin-top:.6rem}
        .error{color:#b42318} .notice{font-weight:600} .banner{background:#fef3f2;border:1px solid #fda29b;padding:.6rem;border-radius:8px}
        @media (max-width:600px){th:nth-child(4),td:nth-child(4){display:none}}
        </style></head><body>

        """
    }

    /// A class per AQI level for the air card (`.yellow`), in the level's colour from `AQI.categories`; white text
    /// on the dark ones.
    static let levelStyles =
        AQI.categories.map { ".\($0.colour){background:\($0.hex)}" }.joined()
        + ".red,.purple,.maroon{color:#fff}"

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
