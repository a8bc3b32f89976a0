# SensorHub: `make run` runs the hub, `make test` runs the tests. Both install the Debian packages they need.
SHELL := /bin/bash
export PATH := $(PATH):/opt/swift/usr/bin

.PHONY: chaos fuzz run test build bench tsan format lint clean install deb deb-check docs

## Build hubd and run it; starts a local Mosquitto when MQTT_HOST is unset and none answers on localhost:1883.
run:
	scripts/run-hub $(ARGS)

## Build everything and run every test against real Mosquitto brokers.
# The venvs are made while Swift builds (on a clean clone they take about 1.5 min, partly waiting on PyPI).
test:
	scripts/install-deps
	scripts/ha-venv >/dev/null & ha=$$!; \
	scripts/peer-venv >/dev/null & peer=$$!; \
	swift build --build-tests; built=$$?; \
	wait $$ha || { echo "make test: scripts/ha-venv failed" >&2; exit 1; }; \
	wait $$peer || { echo "make test: scripts/peer-venv failed" >&2; exit 1; }; \
	exit $$built
	scripts/run-tests

build:
	scripts/install-deps
	swift build

## Write docs/configuration.md again from the code's key lists (`hubd --config-reference`), which make test checks,
## and the dashboard's screenshots in docs/images/ (every page at 1280x900 and 390x844, by DashboardLookTests).
docs:
	scripts/install-deps
	swift build --product hubd
	.build/debug/hubd --config-reference > docs/configuration.md.new && mv docs/configuration.md.new docs/configuration.md
	swift build --build-tests
	mkdir -p docs/images
	HUB_SCREENSHOTS=$(CURDIR)/docs/images swift test --skip-build --filter "DashboardLookTests|MapBrowserTests"

## Install hubd and hubctl (one release build with the Swift runtime inside; hubctl a link to hubd), man pages,
## completions, the systemd unit and /etc/sensorhub/hubd.yaml (kept when there): PREFIX (/usr/local), DESTDIR, SYSCONFDIR (/etc).
PREFIX ?= /usr/local
SYSCONFDIR ?= /etc
install:
	scripts/install-deps
	scripts/install-hub --destdir "$(DESTDIR)" --prefix "$(PREFIX)" --sysconfdir "$(SYSCONFDIR)"

## A Debian package of the same, in .build/deb/ (scripts/make-deb); deb-check builds it and checks it with lintian,
## dpkg -i, the binaries, man, the unit, dpkg -r and dpkg --purge (CI runs it; it installs the package meanwhile).
deb:
	scripts/install-deps
	scripts/make-deb

deb-check:
	scripts/install-deps
	scripts/check-deb

## Benchmarks: the wrapper beside a bare mosquitto_sub; the registry at 1k-100k sensors; the hub beside mqttwarn;
## routes on a 1,000 x 1,000 grid and a 100k-edge road network, A* beside Dijkstra; an authenticated GET beside an
## unauthenticated one; the dashboard's pages and what open dashboards cost a quiet hub; what a home's hub writes to
## its disk, by file, and what a commit to the history costs it at each interval; the package's and the executable's
## size and hubd's memory at 1,000 sensors, beside issue 55's goals (write bench/results/).
bench:
	bench/receive.sh
	bench/store.sh
	bench/hub.sh
	RATE=100 SECS=10 bench/profile.sh
	RATE=1000 SECS=10 bench/profile.sh
	bench/route.sh
	bench/cluster.sh
	bench/alerts.sh
	bench/alerts-ab.sh
	bench/auth.sh
	bench/dashboard.sh
	bench/home.sh
	bench/footprint.sh
	bench/history-commits.sh

## The tests once more under ThreadSanitizer (separate build folder). The suites that start hubd and hubctl
## processes (HubToolsTests) keep both cores busy for two minutes under it, so the in-process suites, with their
## 15 s waits, run first, on their own.
tsan:
	scripts/install-deps
	scripts/ha-venv >/dev/null
	scripts/peer-venv >/dev/null
	swift build --build-tests --scratch-path .build-tsan -Xswiftc -sanitize=thread
	TSAN_OPTIONS=halt_on_error=1 swift test --skip-build --scratch-path .build-tsan --skip HubToolsTests
	TSAN_OPTIONS=halt_on_error=1 swift test --skip-build --scratch-path .build-tsan --filter HubToolsTests

## Faults at length: the broker restarted under 10x the load (unlimited queue once, Mosquitto's default queue 20
## times: it prints what hubd received after each reconnect and what the broker dropped), hubd SIGKILLed under load, a
## webhook down for a minute, a full disk, hostile payloads, the SDS011 unplugged, and hubd SIGKILLed mid-change 100
## times with retained statuses and 100 without (it prints changes lost, applied twice, wrong old statuses, messages
## the broker sent again and hubd knew, and the journal's longest wait); and a cluster of three
## agents hurt mid-burst, every combination CLUSTER_CHAOS_RUNS times (retained or not, flat out or paced, an agent
## SIGKILLed or stopped and restarted or not, PostgreSQL killed, the broker restarted: about 4.5 hours at 20; it
## prints changes lost, under two ids, older after newer, sensors not on their last status, the takeover and the
## load spread); and issue 37's alert scenarios (a power cut, a gateway and its children, a silence that ends,
## reminders, an acknowledgement and an escalation) with hubd SIGKILLed at a seeded random moment in the middle,
## ALERT_CHAOS_RUNS times each (about 15 min at 20; it prints per scenario the messages expected and seen, lost,
## doubled and sent again under their id, and the seeds: ALERT_CHAOS_SEED replays one); and a cluster's alert book
## with its keeper SIGKILLed at a seeded moment of a power cut, CLUSTER_ALERT_RUNS times (about 8 min at 20; it
## prints the messages of each run; CLUSTER_ALERT_SEED replays one). (The quick versions run in `make test`.)
## CLUSTER_CHAOS_PART=k/n runs only the k-th of n slices of the cluster scenarios, so the soak can be split across
## sessions; the n parts together are the whole.
CLUSTER_CHAOS_RUNS ?= 20
CLUSTER_CHAOS_PART ?=
ALERT_CHAOS_RUNS ?= 20
CLUSTER_ALERT_RUNS ?= 20
chaos:
	scripts/install-deps
	swift build --build-tests
	CHAOS_SCALE=10 CHAOS_DOWNTIME=60 CHAOS_KILL_RUNS=100 FAULT_RESTART_RUNS=20 CLUSTER_CHAOS_RUNS=$(CLUSTER_CHAOS_RUNS) CLUSTER_CHAOS_ALL=1 \
		$(if $(CLUSTER_CHAOS_PART),CLUSTER_CHAOS_PART=$(CLUSTER_CHAOS_PART)) \
		ALERT_CHAOS_RUNS=$(ALERT_CHAOS_RUNS) CLUSTER_ALERT_RUNS=$(CLUSTER_ALERT_RUNS) swift test --skip-build \
		--filter 'FaultTests|NotifierOutageTests|HostilePayloadTests|SDS011HubTests|outboxSurvivesSIGKILL|KillDeliveryTests|ClusterChaosTests|AlertChaosTests|aKeeperKilledInTheMiddleOfACut'

## libFuzzer on the parsers of untrusted input (the SDS011 decoder; MQTT payloads, statuses, names, the registry
## file): FUZZ_TIME seconds each (CI runs them briefly). Crashes are saved in Fuzz/ as crash-*.
FUZZ_TIME ?= 60
fuzz:
	scripts/install-deps
	cd Fuzz && swift build -c debug -Xswiftc -sanitize=fuzzer,address
	scripts/fuzz $(FUZZ_TIME)

format:
	swift format -i -r Sources Tests Package.swift

lint:
	swift format lint -r Sources Tests Package.swift

clean:
	rm -rf .build .build-tsan .state
