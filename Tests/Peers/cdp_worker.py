"""Drives a page's real service worker in headless Chromium over the DevTools protocol (CDP), as the browser would.

Run with the interpreter of the tests' peer venv (scripts/peer-venv; websocket-client):

    "$(scripts/peer-venv)/bin/python" Tests/Peers/cdp_worker.py DEBUGGER_ADDRESS ORIGIN push < plaintext
    "$(scripts/peer-venv)/bin/python" Tests/Peers/cdp_worker.py DEBUGGER_ADDRESS ORIGIN click TAG ACTION

DEBUGGER_ADDRESS is Chromium's DevTools host:port (chromedriver's goog:chromeOptions.debuggerAddress); ORIGIN the
page's, whose service worker registration (scope ORIGIN/) is the one driven.

push: hands the plaintext on standard input to the worker's real `push` handler as the browser's push service would
(ServiceWorker.deliverPushMessage on the page's target, with the registration's id from
ServiceWorker.workerRegistrationUpdated), then waits until the worker shows a notification and prints what
`registration.getNotifications()` says in the worker's own context: [{title, body, tag, actions: [{action, title}],
data}].

click: dispatches a `notificationclick` NotificationEvent with ACTION on the notification tagged TAG, in the worker's
own context (Runtime.evaluate on its target), and prints {"dispatched", "left" (notifications still shown),
"requests": [{url, method, status}] (the worker's fetches, from the Network domain), "exceptions": [...] (uncaught,
from Runtime.exceptionThrown)}.

Exits 1, saying why on standard error, when Chromium refuses or nothing happens in time (15 s; 30 s for a push).
"""

import json
import sys
import time
import urllib.request

import websocket


def fail(message):
    print(message, file=sys.stderr)
    sys.exit(1)


class Target:
    """One DevTools target (the page, the service worker) over its own WebSocket."""

    def __init__(self, url):
        # Chromium refuses connections that send an Origin it was not told to allow (--remote-allow-origins).
        self.socket = websocket.create_connection(url, timeout=15, suppress_origin=True)
        self.last = 0
        self.events = []

    def call(self, method, **params):
        self.last += 1
        self.socket.send(json.dumps({"id": self.last, "method": method, "params": params}))
        while True:
            message = json.loads(self.socket.recv())
            if message.get("id") == self.last:
                if "error" in message:
                    fail("%s: %s" % (method, message["error"]))
                return message.get("result", {})
            self.events.append(message)

    def event(self, predicate, what, within=15):
        """The first event (one taken before too) for which `predicate` holds."""
        deadline = time.monotonic() + within
        seen = 0
        while True:
            for message in self.events[seen:]:
                if predicate(message):
                    return message
            seen = len(self.events)
            left = deadline - time.monotonic()
            if left <= 0:
                fail("no %s within %d s" % (what, within))
            self.socket.settimeout(left)
            try:
                self.events.append(json.loads(self.socket.recv()))
            except websocket.WebSocketTimeoutException:
                pass

    def evaluate(self, expression):
        result = self.call("Runtime.evaluate", expression=expression, awaitPromise=True, returnByValue=True)
        if "exceptionDetails" in result:
            fail("the worker threw: %s" % json.dumps(result["exceptionDetails"]))
        return result["result"].get("value")


def targets(address, kind, url_prefix):
    with urllib.request.urlopen("http://%s/json/list" % address, timeout=10) as answer:
        listed = json.load(answer)
    return [t for t in listed if t["type"] == kind and t["url"].startswith(url_prefix)]


def page_and_registration(address, origin):
    pages = targets(address, "page", origin)
    if not pages:
        fail("no page of %s is open" % origin)
    page = Target(pages[0]["webSocketDebuggerUrl"])
    page.call("ServiceWorker.enable")
    scope = origin + "/"
    updated = page.event(
        lambda m: m.get("method") == "ServiceWorker.workerRegistrationUpdated"
        and any(r["scopeURL"] == scope and not r["isDeleted"] for r in m["params"]["registrations"]),
        "service worker registration for " + scope,
    )
    registration = next(r for r in updated["params"]["registrations"] if r["scopeURL"] == scope)
    return page, registration["registrationId"]


def worker(address, origin):
    """The running service worker's target; started first when it is not running (idle workers stop)."""
    found = targets(address, "service_worker", origin)
    if not found:
        page, _ = page_and_registration(address, origin)
        page.call("ServiceWorker.startWorker", scopeURL=origin + "/")
        deadline = time.monotonic() + 15
        while not found:
            if time.monotonic() > deadline:
                fail("the service worker of %s did not start" % origin)
            time.sleep(0.1)
            found = targets(address, "service_worker", origin)
    return Target(found[0]["webSocketDebuggerUrl"])


SHOWN = """self.registration.getNotifications().then(shown => shown.map(n => ({
  title: n.title, body: n.body, tag: n.tag, actions: n.actions.map(a => ({action: a.action, title: a.title})),
  data: n.data})))"""


def push(address, origin, data):
    page, registration = page_and_registration(address, origin)
    # The worker running first: a push delivered while it starts was not shown once in a loaded CI run.
    target = worker(address, origin)
    page.call("ServiceWorker.deliverPushMessage", origin=origin, registrationId=registration, data=data)
    deadline = time.monotonic() + 30
    while not (shown := target.evaluate(SHOWN)):
        if time.monotonic() > deadline:
            fail("the worker showed no notification within 30 s of the push")
        time.sleep(0.1)
    return shown


def click(address, origin, tag, action):
    target = worker(address, origin)
    target.call("Runtime.enable")
    target.call("Network.enable")
    before = len(target.events)  # Runtime.enable reports exceptions thrown before: not this click's
    dispatched = target.evaluate(
        """(async () => {
          const [notification] = await self.registration.getNotifications({tag: %s});
          if (!notification) return 'no notification is tagged ' + %s;
          const dispatched = self.dispatchEvent(new NotificationEvent('notificationclick', {notification, action: %s}));
          return {dispatched, left: (await self.registration.getNotifications()).length};
        })()"""
        % (json.dumps(tag), json.dumps(tag), json.dumps(action))
    )
    if not isinstance(dispatched, dict):
        fail(str(dispatched))
    # The worker's POST: its request, then its answer (or its failure).
    sent = target.event(
        lambda m: m.get("method") == "Network.requestWillBeSent" and "/a/" in m["params"]["request"]["url"],
        "request from the worker to /a/",
    )
    request_id = sent["params"]["requestId"]
    answered = target.event(
        lambda m: m.get("method") in ("Network.responseReceived", "Network.loadingFailed")
        and m["params"]["requestId"] == request_id,
        "answer to the worker's request",
    )
    time.sleep(0.3)  # an exception the listener threw after its fetch is reported by then
    target.socket.settimeout(0.5)
    try:
        while True:
            target.events.append(json.loads(target.socket.recv()))
    except websocket.WebSocketTimeoutException:
        pass
    exceptions = [
        m["params"]["exceptionDetails"].get("exception", {}).get("description")
        or m["params"]["exceptionDetails"].get("text")
        for m in target.events[before:]
        if m.get("method") == "Runtime.exceptionThrown"
    ]
    return {
        "dispatched": dispatched["dispatched"],
        "left": dispatched["left"],
        "requests": [
            {
                "url": sent["params"]["request"]["url"],
                "method": sent["params"]["request"]["method"],
                "status": answered["params"].get("response", {}).get("status"),
                "failed": answered["params"].get("errorText"),
            }
        ],
        "exceptions": exceptions,
    }


def main():
    address, origin, command = sys.argv[1:4]
    if command == "push":
        print(json.dumps(push(address, origin, sys.stdin.read())))
    elif command == "click":
        print(json.dumps(click(address, origin, sys.argv[4], sys.argv[5])))
    else:
        fail("unknown command %r" % command)


if __name__ == "__main__":
    main()
