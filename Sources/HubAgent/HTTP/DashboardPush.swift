/// The dashboard's "Notify me on this device": the section on the page and the script behind its button.
///
/// The button registers the service worker, fetches the hub's VAPID key, asks for permission, subscribes with the
/// browser's push service and registers the subscription with the hub (`POST /api/v1/devices`, the sensors chosen
/// as globs); pressed again, it changes the choice (`PATCH /api/v1/devices/{id}`). It acts as the person logged in
/// (their session cookie; a viewer may not register a device); no token is kept in the page or in its storage.
/// Every way this can fail ends in a sentence on the page (`#push-status`, `data-state="error"`), never only in the
/// console.
enum DashboardPush {
    static let section = """
        <h2>Notifications</h2>
        <div id="push">
        <label>Sensors <input id="push-sensors" placeholder="all, or door*, window*" size="28"></label>
        <button id="push-button" type="button">Notify me on this device</button>
        <div id="push-status" class="muted" role="status" data-state="idle"></div>
        </div>
        <script src="/dashboard/push.js" defer></script>

        """

    static let script = """
        (() => {
          const button = document.getElementById('push-button');
          const sensors = document.getElementById('push-sensors');
          const status = document.getElementById('push-status');
          const say = (text, state) => { status.textContent = text; status.dataset.state = state; };
          const stored = key => localStorage.getItem('sensorhub.' + key);
          const store = (key, value) => localStorage.setItem('sensorhub.' + key, value);
          const globs = () => sensors.value.split(',').map(s => s.trim()).filter(Boolean);
          const bytes = text => Uint8Array.from(atob(text.replace(/-/g, '+').replace(/_/g, '/')), c => c.charCodeAt(0));
          // A push service that never answers (no internet, or a browser built without one) must not leave the page
          // saying "Subscribing…" for ever. (A test may shorten the wait.)
          const within = (promise, what) => {
            const seconds = window.sensorhubPushTimeout || 30;
            const late = new Promise((_, fail) => setTimeout(() => fail(Object.assign(
              new Error('no answer from ' + what + ' within ' + seconds + ' s; is the browser online?'), {name: 'TimeoutError'})),
              seconds * 1000));
            return Promise.race([promise, late]);
          };
          const sameKey = (a, b) => a && a.byteLength === b.byteLength && new Uint8Array(a).every((x, i) => x === b[i]);

          // The session cookie goes with the request by itself (no token is kept in the page or its storage).
          async function call(method, url, body) {
            const headers = {'Content-Type': 'application/json'};
            const answer = await fetch(url, {method, headers, body: JSON.stringify(body)});
            const json = await answer.json().catch(() => ({}));
            if (answer.status === 401) throw new Error('the login has ended: reload the page and log in again');
            if (answer.status === 403) throw new Error(json.error || 'this account may not register a device');
            if (!answer.ok) throw Object.assign(new Error(json.error || 'the hub answered HTTP ' + answer.status), {status: answer.status});
            return json;
          }

          async function subscribe() {
            if (!window.isSecureContext || !('serviceWorker' in navigator)) {
              throw new Error('push needs a secure page: open the dashboard over HTTPS, or at http://localhost');
            }
            if (!('PushManager' in window)) {
              throw new Error('this browser has no Web Push here (iPhone and iPad: Share, Add to Home Screen, then open ' +
                'SensorHub from the Home Screen; iOS 16.4 or later)');
            }
            say('Registering the service worker…', 'working');
            const registration = await navigator.serviceWorker.register('/sw.js');
            await navigator.serviceWorker.ready;
            const keyAnswer = await fetch('/api/v1/webpush/key');
            const key = await keyAnswer.json().catch(() => ({}));
            if (!keyAnswer.ok) throw new Error(key.error || 'the hub has no VAPID key (HTTP ' + keyAnswer.status + ')');
            const applicationServerKey = bytes(key.publicKey);
            const permission = await Notification.requestPermission();
            if (permission !== 'granted') {
              throw new Error('notifications are blocked for this site: allow them in the browser\\'s site settings');
            }
            say('Subscribing with the browser\\'s push service…', 'working');
            let subscription;
            let fresh = true;
            try {
              subscription = await within(registration.pushManager.getSubscription(), 'the browser');
              // One made with another key (the hub's key file replaced) can't be used: make a new one.
              if (subscription && !sameKey(subscription.options.applicationServerKey, applicationServerKey)) {
                await subscription.unsubscribe();
                subscription = null;
              }
              fresh = !subscription;
              subscription = subscription || await within(
                registration.pushManager.subscribe({userVisibleOnly: true, applicationServerKey}), 'the push service');
            } catch (e) {
              throw new Error('the browser could not subscribe with its push service (' + e.name + ': ' + e.message + ')');
            }
            say('Registering this device with the hub…', 'working');
            const choice = {sensors: globs()};
            let device = null;
            if (stored('device') && !fresh) {
              try {
                device = await call('PATCH', '/api/v1/devices/' + encodeURIComponent(stored('device')), choice);
              } catch (e) {
                if (e.status !== 404) throw e;
              }
            }
            device = device || await call('POST', '/api/v1/devices', Object.assign(subscription.toJSON(), choice));
            if (device.id) store('device', device.id);
            store('sensors', sensors.value);
            button.textContent = 'Update my choice';
            say('This device gets notifications for ' + (globs().length ? globs().join(', ') : 'every sensor') + '.', 'done');
          }

          if (stored('device')) {
            button.textContent = 'Update my choice';
            sensors.value = stored('sensors') || '';
          }
          button.addEventListener('click', () => subscribe().catch(e => say('Not subscribed: ' + e.message, 'error')));
        })();

        """
}
