import Foundation
import HubCore
import HubNotify
import Hummingbird
import NIOCore

/// The dashboard's alerts page: the open alerts (firing, acknowledged by whom, held by a parent) and the silences
/// with their expiry, as hubd's book has them; it reloads itself every 10 s.
extension HubAPI {
    func alertsPage() async throws -> Response {
        let saved = try await savedAlerts()
        let book = saved.book
        let now = Timestamp.now
        var html = Self.pageHead(title: "SensorHub alerts")
        html += "<meta http-equiv=\"refresh\" content=\"10\">\n<h1>Alerts</h1>\n<p><a href=\"/\">Sensors</a></p>\n"
        html += "<table id=\"alerts\"><thead><tr><th>Alert</th><th>Status</th><th>State</th><th>Opened</th>"
        html += "<th>Told</th></tr></thead><tbody>\n"
        let alerts = book.alerts.values.sorted { ($0.opened, $0.id) < ($1.opened, $1.id) }
        if alerts.isEmpty { html += "<tr><td colspan=\"5\">No open alerts.</td></tr>\n" }
        for alert in alerts {
            html += "<tr><td>\(escape(alert.id))</td><td>\(escape(alert.event.newStatus))</td>"
            html += "<td class=\"state\">\(escape(alert.stateText))</td>"
            html += "<td>\(escape(alert.opened.relative(to: now)))</td>"
            html += "<td>\(escape(alert.told.joined(separator: ", ")))</td></tr>\n"
        }
        html += "</tbody></table>\n<h2>Silences</h2>\n"
        let silences = saved.silences(at: now)
        html += "<table id=\"silences\"><thead><tr><th>Matchers</th><th>State</th><th>Ends</th><th>By</th>"
        html += "<th>Comment</th></tr></thead><tbody>\n"
        if silences.isEmpty {
            html += "<tr><td colspan=\"5\">None in force: <code>hubctl silences add</code></td></tr>\n"
        }
        for (silence, waiting) in silences {
            html += "<tr><td>\(escape(silence.matchers.map(\.description).joined(separator: " ")))</td>"
            html += "<td>\(silence.state(at: now).rawValue)\(waiting ? " (hubd has not taken it yet)" : "")</td>"
            html += "<td>\(escape(silence.endsAt.iso8601))</td><td>\(escape(silence.createdBy))</td>"
            html += "<td>\(escape(silence.comment))</td></tr>\n"
        }
        html += "</tbody></table>\n</body></html>\n"
        return Response(
            status: .ok, headers: [.contentType: "text/html; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: html)))
    }
}
