/// The dashboard's script, served as a file (`/dashboard/app.js`): the pages carry no inline script, so the
/// Content-Security-Policy can refuse any (`script-src 'self'`). It polls the API every two seconds and puts device
/// text on the page as `textContent` only, never as markup; the session cookie goes with its requests by itself.
enum DashboardScript {
    static let text = """
        const vis = s => String(s).replace(/(?![\\u200c\\u200d])[\\p{Cc}\\p{Cf}\\u2028\\u2029]/gu,
            c => '\\\\u{' + c.codePointAt(0).toString(16).toUpperCase() + '}');
        function ago(t) {
          if (!t) return 'never';
          const s = Math.max(0, Math.floor((Date.now() - Date.parse(t)) / 1000));
          if (s < 5) return 'just now'; if (s < 60) return s + ' s ago'; if (s < 3600) return Math.floor(s / 60) + ' min ago';
          if (s < 86400) return Math.floor(s / 3600) + ' h ago'; return Math.floor(s / 86400) + ' days ago';
        }
        function cell(text, className) {
          const td = document.createElement('td');
          if (className) td.className = className;
          td.textContent = vis(text);
          return td;
        }
        function shown(s) {
          if (s.value == null) return s.status;
          const unit = !s.unit ? '' : s.unit === '%' ? s.unit : ' ' + s.unit;
          // With bands the status is the band: the value follows it, as Sensor.shownStatus shows it.
          if (s.bands) return s.status + ' (' + s.value + unit + ')';
          return s.status + unit;
        }
        function row(s) {
          const tr = document.createElement('tr');
          tr.dataset.name = vis(s.name);
          const name = cell(s.name);
          if (s.attributes) {
            const attributes = document.createElement('div');
            attributes.className = 'attributes muted';
            attributes.textContent = vis(Object.entries(s.attributes).map(([k, v]) => k + ': ' + v).join(' · '));
            name.append(attributes);
          }
          if (s.mobile) {
            const sessions = document.createElement('div');
            sessions.className = 'attributes muted';
            const link = document.createElement('a');
            link.className = 'sessions';
            link.href = '/sessions?sensor=' + encodeURIComponent(s.name);
            link.textContent = 'sessions';
            sessions.append(link);
            if (s.session) sessions.append(' · recording');
            name.append(sessions);
          }
          tr.append(name, cell(shown(s), 'status'), cell(ago(s.lastUpdated), 'updated'), cell(s.topic));
          return tr;
        }
        async function refresh() {
          try {
            const answer = await fetch('/api/v1/sensors');
            // The login ended (logged out elsewhere, expired, the password changed): to the login page, and back.
            if (answer.status === 401) { location.href = '/login?next=' + encodeURIComponent(location.pathname); return; }
            const sensors = await answer.json();
            const body = document.querySelector('#sensors tbody');
            if (sensors.length) {
              const rows = document.createDocumentFragment();
              for (const s of sensors) rows.append(row(s));
              body.replaceChildren(rows);
            } else {
              body.innerHTML = '<tr><td colspan="4">No sensors yet: <code>hubctl sensors add NAME</code></td></tr>';
            }
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
          for (const img of document.querySelectorAll('img.chart')) {
            img.src = `${img.dataset.src}&period=${period}&t=${Date.now()}`;
          }
        }
        document.querySelectorAll('#periods a').forEach(a => a.addEventListener('click', e => {
          e.preventDefault(); period = a.dataset.period; charts();
        }));
        setInterval(refresh, 2000);
        setInterval(charts, 60000);

        """
}
