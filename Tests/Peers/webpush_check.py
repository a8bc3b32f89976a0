"""Checks one Web Push request as a push service and the browser would, with an independent implementation.

Run with the interpreter of the tests' peer venv (scripts/peer-venv; http_ece, py_vapid, cryptography):

    "$(scripts/peer-venv)/bin/python" Tests/Peers/webpush_check.py < request.json

The request, as JSON on standard input: {"endpoint", "authorization", "body" (base64url), "ua_private" (the
subscription's private key, base64url of its 32 bytes), "auth" (the subscription's auth secret, base64url)}.

The push service's part: the Authorization header is `vapid t=<JWT>, k=<key>` (RFC 8292 §3); the JWT's ES256
signature verifies with k (py_vapid's own JWT code); its header says ES256; its claims have aud = the endpoint's
origin, exp in the future and at most 24 hours away, and sub a mailto: or https: contact (py_vapid's check).
The browser's part: the body is one aes128gcm record (RFC 8188) with rs 4096 and a 65-byte key id, at most 4096
bytes, and http_ece decrypts it with the subscription's private key and auth secret (RFC 8291).

Prints {"plaintext": <the decrypted text>, "claims": {...}, "k": <key>} and exits 0; or prints what is wrong to
standard error and exits 1.
"""

import base64
import json
import struct
import sys
import time
import urllib.parse

import http_ece
import py_vapid
import py_vapid.jwt
from cryptography.hazmat.primitives.asymmetric import ec


def b64url(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def fail(message):
    print(message, file=sys.stderr)
    sys.exit(1)


def origin(endpoint):
    url = urllib.parse.urlsplit(endpoint)
    default = {"https": 443, "http": 80}[url.scheme]
    port = "" if url.port in (None, default) else ":%d" % url.port
    return "%s://%s%s" % (url.scheme, url.hostname, port)


def check_vapid(authorization, endpoint):
    scheme, _, parameters = authorization.partition(" ")
    if scheme.lower() != "vapid":
        fail("Authorization is not the vapid scheme: %r" % authorization)
    # RFC 7235 auth-params: comma-separated, optional white space around them.
    values = dict(part.strip().split("=", 1) for part in parameters.split(","))
    if set(values) != {"t", "k"}:
        fail("Authorization has parameters %s, not t and k" % sorted(values))
    token, key = values["t"], values["k"]
    if len(b64url(key)) != 65:
        fail("k is not an uncompressed P-256 key")
    try:
        claims = py_vapid.jwt.decode(token, key)
    except Exception as error:  # InvalidSignature and friends
        fail("the VAPID JWT does not verify with k: %r" % error)
    header = json.loads(b64url(token.split(".")[0]))
    if header.get("alg") != "ES256":
        fail("JWT header %r is not ES256" % header)
    now = time.time()
    if claims.get("aud") != origin(endpoint):
        fail("aud %r is not the endpoint's origin %r" % (claims.get("aud"), origin(endpoint)))
    exp = claims.get("exp")
    if not isinstance(exp, int) or not now < exp <= now + 24 * 3600:
        fail("exp %r is not within the next 24 hours" % exp)
    if not py_vapid._check_sub(claims.get("sub", "")):
        fail("sub %r is not a mailto: or https: contact" % claims.get("sub"))
    return claims, key


def decrypt(body, ua_private, auth):
    if len(body) > 4096:
        fail("the body is %d bytes; push services take at most 4096" % len(body))
    salt, rs, idlen = struct.unpack("!16sIB", body[:21])
    if rs != 4096 or idlen != 65:
        fail("header rs=%d idlen=%d, expected 4096 and 65" % (rs, idlen))
    private = ec.derive_private_key(int.from_bytes(ua_private, "big"), ec.SECP256R1())
    try:
        return http_ece.decrypt(body, private_key=private, auth_secret=auth, version="aes128gcm")
    except Exception as error:
        fail("http_ece cannot decrypt the body: %r" % error)


def main():
    request = json.load(sys.stdin)
    claims, key = check_vapid(request["authorization"], request["endpoint"])
    plaintext = decrypt(b64url(request["body"]), b64url(request["ua_private"]), b64url(request["auth"]))
    json.dump({"plaintext": plaintext.decode("utf-8"), "claims": claims, "k": key}, sys.stdout)


if __name__ == "__main__":
    main()
