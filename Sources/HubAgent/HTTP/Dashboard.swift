import Foundation
import HubCore
import HubHistory
import HubSupport
import Hummingbird
import NIOCore

/// The dashboard: one server-rendered page (no CDN, no npm) with the sensor table, the air-quality card in its
/// level's colour and PM charts as SVG; a few lines of script poll the API every two seconds to keep it live.
extension HubAPI {
    func dashboard() throws -> Response {
        let sensors = try sensors()
        let air = snapshot(false).air.first
        let now = Timestamp.now
        var html = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>SensorHub</title>
            <style>
            body{font-family:system-ui,-apple-system,sans-serif;margin:0;padding:1rem;background:#f6f7f9;color:#1d2330}
            h1{font-size:1.3rem;margin:0 0 1rem} h2{font-size:1.05rem;margin:1.5rem 0 .5rem}
            table{border-collapse:collapse;width:100%;background:#fff;border-radius:8px;overflow:hidden}
            th,td{text-align:left;padding:.5rem .6rem;border-bottom:1px solid #e4e7ec;font-size:.95rem}
            th{background:#eef1f5;font-weight:600} td.status{font-weight:600}
            .card{border-radius:10px;padding:1rem;color:#111;max-width:28rem;margin-bottom:1rem}
            .card .big{font-size:2rem;font-weight:700} .muted{color:#5b6472;font-size:.85rem}
            .green{background:#00e400}.yellow{background:#ffff00}.orange{background:#ff7e00}
            .red{background:#ff0000;color:#fff}.purple{background:#8f3f97;color:#fff}.maroon{background:#7e0023;color:#fff}
            .grey{background:#d0d5dd}
            .charts img{width:100%;max-width:40rem;background:#fff;border-radius:8px;display:block;margin-bottom:.5rem}
            nav a{margin-right:.8rem}
            @media (max-width:600px){th:nth-child(4),td:nth-child(4){display:none}}
            </style></head><body>
            <h1>SensorHub</h1>

            """
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
            html += "<tr data-name=\"\(escape(sensor.name))\"><td>\(escape(sensor.name))</td>"
            html += "<td class=\"status\">\(escape(sensor.status))</td><td class=\"updated\">\(escape(updated))</td>"
            html += "<td>\(escape(sensor.topic))</td></tr>\n"
        }
        html += "</tbody></table>\n"
        if air != nil {
            html += """
                <h2>Particulates</h2>
                <nav id="periods"><a href="#" data-period="hour">Hour</a><a href="#" data-period="day">Day</a>\
                <a href="#" data-period="week">Week</a><a href="#" data-period="month">Month</a></nav>
                <div class="charts">
                <img id="chart-pm25" alt="PM2.5 chart" src="/dashboard/chart.svg?pollutant=pm25&amp;period=day">
                <img id="chart-pm10" alt="PM10 chart" src="/dashboard/chart.svg?pollutant=pm10&amp;period=day">
                </div>

                """
        }
        html += """
            <p class="muted">Updated live. API: <a href="/api/v1/openapi.yaml">/api/v1</a> · <a href="/metrics">metrics</a></p>
            <script>
            const esc = s => String(s).replace(/(?![\\u200c\\u200d])[\\p{Cc}\\p{Cf}\\u2028\\u2029]/gu,
                c => '\\\\u{' + c.codePointAt(0).toString(16).toUpperCase() + '}')
              .replace(/[&<>"]/g, c => ({'&':'&amp;','<':'&lt;','>':'&gt;','"':'&quot;'}[c]));
            function ago(t) {
              if (!t) return 'never';
              const s = Math.max(0, Math.floor((Date.now() - Date.parse(t)) / 1000));
              if (s < 5) return 'just now'; if (s < 60) return s + ' s ago'; if (s < 3600) return Math.floor(s / 60) + ' min ago';
              if (s < 86400) return Math.floor(s / 3600) + ' h ago'; return Math.floor(s / 86400) + ' days ago';
            }
            async function refresh() {
              try {
                const sensors = await (await fetch('/api/v1/sensors')).json();
                const body = document.querySelector('#sensors tbody');
                body.innerHTML = sensors.length ? sensors.map(s => `<tr data-name="${esc(s.name)}"><td>${esc(s.name)}</td>` +
                  `<td class="status">${esc(s.status)}</td><td class="updated">${esc(ago(s.lastUpdated))}</td><td>${esc(s.topic)}</td></tr>`).join('')
                  : '<tr><td colspan="4">No sensors yet: <code>hubctl sensors add NAME</code></td></tr>';
                const air = await (await fetch('/api/v1/air')).json();
                const card = document.getElementById('air');
                if (card && air.length && air[0].aqi !== undefined) {
                  const a = air[0];
                  card.className = 'card ' + a.colour;
                  card.querySelector('.big').textContent = 'AQI ' + a.aqi + ' · ' + a.category;
                  card.querySelector('.values').textContent = `PM2.5 ${a.pm25.toFixed(1)} µg/m³ · PM10 ${a.pm10.toFixed(1)} µg/m³`;
                  card.querySelector('.when').textContent = (a.alert ? 'Alert: above the threshold · ' : '') + ago(a.time);
                }
              } catch (e) { /* hubd restarting: try again */ }
            }
            let period = 'day';
            function charts() {
              for (const p of ['pm25', 'pm10']) {
                const img = document.getElementById('chart-' + p);
                if (img) img.src = `/dashboard/chart.svg?pollutant=${p}&period=${period}&t=${Date.now()}`;
              }
            }
            document.querySelectorAll('#periods a').forEach(a => a.addEventListener('click', e => {
              e.preventDefault(); period = a.dataset.period; charts();
            }));
            setInterval(refresh, 2000);
            setInterval(charts, 60000);
            </script>
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

    /// A line chart of one pollutant over a period: means (hourly, or daily for a month; raw for an hour), the
    /// WHO 24-hour guideline dashed.
    func chart(_ request: Request) throws -> Response {
        let pollutant: Pollutant = request.uri.queryParameters.get("pollutant") == "pm10" ? .pm10 : .pm25
        let periodText = request.uri.queryParameters.get("period") ?? "day"
        let spans: [String: (Duration, History.Period?)] = [
            "hour": (.seconds(3600), nil), "day": (.seconds(86_400), .hour), "week": (.seconds(7 * 86_400), .hour),
            "month": (.seconds(30 * 86_400), .day),
        ]
        guard let (span, period) = spans[periodText] else {
            throw HTTPError(.badRequest, message: "period is hour, day, week or month")
        }
        let name = (try? particulateSensor(request.uri.queryParameters.get("sensor"))) ?? ""
        let end = Timestamp.now.millisecondsSince1970
        let start = end - Int64(span.seconds * 1000)
        var points: [(Int64, Double)] = []
        if !name.isEmpty, let history = try? History(directory: stateDirectory, create: false) {
            let since = Timestamp(millisecondsSince1970: start)
            if let period {
                points = ((try? history.aggregates(of: name, since: since, per: period)) ?? []).compactMap { row in
                    (pollutant == .pm25 ? row.pm25 : row.pm10).map { (row.start.millisecondsSince1970, $0.mean) }
                }
            } else {
                points = ((try? history.readings(of: name, since: since)) ?? []).compactMap { reading in
                    (pollutant == .pm25 ? reading.pm25 : reading.pm10).map { (reading.time.millisecondsSince1970, $0) }
                }
            }
        }
        let svg = Self.svg(
            title: "\(pollutant.rawValue) µg/m³ · last \(periodText)", points: points, from: start, to: end,
            guideline: WHOGuideline.guideline(pollutant, .day))
        return Response(
            status: .ok, headers: [.contentType: "image/svg+xml", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(string: svg)))
    }

    static func svg(title: String, points: [(Int64, Double)], from start: Int64, to end: Int64, guideline: Double)
        -> String
    {
        let width = 640.0
        let height = 220.0
        let left = 44.0
        let bottom = 24.0
        let top = 28.0
        let maximum = max((points.map(\.1).max() ?? 0) * 1.1, guideline * 1.3, 1)
        func x(_ time: Int64) -> Double {
            left + (width - left - 8) * Double(time - start) / Double(max(end - start, 1))
        }
        func y(_ value: Double) -> Double { height - bottom - (height - bottom - top) * value / maximum }
        var svg = """
            <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 \(Int(width)) \(Int(height))" role="img" aria-label="\(escape(title))">
            <rect width="100%" height="100%" fill="#fff"/>
            <text x="\(left)" y="18" font-size="13" font-family="sans-serif" fill="#1d2330">\(escape(title))</text>
            <line x1="\(left)" y1="\(y(0))" x2="\(width - 8)" y2="\(y(0))" stroke="#c8ced8"/>
            <text x="4" y="\(y(maximum) + 10)" font-size="11" font-family="sans-serif" fill="#5b6472">\(Int(maximum.rounded()))</text>
            <text x="4" y="\(y(0))" font-size="11" font-family="sans-serif" fill="#5b6472">0</text>
            <line x1="\(left)" y1="\(y(guideline))" x2="\(width - 8)" y2="\(y(guideline))" stroke="#d92d20" stroke-dasharray="6 4"/>
            <text x="\(width - 150)" y="\(y(guideline) - 4)" font-size="11" font-family="sans-serif" fill="#d92d20">WHO 24 h guideline \(ParticulateReading.trim(guideline))</text>

            """
        if points.isEmpty {
            svg +=
                "<text x=\"\(width / 2 - 60)\" y=\"\(height / 2)\" font-size=\"13\" font-family=\"sans-serif\" fill=\"#5b6472\">No readings yet</text>\n"
        } else {
            let path = points.map { "\(String(format: "%.1f", x($0.0))),\(String(format: "%.1f", y($0.1)))" }.joined(
                separator: " ")
            svg +=
                "<polyline class=\"series\" points=\"\(path)\" fill=\"none\" stroke=\"#2563eb\" stroke-width=\"2\"/>\n"
            if points.count == 1 {
                svg += "<circle cx=\"\(x(points[0].0))\" cy=\"\(y(points[0].1))\" r=\"3\" fill=\"#2563eb\"/>\n"
            }
        }
        return svg + "</svg>\n"
    }
}

/// Text safe inside HTML and SVG: markup characters as entities, control and formatting characters (`UnsafeText`)
/// as visible `\u{202E}`, so that a status can't reorder or hide what the page shows around it.
func escape(_ text: String) -> String {
    var result = ""
    result.reserveCapacity(text.count)
    for character in UnsafeText.escaped(text) {
        switch character {
        case "&": result += "&amp;"
        case "<": result += "&lt;"
        case ">": result += "&gt;"
        case "\"": result += "&quot;"
        case "'": result += "&#39;"
        default: result.append(character)
        }
    }
    return result
}
