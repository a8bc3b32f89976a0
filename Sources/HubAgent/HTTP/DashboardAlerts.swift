import Foundation
import HubCore
import HubNotify
import Hummingbird
import NIOCore

/// The dashboard's alerts page: the open alerts (firing, acknowledged by whom, held by a parent) and the silences
/// with their expiry, as hubd's book has them; it loads itself again when `/api/v1/stream` says something changed.
extension HubAPI {
    func alertsPage(_ context: HubRequestContext) async throws -> Response {
        let saved = try await savedAlerts()
        let book = saved.book
        let now = Timestamp.now
        var html = Self.pageHead(title: "Alerts · SensorHub") + topBar(context, current: "/alerts")
        html += "<main>\n<h1>Alerts</h1>\n"
        html += bookResetBanner(book, now: now)
        html += "<table id=\"alerts\" class=\"cards\"><thead><tr><th>Alert</th><th>Rule</th><th>State</th>"
        html += "<th>Told</th></tr></thead><tbody>\n"
        let alerts = book.alerts.values.sorted { ($0.opened, $0.id) < ($1.opened, $1.id) }
        if alerts.isEmpty { html += "<tr><td colspan=\"4\">No open alerts.</td></tr>\n" }
        for alert in alerts {
            html += "<tr data-id=\"\(escape(alert.id))\"><td data-label=\"Alert\">\(escape(alert.spoken(now: now)))</td>"
            html += "<td data-label=\"Rule\">\(escape(alert.rule))</td>"
            html += "<td class=\"state\" data-label=\"State\">\(escape(book.why(alert, alertSetup(), now: now)))</td>"
            let told = alert.told.isEmpty ? "nobody yet" : alert.told.joined(separator: ", ")
            html += "<td data-label=\"Told\">\(escape(told))</td></tr>\n"
        }
        html += "</tbody></table>\n<h2>Silences</h2>\n"
        let silences = saved.silences(at: now)
        html += "<table id=\"silences\" class=\"cards\"><thead><tr><th>Matchers</th><th>State</th><th>Ends</th>"
        html += "<th>By</th><th>Comment</th></tr></thead><tbody>\n"
        if silences.isEmpty {
            html += "<tr><td colspan=\"5\">None in force.</td></tr>\n"
        }
        for (silence, waiting) in silences {
            html += "<tr><td data-label=\"Matchers\">\(escape(silence.matchers.map(\.description).joined(separator: " ")))</td>"
            html += "<td data-label=\"State\">\(silence.state(at: now).rawValue)"
            html += "\(waiting ? " (hubd has not taken it yet)" : "")</td>"
            html += "<td data-label=\"Ends\">\(escape(silence.endsAt.iso8601))</td>"
            html += "<td data-label=\"By\">\(escape(silence.createdBy))</td>"
            html += "<td data-label=\"Comment\">\(escape(silence.comment))</td></tr>\n"
        }
        html += "</tbody></table>\n</main>\n<script src=\"/dashboard/follow.js\" defer></script></body></html>\n"
        return Response(
            status: .ok, headers: [.contentType: "text/html; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: html)))
    }
}

extension HubAPI {
    /// A warning at the top of the pages for a month after the alert book was begun again (it was lost or could not
    /// be read): what was open, silenced or linked before is gone, and a person should know.
    func bookResetBanner(_ book: AlertBook?, now: Timestamp) -> String {
        guard let reset = book?.reset,
            now.millisecondsSince1970 - reset.at.millisecondsSince1970 < 30 * 86_400_000
        else { return "" }
        var text = "The alert book was begun again \(reset.at.relative(to: now)) (\(reset.reason))"
        if let kept = reset.keptAs { text += "; the old file is kept as \(kept)" }
        text += ". Alerts open, silences and links from before are gone; the hub logged it as an error."
        return "<p class=\"banner error\" role=\"alert\" id=\"book-reset\">\(escape(text))</p>\n"
    }
}
