"""Checks MQTT discovery configs with Home Assistant's own discovery code.

Run with the interpreter of the venv that scripts/ha-venv makes (Home Assistant 2024.3.3):

    "$(scripts/ha-venv)/bin/python" Tests/HubToolsTests/ha_validate.py FILE|- [--prefix homeassistant] [--lenient]

Input: a JSON array of {"topic": "...", "payload": "..."}, the retained messages found under the discovery
prefix (an empty or missing payload means the config was removed). A config's message may carry "state": the
payload on its state_topic (and json_attributes_topic, when they are the same topic).
Output: one JSON line per message on stdout,
    {"topic", "ok", "component", "node_id", "object_id", "unique_id", "removed", "error", "warnings", "ignored"}
(plus "config", the validated config with templates as strings, with --config; and "entity", the state and
attributes Home Assistant makes of "state", for a sensor or binary_sensor given one: see entity_view)
and a summary on stderr. Exit status 0 when every message passed, 1 when any failed, 2 on bad input.

How each message is checked, in the order Home Assistant itself handles a discovery message:

1. Home Assistant's own receive path. homeassistant/components/mqtt/discovery.py keeps the whole of it
   (topic regex TOPIC_MATCHER, SUPPORTED_COMPONENTS, JSON parse, ABBREVIATIONS / DEVICE_ABBREVIATIONS /
   ORIGIN_ABBREVIATIONS expansion, MQTT_ORIGIN_INFO_SCHEMA, '~' base-topic substitution) in a closure,
   async_discovery_message_received, nested in async_start() (discovery.py:146 in 2024.3.3), so it cannot
   be imported on its own. Rather than copy it, this script runs async_start() itself on a minimal
   HomeAssistant object, with mqtt.async_subscribe replaced by a recorder: the callback async_start hands
   to it is that closure, and every message is fed to it as a ReceiveMessage. A message it accepts comes
   out on the dispatcher signal MQTT_DISCOVERY_NEW (what the platforms listen on), fully expanded; one it
   refuses is only logged by Home Assistant, so its log warnings become the error here. A topic must
   also fall under one of the two subscriptions async_start makes (<prefix>/+/+/config and
   <prefix>/+/+/+/config, matched with paho's topic_matches_sub), because Home Assistant never sees
   any other.
2. The platform's DISCOVERY_SCHEMA (homeassistant.components.mqtt.<component>.DISCOVERY_SCHEMA), called on
   the expanded payload exactly as mixins.py's async_setup_from_discovery does (mixins.py:363). That
   checks device_class, state_class, unit, expire_after, availability / availability_mode, device and
   via_device, json_attributes_topic, unique_id, templates (cv.template compiles them; no hass needed)...
3. Stricter than Home Assistant (relax with --lenient, which turns these into warnings):
   - keys that DISCOVERY_SCHEMA silently drops (it is built with extra=vol.REMOVE_EXTRA, so a misspelt or
     misplaced key such as state_class on a binary_sensor is accepted and ignored);
   - for sensors, the checks SensorEntity.state makes at run time with Home Assistant's own tables
     (homeassistant/components/sensor/__init__.py:556 raises for a unit on a NON_NUMERIC_DEVICE_CLASSES
     class; :564 and :727 warn for a state_class not in DEVICE_CLASS_STATE_CLASSES or a unit not in
     DEVICE_CLASS_UNITS for the device class);
   - a unique_id used twice in one component (the entity registry keeps only the first).
   A via_device naming no device identifier in this set of configs is a warning only.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import importlib
import json
import logging
import sys
import tempfile
from typing import Any
from unittest import mock

import voluptuous as vol
from paho.mqtt.client import topic_matches_sub

from homeassistant.const import __version__ as HA_VERSION
from homeassistant.core import HomeAssistant, callback
from homeassistant.helpers.dispatcher import (
    async_dispatcher_connect,
    async_dispatcher_send,
)
import homeassistant.components.mqtt as mqtt
from homeassistant.components.mqtt import discovery
from homeassistant.components.mqtt.const import ATTR_DISCOVERY_HASH
from homeassistant.components.mqtt.models import MqttData, ReceiveMessage
from homeassistant.components.mqtt.util import DATA_MQTT
from homeassistant.components.sensor.const import (
    DEVICE_CLASS_STATE_CLASSES,
    DEVICE_CLASS_UNITS,
    NON_NUMERIC_DEVICE_CLASSES,
)


class LogCapture(logging.Handler):
    """Collects what Home Assistant logs (warning and up) while one message is processed."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


class Harness:
    """Home Assistant's discovery receive path, run on a minimal HomeAssistant object."""

    def __init__(self, hass: HomeAssistant, prefix: str) -> None:
        self.hass = hass
        self.prefix = prefix
        self.receive: Any = None
        self.subscriptions: list[str] = []
        self.accepted: list[tuple[str, dict[str, Any]]] = []
        for component in discovery.SUPPORTED_COMPONENTS:
            async_dispatcher_connect(
                hass,
                discovery.MQTT_DISCOVERY_NEW.format(component, "mqtt"),
                self._make_listener(component),
            )

    def _make_listener(self, component: str) -> Any:
        @callback
        def listener(payload: dict[str, Any]) -> None:
            self.accepted.append((component, payload))

        return listener

    async def start(self) -> None:
        """Runs discovery.async_start afresh, so each message is handled as if it were the first."""
        self.hass.data[DATA_MQTT] = MqttData(client=None, config=[])  # type: ignore[arg-type]
        self.subscriptions = []

        async def record_subscribe(hass, topic, msg_callback, qos=0, encoding="utf-8"):
            self.subscriptions.append(topic)
            self.receive = msg_callback
            return lambda: None

        async def no_integrations(hass):
            return {}

        with mock.patch.object(mqtt, "async_subscribe", record_subscribe), mock.patch.object(
            discovery, "async_get_mqtt", no_integrations
        ):
            await discovery.async_start(self.hass, self.prefix, None)  # type: ignore[arg-type]

    async def feed(self, topic: str, payload: str) -> list[tuple[str, dict[str, Any]]]:
        await self.start()
        self.accepted = []
        message = ReceiveMessage(
            topic=topic,
            payload=payload,
            qos=0,
            retain=True,
            subscribed_topic=self.subscriptions[-1],
            timestamp=dt.datetime.now(dt.timezone.utc),
        )
        self.receive(message)
        # What a platform does once it has set an entity up (or failed to): lets discovery forget the hash.
        for _, accepted in self.accepted:
            async_dispatcher_send(
                self.hass,
                discovery.MQTT_DISCOVERY_DONE.format(accepted.discovery_data[ATTR_DISCOVERY_HASH]),
                None,
            )
        return self.accepted


def sensor_entity_checks(config: dict[str, Any]) -> list[str]:
    """SensorEntity.state's own checks, with Home Assistant's tables (see the module docstring)."""
    problems = []
    device_class = config.get("device_class")
    unit = config.get("unit_of_measurement")
    state_class = config.get("state_class")
    if device_class in NON_NUMERIC_DEVICE_CLASSES and unit:
        problems.append(
            f"sensor has unit of measurement '{unit}' but the non-numeric device class '{device_class}'"
            " (SensorEntity.state raises)"
        )
    if (
        state_class
        and device_class
        and (classes := DEVICE_CLASS_STATE_CLASSES.get(device_class)) is not None
        and state_class not in classes
    ):
        expected = ", ".join(sorted(f"'{c.value}'" for c in classes)) or "none"
        problems.append(
            f"state class '{state_class}' is impossible for device class '{device_class}'; expected {expected}"
        )
    if device_class and (units := DEVICE_CLASS_UNITS.get(device_class)) is not None and unit not in units:
        expected = ", ".join(sorted(repr(str(u)) if u else "no unit" for u in units))
        problems.append(
            f"unit of measurement {unit!r} is not a valid unit for device class '{device_class}'; expected one of {expected}"
        )
    return problems


def entity_view(hass: HomeAssistant, component: str, config: dict[str, Any], payload: str) -> dict[str, Any]:
    """What the entity shows for a state payload: its state and attributes, by the code MqttSensor /
    MqttBinarySensor and MqttAttributes run on a message (sensor.py _update_state, binary_sensor.py
    state_message_received, mixins.py attributes_message_received in 2024.3.3): MQTT's own MqttValueTemplate
    renders value_template and json_attributes_template on a live hass, json_loads reads the attributes, and
    MQTT_ATTRIBUTES_BLOCKED (and MQTT_SENSOR_ATTRIBUTES_BLOCKED for a sensor) filter them."""
    from homeassistant.components.mqtt.mixins import MQTT_ATTRIBUTES_BLOCKED
    from homeassistant.components.mqtt.models import MqttValueTemplate, PayloadSentinel
    from homeassistant.components.mqtt.sensor import MQTT_SENSOR_ATTRIBUTES_BLOCKED
    from homeassistant.util.json import json_loads

    view: dict[str, Any] = {"state": None, "attributes": None}
    rendered = MqttValueTemplate(
        config.get("value_template"), hass=hass
    ).async_render_with_possible_json_value(payload, PayloadSentinel.DEFAULT)
    if rendered is not PayloadSentinel.DEFAULT:
        if component == "binary_sensor":
            rendered = str(rendered)
            view["state"] = (
                "on" if rendered == config.get("payload_on") else "off" if rendered == config.get("payload_off") else None
            )
        else:
            view["state"] = str(rendered)
    if config.get("json_attributes_topic") == config.get("state_topic"):
        attributes = MqttValueTemplate(
            config.get("json_attributes_template"), hass=hass
        ).async_render_with_possible_json_value(payload)
        loaded = json_loads(attributes) if isinstance(attributes, str) else None
        if isinstance(loaded, dict):
            blocked = MQTT_ATTRIBUTES_BLOCKED | (MQTT_SENSOR_ATTRIBUTES_BLOCKED if component == "sensor" else set())
            view["attributes"] = {k: v for k, v in loaded.items() if k not in blocked}
    return view


def dropped_keys(expanded: dict[str, Any], validated: dict[str, Any]) -> list[str]:
    ignored = sorted(k for k in expanded if k not in validated and k != "platform")
    return ignored


async def validate(
    messages: list[dict[str, Any]], prefix: str, lenient: bool, show_config: bool = False
) -> list[dict[str, Any]]:
    hass = HomeAssistant(tempfile.mkdtemp(prefix="ha-validate-"))
    harness = Harness(hass, prefix)
    capture = LogCapture()
    ha_logger = logging.getLogger("homeassistant")
    ha_logger.addHandler(capture)
    ha_logger.propagate = False

    results: list[dict[str, Any]] = []
    for message in messages:
        topic = message.get("topic")
        payload = message.get("payload") or ""
        result: dict[str, Any] = {
            "topic": topic,
            "ok": False,
            "component": None,
            "node_id": None,
            "object_id": None,
            "unique_id": None,
            "removed": payload == "",
            "error": None,
            "warnings": [],
            "ignored": [],
        }
        results.append(result)
        if not isinstance(topic, str) or not isinstance(payload, str):
            result["error"] = "input: topic and payload must be strings"
            continue

        await harness.start()
        if not any(topic_matches_sub(sub, topic) for sub in harness.subscriptions):
            result["error"] = (
                f"topic is outside Home Assistant's discovery subscriptions {harness.subscriptions}"
            )
            continue
        match = discovery.TOPIC_MATCHER.match(topic.replace(f"{prefix}/", "", 1))
        if match:
            result["component"], result["node_id"], result["object_id"] = match.groups()

        capture.messages = []
        accepted = await harness.feed(topic, payload)
        logged = list(capture.messages)
        if payload == "":
            # Removal: Home Assistant only parses the topic; a refused topic is logged.
            if match and result["component"] in discovery.SUPPORTED_COMPONENTS and not logged:
                result["ok"] = True
            else:
                result["error"] = "; ".join(logged) or "Home Assistant ignores this topic"
            continue
        if not accepted:
            result["error"] = "; ".join(logged) or "Home Assistant's discovery did not accept this message"
            continue
        component, expanded = accepted[0]
        result["component"] = component
        result["unique_id"] = expanded.get("unique_id")
        result["warnings"].extend(logged)

        platform = importlib.import_module(f"homeassistant.components.mqtt.{component}")
        expanded_copy = json.loads(json.dumps(dict(expanded)))
        try:
            config = platform.DISCOVERY_SCHEMA(expanded)
        except vol.Invalid as err:
            result["error"] = f"{component}.DISCOVERY_SCHEMA: {err}"
            continue
        result["unique_id"] = config.get("unique_id")

        strict: list[str] = []
        ignored = dropped_keys(expanded_copy, config)
        result["ignored"] = ignored
        if ignored:
            strict.append(f"{component}.DISCOVERY_SCHEMA drops unknown keys {ignored}")
        if component == "sensor":
            strict.extend(sensor_entity_checks(config))
        result["_config"] = config
        if isinstance(message.get("state"), str) and component in ("sensor", "binary_sensor"):
            capture.messages = []
            try:
                result["entity"] = entity_view(hass, component, config, message["state"])
            except Exception as err:  # a template Home Assistant cannot render: the entity would show nothing
                result["error"] = f"rendering the state: {type(err).__name__}: {err}"
                continue
            # What Home Assistant would log on every state message (a template reading a missing key, …).
            if capture.messages:
                result["error"] = "rendering the state logs: " + "; ".join(capture.messages)
                continue
        if strict and not lenient:
            result["error"] = "; ".join(strict)
            continue
        result["warnings"].extend(strict)
        result["ok"] = True

    # Across the set: duplicate unique_ids per component, via_device pointing at no known device.
    seen: dict[tuple[str, str], str] = {}
    identifiers: set[str] = set()
    for result in results:
        config = result.get("_config")
        if config and (device := config.get("device")):
            identifiers.update(device.get("identifiers", []))
    for result in results:
        config = result.pop("_config", None)
        if not config:
            continue
        if show_config:
            result["config"] = config
        uid = config.get("unique_id")
        if uid is not None:
            key = (result["component"], uid)
            if key in seen:
                problem = f"unique_id '{uid}' already used by {seen[key]}"
                if lenient:
                    result["warnings"].append(problem)
                else:
                    result["ok"] = False
                    result["error"] = problem
            else:
                seen[key] = result["topic"]
        via = (config.get("device") or {}).get("via_device")
        if via is not None and via not in identifiers:
            result["warnings"].append(
                f"via_device '{via}' is no identifier of any device in these configs"
            )

    ha_logger.removeHandler(capture)
    await hass.async_stop(force=True)
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("input", help="JSON file with [{topic, payload}], or - for stdin")
    parser.add_argument("--prefix", default="homeassistant", help="discovery prefix (default homeassistant)")
    parser.add_argument(
        "--lenient", action="store_true", help="report dropped keys, sensor unit/state-class mismatches and duplicate unique_ids as warnings"
    )
    parser.add_argument(
        "--config", action="store_true", help="add the config as Home Assistant ends up with it (after DISCOVERY_SCHEMA) to each line"
    )
    args = parser.parse_args()

    try:
        text = sys.stdin.read() if args.input == "-" else open(args.input, encoding="utf-8").read()
        messages = json.loads(text)
        if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
            raise ValueError("expected a JSON array of objects")
    except (OSError, ValueError) as err:
        print(f"ha_validate: bad input: {err}", file=sys.stderr)
        return 2

    results = asyncio.run(validate(messages, args.prefix, args.lenient, args.config))
    for result in results:
        print(json.dumps(result, ensure_ascii=False, default=lambda o: getattr(o, "template", str(o))))
    rejected = sum(1 for r in results if not r["ok"])
    print(
        f"ha_validate: Home Assistant {HA_VERSION}: {len(results)} messages, {rejected} rejected",
        file=sys.stderr,
    )
    return 1 if rejected else 0


if __name__ == "__main__":
    sys.exit(main())
