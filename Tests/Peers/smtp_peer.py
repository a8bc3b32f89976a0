"""An SMTP server for the email backend's tests: aiosmtpd (from the peer venv, scripts/peer-venv) on a free
loopback port, with STARTTLS, implicit TLS or neither, AUTH PLAIN/LOGIN against one user, and scripted answers.

Writes one JSON object a line on stdout, flushed: {"ready": port} once it listens, then {"event": "auth", ...}
for every AUTH, {"event": "mail", ...} for every MAIL FROM, and {"event": "message", ...} for every message
after DATA, with the envelope, the raw data, and what Python's email parser reads from it (decoded headers and
body). Runs until stdin closes or it is killed.

--answers takes JSON: {"rcpt": {"address": "550 5.1.1 No such user"}, "data": ["451 4.3.0 Try later"]}; each
"data" answer is used once, in order, for the next message, which is still reported (with its "answer").
"""

import argparse
import asyncio
import email
import email.policy
import json
import logging
import socket
import ssl
import sys

from aiosmtpd.smtp import SMTP, AuthResult, LoginPassword


def encrypted(server, session):
    return session.ssl is not None or server.transport.get_extra_info("ssl_object") is not None


def report(record):
    sys.stdout.write(json.dumps(record) + "\n")
    sys.stdout.flush()


class Handler:
    def __init__(self, answers):
        self.rcpt = answers.get("rcpt", {})
        self.data = list(answers.get("data", []))

    async def handle_MAIL(self, server, session, envelope, address, options):
        report({"event": "mail", "from": address, "options": options, "tls": encrypted(server, session)})
        envelope.mail_from = address
        envelope.mail_options.extend(options)
        return "250 OK"

    async def handle_RCPT(self, server, session, envelope, address, options):
        answer = self.rcpt.get(address)
        if answer:
            return answer
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        raw = envelope.original_content
        answer = self.data.pop(0) if self.data else "250 OK"
        message = email.message_from_bytes(raw, policy=email.policy.default)
        lines = raw.split(b"\r\n")
        report({
            "event": "message",
            "answer": answer,
            "from": envelope.mail_from,
            "options": envelope.mail_options,
            "to": envelope.rcpt_tos,
            "tls": encrypted(server, session),
            "user": session.auth_data.login.decode() if isinstance(session.auth_data, LoginPassword) else None,
            "raw": raw.decode("utf-8", "replace"),
            "header_names": list(message.keys()),
            "headers": {k: str(v) for k, v in message.items()},
            "subject": str(message["Subject"]),
            "body": message.get_content(),
            "defects": [repr(d) for d in message.defects],
            "longest_line": max(len(line) for line in lines),
            "bare_line_breaks": raw.replace(b"\r\n", b"").count(b"\n") + raw.replace(b"\r\n", b"").count(b"\r"),
        })
        return answer


def authenticator(user, password):
    def check(server, session, envelope, mechanism, auth_data):
        ok = isinstance(auth_data, LoginPassword) and (auth_data.login, auth_data.password) == (
            user.encode(), password.encode())
        report({"event": "auth", "mechanism": mechanism, "ok": ok, "tls": encrypted(server, session),
                "user": auth_data.login.decode() if isinstance(auth_data, LoginPassword) else None})
        # handled=False: aiosmtpd answers a failure with 535 itself.
        return AuthResult(success=ok, handled=False, auth_data=auth_data)
    return check


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tls", choices=["starttls", "implicit", "none"], default="starttls")
    parser.add_argument("--cert")
    parser.add_argument("--key")
    parser.add_argument("--user", default="hub")
    parser.add_argument("--password", default="secret")
    parser.add_argument("--auth", default="PLAIN,LOGIN", help="mechanisms to offer")
    parser.add_argument("--no-8bitmime", action="store_true")
    parser.add_argument("--answers", default="{}")
    parser.add_argument("--inject", action="store_true", help="a reply in clear right behind STARTTLS's 220")
    arguments = parser.parse_args()

    context = None
    if arguments.tls != "none":
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(arguments.cert, arguments.key)
    offered = set(arguments.auth.split(","))
    handler = Handler(json.loads(arguments.answers))

    class Injecting(SMTP):
        async def push(self, status):
            if status.startswith("220 Ready to start TLS"):
                status += "\r\n250 injected"
            await super().push(status)

    def factory():
        return (Injecting if arguments.inject else SMTP)(
            handler,
            hostname="smtp.test",
            decode_data=arguments.no_8bitmime,  # aiosmtpd then does not offer 8BITMIME
            tls_context=context if arguments.tls == "starttls" else None,
            require_starttls=arguments.tls == "starttls",
            # Offered in clear by a server without TLS, to show that the hub does not take it up.
            auth_require_tls=arguments.tls == "starttls",
            auth_exclude_mechanism=[m for m in ("PLAIN", "LOGIN") if m not in offered],
            authenticator=authenticator(arguments.user, arguments.password),
        )

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    loop = asyncio.get_running_loop()
    server = await loop.create_server(factory, sock=sock, ssl=context if arguments.tls == "implicit" else None)
    report({"ready": sock.getsockname()[1]})
    # Ends when the test closes our stdin (or kills us).
    await loop.run_in_executor(None, sys.stdin.read)
    server.close()


if __name__ == "__main__":
    logging.getLogger("mail.log").setLevel(logging.ERROR)  # aiosmtpd's warning about its own login_data
    asyncio.run(main())
