import Crypto
import Foundation
import HubAccess
import Hummingbird
import NIOCore

/// The dashboard as an installable web app that gets Web Push: its manifest, icon and service worker, the script
/// behind its "Notify me on this device" button, and the hub's VAPID public key for `pushManager.subscribe`.
///
/// No external assets: a hub on a home network without internet still serves every byte of it. Service workers need
/// a secure context: HTTPS, or `localhost` (`http.listen` on loopback, or a reverse proxy with TLS).
extension HubAPI {
    struct WebPushKeyAnswer: Encodable {
        /// The uncompressed P-256 public key, base64url: `applicationServerKey`.
        var publicKey: String
    }

    /// `GET /api/v1/webpush/key`. Like every read, it needs no API token: the key is public (the browser hands it
    /// to its push service, which checks the hub's signatures with it), and it grants nothing by itself.
    func webPushKeyAnswer() throws -> Response {
        guard let key = webPushKey() else {
            throw HTTPError(
                .notFound,
                message: "no webpush backend is configured: add one (type: webpush, subject: mailto:…) under "
                    + "notifiers.backends in hubd.yaml")
        }
        return json(WebPushKeyAnswer(publicKey: key))
    }

    /// A static file, with an ETag (its SHA-256, computed once): a browser asks again each time (`no-cache`, so a
    /// new hubd's files are taken at once) and gets 304 with no body while it has this version (dygraphs is 131 KB).
    struct StaticAsset: Sendable {
        let path: String
        let what: String
        let body: ByteBuffer
        let type: String
        let tag: String

        init(_ path: String, _ what: String, _ text: String, _ type: String) {
            (self.path, self.what, self.type) = (path, what, type)
            body = ByteBuffer(string: text)
            tag = "\"" + Secrets.hex(SHA256.hash(data: Array(text.utf8)).prefix(12)) + "\""
        }
    }

    func staticFile(_ asset: StaticAsset, request: Request) -> Response {
        if let asked = request.headers[.ifNoneMatch], asked.split(separator: ",").contains(where: {
            $0.trimmingCharacters(in: .whitespaces) == asset.tag
        }) {
            return Response(status: .notModified, headers: [.eTag: asset.tag, .cacheControl: "no-cache"])
        }
        return Response(
            status: .ok, headers: [.contentType: asset.type, .cacheControl: "no-cache", .eTag: asset.tag],
            body: .init(byteBuffer: asset.body))
    }

    static let manifest = """
        {
          "name": "SensorHub",
          "short_name": "SensorHub",
          "description": "Your home's sensors, live, with notifications",
          "start_url": "/",
          "scope": "/",
          "display": "standalone",
          "background_color": "#f6f7f9",
          "theme_color": "#1d2330",
          "icons": [{"src": "/icon.svg", "sizes": "any", "type": "image/svg+xml", "purpose": "any"}]
        }

        """

    static let icon = """
        <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 512 512">
        <rect width="512" height="512" rx="96" fill="#1d2330"/>
        <path d="M256 96 80 240h48v176h256V240h48z" fill="#f6f7f9"/>
        <circle cx="256" cy="318" r="26" fill="#00a651"/>
        <path d="M204 270a74 74 0 0 1 104 0M172 238a120 120 0 0 1 168 0" fill="none" stroke="#00a651"
         stroke-width="22" stroke-linecap="round"/>
        </svg>

        """

    /// Shows each push as a notification (tagged by sensor: a newer one replaces the older), and a tap opens or
    /// focuses the dashboard.
    static let serviceWorker = """
        // SensorHub's service worker: shows the hub's Web Push messages.
        self.addEventListener('install', () => self.skipWaiting());
        self.addEventListener('activate', event => event.waitUntil(self.clients.claim()));
        self.addEventListener('push', event => {
          let data = {};
          try {
            data = event.data ? event.data.json() : {};
          } catch (e) {
            data = {title: 'SensorHub', body: event.data ? event.data.text() : ''};
          }
          // An alert group's messages replace each other; its buttons acknowledge or snooze from the phone. A
          // reminder or a change in the group alerts again (renotify); an acknowledgement replaces it quietly.
          const quiet = data.reason === 'acknowledged';
          event.waitUntil(self.registration.showNotification(data.title || 'SensorHub', {
            body: data.body || '', tag: data.group || data.sensor || undefined, data, icon: '/icon.svg',
            renotify: !!data.group && !quiet, silent: quiet,
            actions: (data.actions || []).map(a => ({action: a.action, title: a.title}))
          }));
        });
        self.addEventListener('notificationclick', event => {
          event.notification.close();
          const chosen = ((event.notification.data || {}).actions || []).find(a => a.action === event.action);
          if (chosen) {
            event.waitUntil(fetch('/a/' + chosen.token, {method: 'POST', headers: {Accept: 'application/json'}}));
            return;
          }
          event.waitUntil((async () => {
            const windows = await self.clients.matchAll({type: 'window', includeUncontrolled: true});
            const open = windows.find(w => new URL(w.url).origin === self.location.origin);
            return open ? open.focus() : self.clients.openWindow('/');
          })());
        });

        """
}
