"""The Sun as PyEphem (XEphem's libastro) sees it: the independent reference for SolarPositionTests.

Reads a JSON list of cases on stdin, each {"lat": degrees, "lon": degrees, "instant": "YYYY-MM-DDTHH:MM:SSZ",
"date": "YYYY-MM-DD"}, and prints one JSON list with, for each case:
- "zenith": the geometric zenith angle at the instant (pressure 0: no refraction), degrees;
- "noon": the transit on the place's date (the one nearest 12:00 - 4 min x longitude UTC), ISO 8601 UTC;
- "sunrise" / "sunset" around that transit with the horizon at -0:34 and the upper limb (NOAA's 90.833 degrees;
  PyEphem's documented way to match the USNO), or "polar": "day" / "night" when the Sun does not cross it.
Run with the tests' peer venv (scripts/peer-venv).
"""
import datetime
import json
import math
import sys

import ephem


def iso(date):
    moment = ephem.Date(date).datetime().replace(tzinfo=datetime.timezone.utc)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def observer(lat, lon, date):
    place = ephem.Observer()
    place.lat = str(lat)
    place.lon = str(lon)
    place.elevation = 0
    place.pressure = 0  # no refraction: geometric positions, and the horizon below does the refraction
    place.date = date
    return place


def case(item):
    sun = ephem.Sun()
    instant = datetime.datetime.strptime(item["instant"], "%Y-%m-%dT%H:%M:%SZ")
    place = observer(item["lat"], item["lon"], instant)
    sun.compute(place)
    result = {"zenith": 90 - math.degrees(sun.alt)}

    day = datetime.datetime.strptime(item["date"], "%Y-%m-%d")
    approximate_noon = day + datetime.timedelta(minutes=720 - 4 * item["lon"])
    place = observer(item["lat"], item["lon"], approximate_noon - datetime.timedelta(hours=12))
    noon = place.next_transit(sun)
    result["noon"] = iso(noon)

    place = observer(item["lat"], item["lon"], noon)
    place.horizon = "-0:34"
    try:
        result["sunrise"] = iso(place.previous_rising(sun, start=noon))
        result["sunset"] = iso(place.next_setting(sun, start=noon))
    except ephem.AlwaysUpError:
        result["polar"] = "day"
    except ephem.NeverUpError:
        result["polar"] = "night"
    return result


print(json.dumps([case(item) for item in json.load(sys.stdin)]))
