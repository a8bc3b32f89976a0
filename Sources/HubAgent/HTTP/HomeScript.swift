/// The pages' shared script and the home page's (`/dashboard/app.js`), served as files: the pages carry no inline
/// script, so the Content-Security-Policy refuses any (`script-src 'self'`). Device text goes on the page as
/// `textContent` only, never as markup. Every action is a call of the JSON API — the same doors hubctl's users
/// script against — and the page is drawn again from the API's answers, never from what it assumed.
enum HomeScript {
    static let home = #"""
        const state = {sensors: [], alerts: [], silences: [], notifiers: []};
        // Whether what `box` shows would change: a part is drawn again only then, so a button a person is about to
        // press (or has focused) stays the same element while nothing it stands for moved.
        function changed(box, ...what) {
          const print = JSON.stringify(what);
          if (box.dataset.print === print) return false;
          box.dataset.print = print;
          return true;
        }
        const encode = s => encodeURIComponent(s);
        function say(text, kind) {
          const banner = document.getElementById('connection');
          banner.textContent = text; banner.className = 'banner ' + (kind || ''); banner.hidden = false;
          clearTimeout(say.timer); say.timer = setTimeout(() => { banner.hidden = true; }, 6000);
        }
        async function act(button, work) {
          button.disabled = true;
          try { await work(); await draw(); } catch (e) { say(e.message, 'error'); } finally { button.disabled = false; }
        }
        function shown(s) {
          if (s.value == null) return s.status;
          const unit = !s.unit ? '' : s.unit === '%' ? s.unit : ' ' + s.unit;
          // With bands the status is the band: the value follows it, as Sensor.shownStatus shows it.
          if (s.bands) return s.status + ' (' + s.value + unit + ')';
          return s.status + unit;
        }
        // The banner: what fires and nobody acknowledged first, most urgent first; then what is acknowledged.
        function drawAlerts() {
          const open = state.alerts.filter(a => a.firing && !a.heldBy);
          open.sort((a, b) => (!!a.acknowledged - !!b.acknowledged) || (b.priority - a.priority)
            || (Date.parse(a.opened) - Date.parse(b.opened)));
          const box = document.getElementById('firing');
          if (!changed(box, open, access)) return;
          box.replaceChildren(...open.map(a => {
            const snoozes = (a.silencedBy || []).filter(id => id.startsWith('snooze-'));
            const buttons = el('div', {class: 'buttons'});
            if (may('act')) {
              if (!a.acknowledged) buttons.append(el('button', {type: 'button', class: 'primary', 'aria-label': 'Acknowledge ' + a.spoken,
                onclick: e => act(e.target, () => api('POST', '/api/v1/alerts/' + encode(a.id) + '/ack', {}))}, 'Acknowledge'));
              if (snoozes.length) buttons.append(el('button', {type: 'button', 'aria-label': 'Unsnooze ' + a.spoken,
                onclick: e => act(e.target, () => Promise.all(snoozes.map(id => api('DELETE', '/api/v1/silences/' + encode(id)))))}, 'Unsnooze'));
              else buttons.append(el('button', {type: 'button', 'aria-label': 'Snooze ' + a.spoken + ' for 1 hour',
                onclick: e => act(e.target, () => api('POST', '/api/v1/alerts/' + encode(a.id) + '/snooze', {for: '1h'}))}, 'Snooze 1 h'));
            }
            return el('div', {class: 'alert' + (a.acknowledged ? ' acknowledged' : ''), role: 'group',
                'aria-label': a.spoken, dataset: {id: a.id}},
              el('span', {class: 'what', text: a.spoken}), buttons, el('span', {class: 'why', text: a.state}));
          }));
        }
        function card(s) {
          const actions = el('div', {class: 'actions'});
          if (may('act')) actions.append(el('button', {type: 'button', 'aria-label': 'Silence ' + s.name,
            onclick: () => openSilence(s.name)}, 'Silence'));
          if (may('manage')) {
            actions.append(el('button', {type: 'button', 'aria-label': 'Rename ' + s.name, onclick: () => openRename(s.name)}, 'Rename'));
            actions.append(el('button', {type: 'button', class: 'danger', 'aria-label': 'Remove ' + s.name,
              onclick: e => { if (confirm('Remove the sensor ' + vis(s.name) + '? Its history stays.'))
                act(e.target, () => api('DELETE', '/api/v1/sensors/' + encode(s.name))); }}, 'Remove'));
          }
          const attributes = s.attributes ? el('div', {class: 'attributes muted',
            text: Object.entries(s.attributes).map(([k, v]) => k + ': ' + v).join(' · ')}) : null;
          let sessions = null;
          if (s.mobile) {
            sessions = el('div', {class: 'attributes muted'},
              el('a', {class: 'sessions', href: '/sessions?sensor=' + encode(s.name)}, 'sessions'), s.session ? ' · recording' : '');
          }
          return el('article', {class: 'sensor', dataset: {name: vis(s.name), look: s.look || 'fine'}, 'aria-label': s.name},
            el('div', {class: 'head'}, el('span', {class: 'name', text: s.name}),
              el('span', {class: 'status state-' + (s.look || 'fine'), text: shown(s)})),
            el('div', {class: 'muted'}, 'last seen ', el('time', {class: 'updated', dateTime: s.lastUpdated || '',
              'data-ago': true, text: ago(s.lastUpdated)})),
            ...(s.flags || []).map(f => el('span', {class: 'flag', text: f})), attributes, sessions, actions.children.length ? actions : null);
        }
        function drawSensors() {
          const box = document.getElementById('sensors');
          if (!state.sensors.length) {
            if (!changed(box, [])) return;
            box.replaceChildren(el('p', {}, 'No sensors yet. ', may('manage') ? 'Add one with "Add a sensor", or '
              : 'An admin adds them, or ', el('code', {}, 'hubctl sensors add NAME'), '.'));
            return;
          }
          const words = document.getElementById('search').value.trim().toLowerCase().split(/\s+/).filter(Boolean);
          if (!changed(box, state.sensors, words)) return;
          const hit = s => words.every(w => [s.name, shown(s), s.room || '', s.look || ''].some(f => String(f).toLowerCase().includes(w)));
          const shownSensors = state.sensors.filter(hit);
          const rooms = new Map();
          for (const s of shownSensors) {
            const room = s.room || '';
            if (!rooms.has(room)) rooms.set(room, []);
            rooms.get(room).push(s);
          }
          const names = [...rooms.keys()].sort((a, b) => (a === '') - (b === '') || a.localeCompare(b));
          const anyRoom = names.some(n => n !== '');
          const groups = names.map(room => el('section', {class: 'room', dataset: {room}, 'aria-label': room || 'Sensors'},
            el('h2', {text: room || (anyRoom ? 'Elsewhere' : 'Sensors')}),
            el('div', {class: 'grid'}, ...rooms.get(room).map(card))));
          if (!shownSensors.length) groups.push(el('p', {class: 'muted'}, 'No sensor matches the search.'));
          box.replaceChildren(...groups);
        }
        function drawSilences() {
          const now = Date.now();
          const live = state.silences.filter(s => Date.parse(s.endsAt) > now);
          document.getElementById('silences-section').hidden = !live.length;
          if (!changed(document.querySelector('#silences tbody'), live)) return;
          document.querySelector('#silences tbody').replaceChildren(...live.map(s => {
            const what = s.matchers.map(m => m.name === 'sensor' && m.operation === '=' ? m.value : m.name + m.operation + m.value).join(' ');
            const end = el('td', {'data-label': 'Actions'});
            if (may('act')) end.append(el('button', {type: 'button', 'aria-label': 'End the silence on ' + what,
              onclick: e => act(e.target, () => api('DELETE', '/api/v1/silences/' + encode(s.id)))}, 'End it'));
            return el('tr', {dataset: {id: s.id}}, el('td', {'data-label': 'Holds', text: what}),
              el('td', {'data-label': 'Until', text: clock(s.endsAt)}), el('td', {'data-label': 'By', text: s.createdBy}),
              el('td', {'data-label': 'Comment', text: s.comment || '–'}), end);
          }));
        }
        function drawBackends() {
          document.getElementById('backends-section').hidden = !state.notifiers.length;
          if (!changed(document.querySelector('#backends tbody'), state.notifiers)) return;
          document.querySelector('#backends tbody').replaceChildren(...state.notifiers.map(n => {
            const test = el('td', {'data-label': 'Actions'});
            const result = el('span', {class: 'muted result', 'aria-live': 'polite'});
            if (may('act')) test.append(el('button', {type: 'button', 'aria-label': 'Send a test notification through ' + n.name,
              onclick: async e => {
                e.target.disabled = true; result.textContent = ' sending…';
                try {
                  const answers = await api('POST', '/api/v1/notifiers/' + encode(n.name) + '/test', {});
                  const bad = answers.find(a => !a.delivered);
                  result.className = bad ? 'error result' : 'ok result';
                  result.textContent = ' ' + vis(bad ? bad.result : 'delivered in ' + answers[0].milliseconds + ' ms');
                } catch (error) { result.className = 'error result'; result.textContent = ' ' + error.message; }
                e.target.disabled = false;
              }}, 'Send a test'), result);
            return el('tr', {dataset: {name: n.name}},
              el('td', {'data-label': 'Backend'}, el('strong', {text: n.name}), ' ', el('span', {class: 'muted', text: n.type})),
              el('td', {'data-label': 'Queue', text: n.queued + (n.failed ? ' · ' + n.failed + ' failed' : '')}),
              el('td', {'data-label': 'Last delivered'}, n.lastDelivered ? el('time', {dateTime: n.lastDelivered, 'data-ago': true, text: ago(n.lastDelivered)}) : 'not since hubd started'),
              el('td', {'data-label': 'Last error', class: n.lastError ? 'error' : '', text: n.lastError ? n.lastError + ' (' + ago(n.lastErrorAt) + ')' : 'none'}),
              test);
          }));
        }
        function drawAir(air) {
          const card = document.getElementById('air');
          if (card && air.length && air[0].aqi !== undefined) {
            const a = air[0];
            card.className = 'card ' + a.colour;
            card.querySelector('.big').textContent = 'AQI ' + a.aqi + ' · ' + a.category;
            card.querySelector('.values').textContent = `PM2.5 ${a.pm25.toFixed(1)} µg/m³ · PM10 ${a.pm10.toFixed(1)} µg/m³`;
            card.querySelector('.when').textContent = (a.alert ? 'Alert: above the threshold · ' : '') + ago(a.time);
          }
        }
        async function draw() {
          try {
            const [sensors, alerts, silences, notifiers, air] = await Promise.all([
              api('GET', '/api/v1/sensors'), api('GET', '/api/v1/alerts'), api('GET', '/api/v1/silences'),
              api('GET', '/api/v1/notifiers'), api('GET', '/api/v1/air')]);
            Object.assign(state, {sensors, alerts, silences, notifiers});
            drawAlerts(); drawSensors(); drawSilences(); drawBackends(); drawAir(air);
            document.getElementById('connection').hidden = true;
          } catch (e) { /* hubd restarting: the stream says when it is back */ }
        }
        // The silence form: the preview asks the hub what the matchers would hold, as the person types.
        const silenceDialog = document.getElementById('silence-dialog');
        const silenceForm = document.getElementById('silence-form');
        let length = '2h';
        for (const b of document.querySelectorAll('#silence-lengths button')) b.addEventListener('click', () => {
          length = b.dataset.length;
          for (const o of document.querySelectorAll('#silence-lengths button')) o.setAttribute('aria-pressed', String(o === b));
        });
        const matchersOf = text => (text.match(/"[^"]*"|\S+/g) || []).map(m => m.replace(/^"|"$/g, ''));
        async function preview() {
          const box = document.getElementById('silence-preview');
          const matchers = matchersOf(silenceForm.matchers.value);
          if (!matchers.length) { box.replaceChildren(); return; }
          try {
            const p = await api('GET', '/api/v1/silences/preview?' + matchers.map(m => 'matcher=' + encode(m)).join('&'));
            const list = names => el('ul', {}, ...names.slice(0, 20).map(n => el('li', {text: n})),
              names.length > 20 ? el('li', {text: '… and ' + (names.length - 20) + ' more'}) : null);
            box.replaceChildren(
              el('div', {text: p.sensors.length === 1 ? '1 sensor:' : p.sensors.length + ' sensors:'}), list(p.sensors),
              el('div', {text: p.alerts.length === 1 ? '1 open alert it holds now:' : p.alerts.length + ' open alerts it holds now'}), list(p.alerts),
              p.warning ? el('p', {class: 'warning', role: 'alert', text: p.warning}) : null);
            document.getElementById('silence-error').textContent = '';
          } catch (e) { box.replaceChildren(); document.getElementById('silence-error').textContent = e.message; }
        }
        let previewTimer = null;
        silenceForm.matchers.addEventListener('input', () => { clearTimeout(previewTimer); previewTimer = setTimeout(preview, 250); });
        function openSilence(sensor) {
          silenceForm.reset();
          silenceForm.matchers.value = sensor ? (/\s/.test(sensor) ? '"' + sensor + '"' : sensor) : '';
          document.getElementById('silence-error').textContent = '';
          document.getElementById('silence-preview').replaceChildren();
          silenceDialog.showModal();
          if (sensor) preview();
        }
        const lengthMs = {'30m': 18e5, '1h': 36e5, '2h': 72e5, '8h': 288e5, '1d': 864e5, '7d': 6048e5};
        silenceForm.addEventListener('submit', async e => {
          e.preventDefault();
          try {
            const answer = await api('POST', '/api/v1/silences', {matchers: matchersOf(silenceForm.matchers.value),
              endsAt: new Date(Date.now() + lengthMs[length]).toISOString(), comment: silenceForm.comment.value});
            silenceDialog.close();
            say(answer.warning ? 'Silence added. ' + answer.warning : 'Silence added until ' + clock(answer.endsAt) + '.', answer.warning ? 'warning' : '');
            draw();
          } catch (error) { document.getElementById('silence-error').textContent = error.message; }
        });
        document.getElementById('silence-open').addEventListener('click', () => openSilence(''));
        closeOnCancel(silenceDialog);
        // Adding a sensor: a device family's preset, or a plain topic.
        const sensorDialog = document.getElementById('sensor-dialog');
        const sensorForm = document.getElementById('sensor-form');
        const presetShown = () => {
          for (const l of sensorForm.querySelectorAll('[data-for]'))
            l.hidden = (l.dataset.for === 'preset') !== (sensorForm.preset.value !== '');
        };
        sensorForm.preset.addEventListener('change', presetShown);
        document.getElementById('sensor-open').addEventListener('click', () => {
          sensorForm.reset(); presetShown(); document.getElementById('sensor-error').textContent = ''; sensorDialog.showModal();
        });
        sensorForm.addEventListener('submit', async e => {
          e.preventDefault();
          const f = sensorForm, body = {name: f.name.value};
          if (f.preset.value) {
            body.preset = f.preset.value;
            if (f.device.value) body.device = f.device.value;
            if (f.value.value) body.value = f.value.value;
          } else {
            if (f.topic.value) body.topic = f.topic.value;
            body.kind = f.kind.value;
          }
          try {
            const added = await api('POST', '/api/v1/sensors', body);
            sensorDialog.close(); say('Added ' + vis(added.name) + ' on topic ' + vis(added.topic) + '.'); draw();
          } catch (error) { document.getElementById('sensor-error').textContent = error.message; }
        });
        closeOnCancel(sensorDialog);
        // Discovering devices: hubd listens on the broker (what hubctl discover does) and lists what it heard; the
        // new ones can be chosen and added at once.
        const discoverDialog = document.getElementById('discover-dialog');
        const discoverForm = document.getElementById('discover-form');
        async function discover() {
          const status = document.getElementById('discover-status'), list = document.getElementById('discover-list');
          document.getElementById('discover-error').textContent = '';
          document.getElementById('discover-add').disabled = true;
          list.replaceChildren();
          status.textContent = 'Listening on the broker for 5 s…';
          try {
            const heard = await api('GET', '/api/v1/discover?seconds=5');
            status.textContent = heard.devices.length ? heard.devices.length + ' devices heard.'
              : 'No device heard: is Zigbee2MQTT\'s base topic the one in hubd.yaml (discovery.zigbee2mqtt_base)?';
            list.replaceChildren(...heard.devices.map(d => {
              const isNew = d.registry === 'new';
              const box = el('input', {type: 'checkbox', name: 'topic', value: d.topic, checked: isNew, disabled: !isNew,
                'aria-label': 'Add ' + d.sensor});
              const what = d.registry === 'exists' ? 'already the sensor ' + d.existingSensor
                : d.problem ? 'can\'t be added: ' + d.problem : d.kind + (d.value ? ', ' + d.value : '');
              return el('label', {class: 'device', dataset: {topic: d.topic}}, box, ' ',
                el('strong', {text: d.sensor}), ' ', el('span', {class: 'muted', text: d.family + ' · ' + what}));
            }));
            document.getElementById('discover-add').disabled = !heard.devices.some(d => d.registry === 'new');
          } catch (error) { status.textContent = ''; document.getElementById('discover-error').textContent = error.message; }
        }
        document.getElementById('discover-open').addEventListener('click', () => { discoverDialog.showModal(); discover(); });
        document.getElementById('discover-again').addEventListener('click', discover);
        discoverForm.addEventListener('submit', async e => {
          e.preventDefault();
          const topics = [...discoverForm.querySelectorAll('input[name=topic]:checked')].map(i => i.value);
          if (!topics.length) return;
          try {
            const added = await api('POST', '/api/v1/discover/add', {topics});
            discoverDialog.close();
            say('Added ' + added.map(s => vis(s.name)).join(', ') + '.');
            draw();
          } catch (error) { document.getElementById('discover-error').textContent = error.message; }
        });
        closeOnCancel(discoverDialog);
        const renameDialog = document.getElementById('rename-dialog');
        const renameForm = document.getElementById('rename-form');
        let renaming = '';
        function openRename(name) {
          renaming = name; renameForm.reset(); renameForm.name.value = name;
          document.getElementById('rename-title').textContent = 'Rename ' + vis(name);
          document.getElementById('rename-error').textContent = ''; renameDialog.showModal();
        }
        renameForm.addEventListener('submit', async e => {
          e.preventDefault();
          try {
            await api('PATCH', '/api/v1/sensors/' + encode(renaming), {name: renameForm.name.value});
            renameDialog.close(); draw();
          } catch (error) { document.getElementById('rename-error').textContent = error.message; }
        });
        closeOnCancel(renameDialog);
        document.getElementById('search').addEventListener('input', drawSensors);
        """#

    /// The home page: the shared part, what it draws and acts with, its charts (`HomeScript+Charts.swift`), and
    /// the start: drawn once, then again each time the hub says something changed.
    static let text = PageScript.common + home + charts + "draw();\nfollow(draw);\n"
}
