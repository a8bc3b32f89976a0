#!/usr/bin/env bash
# Self-test of ha_validate.py: feeds discovery configs that Home Assistant 2024.3.3 accepts and ones it
# refuses, and checks each verdict. Makes the venv first (scripts/ha-venv; cached after the first run).
# Usage: Tests/HubToolsTests/ha_validate_selftest.sh   (exit 0 when every verdict is as expected)
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
venv="$("$repo/scripts/ha-venv")"
python="$venv/bin/python"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# Cases: [topic, payload (object, raw string, or "" for a removal), expected ok, text the error must contain].
"$python" - "$work/input.json" "$work/expect.json" <<'EOF'
import json, sys

hub = {"ids": ["sensorhub_hub"], "name": "SensorHub", "mf": "SensorHub", "mdl": "hubd", "sw": "1.0"}
origin = {"name": "SensorHub", "sw": "1.0", "url": "https://example.invalid/sensorhub"}
availability = [{"t": "sensorhub/status"}, {"t": "~/availability"}]

def device(sensor_id, name):
    return {"ids": [f"sensorhub_{sensor_id}"], "name": name, "via_device": "sensorhub_hub"}

cases = [
    # The hub itself, so via_device has a device to point at.
    ("homeassistant/binary_sensor/sensorhub/hub_status/config",
     {"name": "Status", "uniq_id": "sensorhub_hub_status", "dev_cla": "connectivity",
      "stat_t": "sensorhub/status", "pl_on": "online", "pl_off": "offline", "dev": hub, "o": origin},
     True, ""),
    # A door: device_class door, availability list + mode all, expire_after, attributes, via_device.
    ("homeassistant/binary_sensor/sensorhub/s7k2door/config",
     {"~": "sensorhub/sensor/s7k2door", "name": "Front door", "uniq_id": "sensorhub_s7k2door",
      "dev_cla": "door", "stat_t": "~/state", "val_tpl": "{{ value_json.status }}",
      "pl_on": "open", "pl_off": "closed", "exp_aft": 900,
      "json_attr_t": "~/state", "json_attr_tpl": "{{ value_json.attributes | tojson }}",
      "avty": availability, "avty_mode": "all", "dev": device("s7k2door", "Front door"), "o": origin},
     True, ""),
    # A temperature: unit °C, state_class measurement, expire_after.
    ("homeassistant/sensor/sensorhub/t9q1temp/config",
     {"~": "sensorhub/sensor/t9q1temp", "name": "Living room", "uniq_id": "sensorhub_t9q1temp",
      "dev_cla": "temperature", "unit_of_meas": "°C", "stat_cla": "measurement", "exp_aft": 600,
      "stat_t": "~/state", "val_tpl": "{{ value_json.value }}",
      "avty": availability, "avty_mode": "all", "dev": device("t9q1temp", "Living room"), "o": origin},
     True, ""),
    # Long keys, no '~', hostile name (names are free text in HA).
    ("homeassistant/sensor/sensorhub/pm25/config",
     {"name": "Air \"quality\" / # + {{ }}", "unique_id": "sensorhub_sds_pm25", "device_class": "pm25",
      "unit_of_measurement": "µg/m³", "state_class": "measurement", "state_topic": "sensorhub/sensor/sds/state",
      "value_template": "{{ value_json.attributes.pm25 }}",
      "availability": [{"topic": "sensorhub/status"}], "availability_mode": "all",
      "device": device("sds", "SDS011"), "origin": origin},
     True, ""),
    # A removed sensor: empty retained payload.
    ("homeassistant/sensor/sensorhub/gone/config", "", True, ""),
    # Invalid: device_class unknown to binary_sensor.
    ("homeassistant/binary_sensor/sensorhub/badclass/config",
     {"name": "x", "uniq_id": "sensorhub_badclass", "dev_cla": "temperature", "stat_t": "sensorhub/sensor/x/state"},
     False, "device_class"),
    # Invalid: '#' in the node id.
    ("homeassistant/binary_sensor/sensor#hub/door/config",
     {"name": "x", "uniq_id": "sensorhub_hash", "stat_t": "sensorhub/sensor/x/state"},
     False, "illegal discovery topic"),
    # Invalid: a topic level too many (outside both discovery subscriptions).
    ("homeassistant/sensor/sensorhub/extra/level/config",
     {"name": "x", "uniq_id": "sensorhub_levels", "stat_t": "sensorhub/sensor/x/state"},
     False, "outside Home Assistant's discovery subscriptions"),
    # Invalid: unsupported component.
    ("homeassistant/thermometer/sensorhub/t/config",
     {"name": "x", "stat_t": "a/b"}, False, "not supported"),
    # Invalid: payload is not a JSON object.
    ("homeassistant/sensor/sensorhub/notjson/config", "{\"name\": ", False, "Unable to parse JSON"),
    # Invalid: availability_mode not one of all/any/latest.
    ("homeassistant/sensor/sensorhub/badmode/config",
     {"name": "x", "uniq_id": "sensorhub_badmode", "stat_t": "s/t", "avty": [{"t": "a/b"}], "avty_mode": "every"},
     False, "availability_mode"),
    # Invalid: a template that does not compile.
    ("homeassistant/sensor/sensorhub/badtpl/config",
     {"name": "x", "uniq_id": "sensorhub_badtpl", "stat_t": "s/t", "val_tpl": "{{ value_json.value "},
     False, "value_template"),
    # Invalid: negative expire_after.
    ("homeassistant/sensor/sensorhub/badexp/config",
     {"name": "x", "uniq_id": "sensorhub_badexp", "stat_t": "s/t", "exp_aft": -5},
     False, "expire_after"),
    # Invalid: device block without identifiers or connections.
    ("homeassistant/sensor/sensorhub/noids/config",
     {"name": "x", "uniq_id": "sensorhub_noids", "stat_t": "s/t", "dev": {"name": "x"}},
     False, "identifying value"),
    # Invalid: wildcard in a state topic.
    ("homeassistant/sensor/sensorhub/wild/config",
     {"name": "x", "uniq_id": "sensorhub_wild", "stat_t": "sensorhub/#/state"},
     False, "state_topic"),
    # Strict: state_class on a binary_sensor is silently dropped by Home Assistant.
    ("homeassistant/binary_sensor/sensorhub/dropped/config",
     {"name": "x", "uniq_id": "sensorhub_dropped", "stat_t": "s/t", "stat_cla": "measurement"},
     False, "drops unknown keys ['state_class']"),
    # Strict: a unit the device class does not allow (Home Assistant warns at run time).
    ("homeassistant/sensor/sensorhub/badunit/config",
     {"name": "x", "uniq_id": "sensorhub_badunit", "stat_t": "s/t", "dev_cla": "temperature", "unit_of_meas": "%"},
     False, "not a valid unit"),
    # Strict: the same unique_id as the temperature above.
    ("homeassistant/sensor/sensorhub/dupe/config",
     {"name": "x", "uniq_id": "sensorhub_t9q1temp", "stat_t": "s/t"},
     False, "already used by homeassistant/sensor/sensorhub/t9q1temp/config"),
]

messages, expect = [], []
for topic, payload, ok, needle in cases:
    text = payload if isinstance(payload, str) else json.dumps(payload, ensure_ascii=False)
    messages.append({"topic": topic, "payload": text})
    expect.append({"topic": topic, "ok": ok, "needle": needle})
json.dump(messages, open(sys.argv[1], "w"), ensure_ascii=False)
json.dump(expect, open(sys.argv[2], "w"))
EOF

status=0
"$python" "$here/ha_validate.py" "$work/input.json" >"$work/out.jsonl" 2>"$work/err" || status=$?
cat "$work/err" >&2
if [ "$status" -ne 1 ]; then
    echo "ha_validate_selftest: expected exit status 1 for a set with invalid configs, got $status" >&2
    exit 1
fi

"$python" - "$work/expect.json" "$work/out.jsonl" <<'EOF'
import json, sys
expect = json.load(open(sys.argv[1]))
results = [json.loads(line) for line in open(sys.argv[2])]
bad = 0
if len(results) != len(expect):
    print(f"expected {len(expect)} lines, got {len(results)}"); sys.exit(1)
for want, got in zip(expect, results):
    verdict = "ok" if got["ok"] else f"rejected: {got['error']}"
    right = got["topic"] == want["topic"] and got["ok"] == want["ok"] and want["needle"] in (got["error"] or "")
    if got["ok"] and got["warnings"]:
        right = False
        verdict += f" (warnings {got['warnings']})"
    bad += not right
    print(f"{'PASS' if right else 'FAIL'} {want['topic']}: {verdict}")
print(f"ha_validate_selftest: {len(expect) - bad} of {len(expect)} verdicts as expected")
sys.exit(1 if bad else 0)
EOF

# The valid ones alone pass (exit 0), and --lenient turns the strict-only findings into warnings.
"$python" - "$work/input.json" "$work/valid.json" "$work/strict.json" <<'EOF'
import json, sys
messages = json.load(open(sys.argv[1]))
json.dump(messages[:5], open(sys.argv[2], "w"), ensure_ascii=False)
json.dump(messages[:5] + messages[-3:], open(sys.argv[3], "w"), ensure_ascii=False)
EOF
"$python" "$here/ha_validate.py" "$work/valid.json" >/dev/null 2>&1 || { echo "ha_validate_selftest: valid set rejected" >&2; exit 1; }
"$python" "$here/ha_validate.py" --lenient - <"$work/strict.json" >/dev/null 2>&1 || { echo "ha_validate_selftest: --lenient rejected the strict-only cases" >&2; exit 1; }
echo "ha_validate_selftest: exit statuses as expected (1 mixed, 0 valid, 0 lenient)"
