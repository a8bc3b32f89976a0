import HubCore
import Hummingbird
import NIOCore

/// The events page (`/events`): the history's events, newest first, filtered by sensor, kind and time, following
/// the hub live, with the same filters as a CSV or JSON download (`/api/v1/events`). A shell the script
/// (`EventsScript`) fills.
extension HubAPI {
    func eventsPage(_ context: HubRequestContext) async throws -> Response {
        let names = try await readStore().sensors.sortedByName().map(\.name)
        var html = Self.pageHead(title: "Events · SensorHub") + topBar(context, current: "/events")
        html += "<main>\n<h1>Events</h1>\n<form class=\"filters\" id=\"filters\">\n"
        html += "<label>Sensor <select name=\"sensor\"><option value=\"\">every sensor</option>"
        html += names.map { "<option>\(escape($0))</option>" }.joined() + "</select></label>\n"
        html += "<label>Kind <select name=\"kind\"><option value=\"\">every kind</option>"
        html += SensorEvent.Kind.all.map { "<option>\($0.rawValue)</option>" }.joined() + "</select></label>\n"
        html += """
            <label>Since <select name="since"><option value="1h">the last hour</option>
            <option value="24h" selected>the last day</option><option value="7d">the last week</option>
            <option value="30d">the last 30 days</option><option value="365d">the last year</option></select></label>
            <a id="csv" href="/api/v1/events?format=csv" download>Download CSV</a>
            <a id="json" href="/api/v1/events" download="sensorhub-events.json">Download JSON</a>
            </form>
            <p id="connection" class="banner" role="status" hidden></p>
            <p id="count" class="muted" aria-live="polite"></p>
            <table id="events" class="cards"><thead><tr><th>Time</th><th>Sensor</th><th>Event</th><th>From</th>
            <th>To</th></tr></thead><tbody></tbody></table>
            </main>
            <script src="/dashboard/events.js" defer></script>
            </body></html>

            """
        return Response(
            status: .ok, headers: [.contentType: "text/html; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: html)))
    }
}

/// The events page's script: the filters make one query, which the table and both downloads use.
enum EventsScript {
    static let text =
        PageScript.common + #"""
        const form = document.getElementById('filters');
        // %20 for a space, not URLSearchParams' '+', which the API reads as a '+'.
        function query() {
          return ['sensor', 'kind', 'since'].filter(name => form[name].value)
            .map(name => name + '=' + encodeURIComponent(form[name].value)).join('&');
        }
        async function draw() {
          const q = query();
          document.getElementById('csv').href = '/api/v1/events?' + q + '&format=csv&limit=10000';
          document.getElementById('json').href = '/api/v1/events?' + q + '&limit=10000';
          try {
            const events = (await api('GET', '/api/v1/events?' + q + '&limit=1000')).reverse();
            document.getElementById('count').textContent = events.length === 1000
              ? 'The newest 1,000 events: the download has the newest 10,000.' : events.length + ' events';
            document.querySelector('#events tbody').replaceChildren(...events.map(e => el('tr', {},
              el('td', {'data-label': 'Time'}, el('time', {dateTime: e.time, title: e.time, text: clock(e.time)})),
              el('td', {'data-label': 'Sensor', text: e.sensor}), el('td', {'data-label': 'Event', text: e.event}),
              el('td', {'data-label': 'From', text: e.from}),
              el('td', {'data-label': 'To', class: 'status', text: e.to + (e.detail ? ' (' + e.detail + ')' : '')}))));
            if (!events.length) document.querySelector('#events tbody').replaceChildren(
              el('tr', {}, el('td', {colspan: 5, text: 'No events with these filters.'})));
          } catch (e) { document.getElementById('count').textContent = e.message; }
        }
        form.addEventListener('change', draw);
        form.addEventListener('submit', e => e.preventDefault());
        draw();
        follow(draw);

        """#
}
