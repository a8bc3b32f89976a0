"""What Apprise itself reads from each URL given, said in hubd's keys: an independent check that hubd's
shorthand (Sources/HubNotify/AppriseURL.swift) means what the same URL means to Apprise.

Usage: .build/peer-venv/bin/python Tests/Peers/apprise_keys.py URL...   → one JSON object per line: {"url", "type", "keys"} or {"url", "error"}.
Only the keys both sides have are said; hubd's own defaults (a port implied by the scheme) are left out.
"""
import json
import sys

import apprise


def base(obj, secure):
    port = f":{obj.port}" if obj.port else ""
    return ("https://" if secure else "http://") + obj.host + port


def keys(obj, url):
    name = type(obj).__name__
    # Apprise always has a priority; hubd says one only when the URL does (the backend's default otherwise).
    said = "priority=" in url
    if name == "NotifyTelegram":
        return "telegram", {"token": obj.bot_token, "chat_id": str(obj.targets[0][0])}
    if name == "NotifyPushover":
        result = {"user": obj.user_key, "token": obj.token}
        if said:
            result["priority"] = str(obj.priority)
        if obj.devices and obj.devices != ["ALL_DEVICES"]:
            result["device"] = ",".join(obj.devices)
        if obj.sound and obj.sound != "pushover":
            result["sound"] = obj.sound
        return "pushover", result
    if name == "NotifyGotify":
        path = obj.fullpath.rstrip("/")
        result = {"url": base(obj, obj.secure) + path, "token": obj.token}
        if said:
            result["priority"] = str(obj.priority)
        return "gotify", result
    if name == "NotifyNtfy":
        result = {"topic": obj.topics[0]}
        if obj.host:
            result["url"] = base(obj, obj.secure)
        if obj.token:
            result["token"] = obj.token
        return "ntfy", result
    if name == "NotifyDiscord":
        return "discord", {"webhook_url": f"https://discord.com/api/webhooks/{obj.webhook_id}/{obj.webhook_token}"}
    if name == "NotifySlack":
        return "slack", {"webhook_url": f"https://hooks.slack.com/services/{obj.token_a}/{obj.token_b}/{obj.token_c}"}
    if name == "NotifyMatrix":
        room = obj.rooms[0]
        result = {"homeserver": base(obj, obj.secure), "room": room if ":" in room else room + ":" + obj.host}
        if obj.user:
            result.update(user=obj.user, password=obj.password)
        else:
            result["token"] = obj.password
        return "matrix", result
    if name == "NotifyEmail":
        name_, address = obj.from_addr
        result = {
            "host": obj.smtp_host,
            "tls": {"starttls": "starttls", "ssl": "implicit", "insecure": "none"}[obj.secure_mode],
            "from": f"{name_} <{address}>" if name_ else address,
            "to": ",".join(target[1] for target in obj.targets),
        }
        if obj.user:
            result.update(username=obj.user, password=obj.password)
        return "email", result
    raise ValueError(f"no hubd kind for {name}")


for url in sys.argv[1:]:
    try:
        obj = apprise.Apprise.instantiate(url, suppress_exceptions=False)
        kind, values = keys(obj, url)
        print(json.dumps({"url": url, "type": kind, "keys": values}))
    except Exception as error:  # noqa: BLE001 - any refusal is an answer
        print(json.dumps({"url": url, "error": f"{type(error).__name__}: {error}"}))
