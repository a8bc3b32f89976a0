/// What every page's script starts with (`/dashboard/app.js`, `events.js`, `follow.js`): served as files, so the
/// pages carry no inline script and the Content-Security-Policy refuses any (`script-src 'self'`).
enum PageScript {
    /// What every page's script starts with: escaping what a device sent, relative times, the API's calls, and
    /// following `/api/v1/stream`.
    static let common = #"""
        'use strict';
        const vis = s => String(s).replace(/(?![\u200c\u200d])[\p{Cc}\p{Cf}\u2028\u2029]/gu,
            c => '\\u{' + c.codePointAt(0).toString(16).toUpperCase() + '}');
        function ago(t) {
          if (!t) return 'never';
          const s = Math.max(0, Math.floor((Date.now() - Date.parse(t)) / 1000));
          if (s < 5) return 'just now'; if (s < 60) return s + ' s ago'; if (s < 3600) return Math.floor(s / 60) + ' min ago';
          if (s < 86400) return Math.floor(s / 3600) + ' h ago'; return Math.floor(s / 86400) + ' days ago';
        }
        function clock(t) {
          const d = new Date(t), today = new Date().toDateString() === d.toDateString();
          return today ? d.toLocaleTimeString([], {hour: '2-digit', minute: '2-digit'})
            : d.toLocaleString([], {weekday: 'short', day: 'numeric', month: 'short', hour: '2-digit', minute: '2-digit'});
        }
        function el(tag, props, ...children) {
          const e = document.createElement(tag);
          for (const [k, v] of Object.entries(props || {})) {
            if (v == null || v === false) continue;
            if (k === 'text') e.textContent = vis(v);
            else if (k === 'class') e.className = v;
            else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
            else if (k === 'dataset') Object.assign(e.dataset, v);
            else e.setAttribute(k, v === true ? '' : v);
          }
          for (const c of children) if (c != null) e.append(c);
          return e;
        }
        const access = document.querySelector('main')?.dataset.access || 'read';
        const may = what => ({read: 1, act: 2, manage: 3})[access] >= ({read: 1, act: 2, manage: 3})[what];
        for (const e of document.querySelectorAll('[data-needs]')) if (!may(e.dataset.needs)) e.hidden = true;
        // One call of the API: JSON both ways; a login that ended goes to the login page and back here.
        async function api(method, path, body) {
          const options = {method, headers: {Accept: 'application/json'}};
          if (body !== undefined) { options.headers['Content-Type'] = 'application/json'; options.body = JSON.stringify(body); }
          const answer = await fetch(path, options);
          if (answer.status === 401) {
            location.href = '/login?next=' + encodeURIComponent(location.pathname + location.search);
            throw new Error('logged out');
          }
          const type = answer.headers.get('Content-Type') || '';
          const data = type.includes('json') ? await answer.json() : null;
          if (!answer.ok) throw new Error((data && (data.error || data.message)) || ('the hub answered ' + answer.status));
          return data;
        }
        // Follows the hub: `change` from /api/v1/stream draws the page again (at most every half second).
        function follow(draw, skipFirst) {
          let timer = null, first = !!skipFirst;
          const soon = () => { if (first) { first = false; return; } if (!timer) timer = setTimeout(() => { timer = null; draw(); }, 500); };
          const banner = document.getElementById('connection');
          let lost = null;
          const source = new EventSource('/api/v1/stream');
          source.addEventListener('change', () => { if (banner) banner.hidden = true; clearTimeout(lost); soon(); });
          source.onerror = () => {
            // Restarting, or the login ended: say so after a moment, and ask the API (a 401 goes to the login page).
            clearTimeout(lost);
            lost = setTimeout(() => {
              if (banner) { banner.textContent = 'Reconnecting to the hub…'; banner.hidden = false; }
              if (!skipFirst) draw();
            }, 4000);
          };
          // Relative times ("3 min ago") move on by themselves.
          setInterval(() => {
            for (const t of document.querySelectorAll('time[data-ago]')) t.textContent = ago(t.dateTime);
          }, 30000);
        }
        function closeOnCancel(dialog) {
          for (const b of dialog.querySelectorAll('[data-close]')) b.addEventListener('click', () => dialog.close());
        }

        """#

    /// A server-drawn page that loads itself again when the hub says something changed (`/alerts`).
    static let reloading = common + "follow(() => location.reload(), true);\n"
}
