import Foundation
import HubCore
import HubNotify
import HubTestKit
import Testing

extension InChromium {
    /// The dashboard as a household uses it, in headless Chromium against a running hubd with its defaults and a real
    /// broker: an alert fires and shows at the top; it is acknowledged and another snoozed and unsnoozed from there; a
    /// silence is added with its preview and ended; a sensor is added with a preset, renamed and removed; a test
    /// notification goes through a backend; the events page lists what happened. Every action is clicked or typed as a
    /// person would, and its effect is checked where hubctl would see it (the alert book, the registry, the
    /// backend's file), not only on the page.
    @Suite struct DashboardActionsTests {
        @Test func aHouseholdActsFromTheDashboard() async throws {
            try await withBroker { broker in
                let state = try TemporaryDirectory()
                let delivered = state.file("delivered.jsonl")
                let hub = try RunningHub(
                    configuration: """
                        alerts:
                          sensors:
                            "front door": { labels: { room: hall } }
                            "back door": { labels: { room: garden } }
                        notifiers:
                          backends:
                            log: { type: file, path: \(delivered) }
                          rules:
                            doors:
                              sensors: ["* door"]
                              events: [changed]
                              statuses: [open]
                              backends: [log]
                              group_wait: 0s
                        """)
                try await hub.prepare(broker, sensors: ["front door", "back door", "cellar"])
                try await hub.addUser()
                let address = try await hub.startAndWaitForHTTP()
                try await publish(broker, [("front door", Array("open".utf8)), ("cellar", Array("dry".utf8))])
                let front = "doors/front door/status"
                try await eventually("the front door's alert told") {
                    try hub.savedAlerts().book.alerts[front]?.told.isEmpty == false
                }
                try await WebDriver.with { browser in
                    try await act(browser, origin: "http://\(address)", hub: hub, broker: broker, delivered: delivered)
                }
                await hub.stop()
            }
        }

        /// What each role is offered: a viewer looks (no button that would be refused), a member acts on alerts and
        /// silences, only an admin adds, renames and removes sensors or discovers devices.
        @Test func eachRoleIsOfferedWhatItMayDo() async throws {
            try await withBroker { broker in
                let hub = try RunningHub(
                    configuration: """
                        notifiers:
                          backends:
                            log: { type: file, path: /dev/null }
                          rules:
                            doors: { events: [changed], statuses: [open], backends: [log], group_wait: 0s }
                        """)
                try await hub.prepare(broker, sensors: ["front door"])
                try await hub.addUser("ben", role: "viewer")
                try await hub.addUser("cleo", role: "member")
                let address = try await hub.startAndWaitForHTTP()
                try await publish(broker, [("front door", Array("open".utf8))])
                try await WebDriver.with { browser in
                    let offered = """
                        const shown = s => [...document.querySelectorAll(s)].filter(e => e.getClientRects().length)
                          .map(e => e.textContent.trim()).join(',');
                        return [shown('#firing button'), shown('.toolbar button'), shown('.sensor button'),
                          shown('#backends button')].join(' | ');
                        """
                    for (user, expected) in [
                        ("ben", " |  |  | "),
                        ("cleo", "Acknowledge,Snooze 1 h | Add a silence | Silence | Send a test"),
                    ] {
                        try await browser.logIn("http://\(address)", user: user)
                        try await browser.waitUntil("the alert and the backend for \(user)") {
                            let alert = try await browser.text("#firing .alert .what")
                            let backend = try await browser.text("#backends tr[data-name='log'] td")
                            return alert != nil && backend != nil
                        }
                        let buttons = try await browser.script(offered) as? String
                        #expect(buttons == expected, "\(user): \(buttons ?? "-")")
                        _ = try await browser.script("document.querySelector('.userbar form').submit(); return true")
                        try await browser.waitUntil("\(user) logged out") {
                            try await browser.script("return location.pathname") as? String == "/login"
                        }
                    }
                }
                await hub.stop()
            }
        }

        func book(_ hub: RunningHub) throws -> AlertBook { try hub.savedAlerts().book }

        func act(
            _ browser: WebDriver, origin: String, hub: RunningHub, broker: MosquittoBroker, delivered: String
        ) async throws {
            try await browser.logIn(origin)
            // At a glance: the firing alert at the top, named as a person would; the door red, the cellar green, the back
            // door (no message yet) grey; grouped by room.
            try await browser.waitUntil("the alert in the banner") {
                try await browser.text("#firing .alert .what")?.hasPrefix("front door open · hall, since ") == true
            }
            #expect(try await look(browser, "front door") == "alert")
            #expect(try await look(browser, "cellar") == "fine")
            #expect(try await look(browser, "back door") == "waiting")
            let rooms = try await browser.script(
                "return [...document.querySelectorAll('#sensors section.room h2')].map(h => h.textContent).join(',')")
            #expect(rooms as? String == "garden,hall,Elsewhere")

            // Acknowledge from the banner: the book has it, by ana from the web.
            try await browser.click("#firing .alert[data-id='doors/front door/status'] button.primary")
            try await eventually("acknowledged in the book") {
                try book(hub).alerts["doors/front door/status"]?.acknowledged?.by == "ana"
            }
            #expect(try book(hub).alerts["doors/front door/status"]?.acknowledged?.via == "web")
            try await browser.waitUntil("the banner says acknowledged") {
                try await browser.script(
                    "return document.querySelector(\"#firing .alert[data-id='doors/front door/status']\").classList.contains('acknowledged')"
                ) as? Bool == true
            }

            // Snooze another for an hour, and take it back.
            try await publish(broker, [("back door", Array("open".utf8))])
            let back = "#firing .alert[data-id='doors/back door/status']"
            try await browser.waitUntil("the back door in the banner") {
                try await browser.text(back + " .what") != nil
            }
            try await browser.click(back + " button:nth-of-type(2)")
            try await eventually("a snooze in the book") {
                try book(hub).silences.contains {
                    $0.id.hasPrefix("snooze-") && $0.createdBy == "ana" && $0.state(at: .now) == .active
                }
            }
            try await browser.waitUntil("Unsnooze offered") {
                try await browser.script(
                    "return document.querySelector(\"\(back) button:nth-of-type(2)\")?.textContent")
                    as? String == "Unsnooze"
            }
            try await browser.click(back + " button:nth-of-type(2)")
            try await eventually("the snooze ended") {
                try !book(hub).silences.contains { $0.id.hasPrefix("snooze-") && $0.state(at: .now) == .active }
            }
            // Acknowledged elsewhere (hubctl on the hub's machine, as another person's phone would): the open page
            // shows it without being loaded again, from /api/v1/stream.
            _ = try await browser.script("window.sensorhubMarker = 7; return true")
            let elsewhere = try await hub.hubctl.run("alerts", "ack", "doors/back door/status")
            #expect(elsewhere.status == 0, "\(elsewhere.standardError)")
            try await browser.waitUntil("the banner says acknowledged, live") {
                try await browser.script(
                    "return document.querySelector(\"\(back)\")?.classList.contains('acknowledged') ?? false")
                    as? Bool == true
            }
            #expect(try await browser.script("return window.sensorhubMarker") as? Int == 7)

            // A silence from the form: the preview names what it holds, warns when nothing, and it is added for an hour.
            try await browser.click("#silence-open")
            try await browser.type("#silence-form input[name=matchers]", "nosuch*")
            try await browser.waitUntil("the preview's warning") {
                try await browser.text("#silence-preview .warning")?.contains("no sensor matches") == true
            }
            try await browser.type("#silence-form input[name=matchers]", "back*")
            try await browser.waitUntil("the preview names the back door and its alert") {
                let text = try await browser.text("#silence-preview") ?? ""
                return text.contains("1 sensor:") && text.contains("back door")
                    && text.contains("doors/back door/status")
            }
            try await browser.click("#silence-lengths button[data-length='1h']")
            try await browser.type("#silence-form input[name=comment]", "painting")
            try await browser.click("#silence-form button[type=submit]")
            try await eventually("the silence in the book") {
                try book(hub).silences.contains { $0.comment == "painting" && $0.createdBy == "ana" }
            }
            let silence = try #require(try book(hub).silences.first { $0.comment == "painting" })
            let length = silence.endsAt.millisecondsSince1970 - silence.startsAt.millisecondsSince1970
            #expect(abs(length - 3_600_000) < 60_000)
            #expect(silence.matchers.map(\.description) == ["sensor=back*"])
            // Ended from its row.
            try await browser.waitUntil("the silence listed") {
                try await browser.text("#silences tr[data-id='\(silence.id)'] td") == "back*"
            }
            try await browser.click("#silences tr[data-id='\(silence.id)'] button")
            try await eventually("the silence ended") {
                try book(hub).silences.first { $0.id == silence.id }?.state(at: .now) == .expired
            }

            // A sensor added with a preset, renamed, removed.
            try await browser.click("#sensor-open")
            try await browser.type("#sensor-form input[name=name]", "garage")
            _ = try await browser.script(
                "const s = document.querySelector('#sensor-form select[name=preset]'); s.value = 'zigbee2mqtt';"
                    + " s.dispatchEvent(new Event('change')); return true")
            try await browser.type("#sensor-form input[name=value]", "contact")
            try await browser.click("#sensor-form button[type=submit]")
            try await eventually("garage in the registry") { try hub.sensor("garage")?.topic == "zigbee2mqtt/garage" }
            #expect(try hub.sensor("garage")?.availability == "zigbee2mqtt/garage/availability")
            #expect(try hub.sensor("garage")?.format.map?.description == "true=closed,false=open")
            try await browser.waitUntil("garage on the page") { try await look(browser, "garage") == "waiting" }
            try await browser.click(".sensor[data-name='garage'] button[aria-label='Rename garage']")
            try await browser.type("#rename-form input[name=name]", "garage door")
            try await browser.click("#rename-form button[type=submit]")
            try await eventually("renamed in the registry") {
                try hub.sensor("garage door")?.topic == "zigbee2mqtt/garage" && hub.sensor("garage") == nil
            }
            try await browser.waitUntil("the new name on the page") { try await look(browser, "garage door") != nil }
            try await browser.click(".sensor[data-name='garage door'] button.danger")
            try await browser.acceptDialog()
            try await eventually("removed from the registry") { try hub.sensor("garage door") == nil }

            // A test notification: delivered, and the backend has it.
            try await browser.click("#backends tr[data-name='log'] button")
            try await browser.waitUntil("the test's answer") {
                try await browser.text("#backends tr[data-name='log'] .result")?.contains("delivered") == true
            }
            let lines = (try? String(contentsOfFile: delivered, encoding: .utf8)) ?? ""
            #expect(lines.contains("test from ana"))

            // The events page: newest first, filtered by sensor, the download with the same filter.
            try await browser.open(origin + "/events")
            try await browser.waitUntil("the events listed") {
                try await browser.text("#events tbody tr td[data-label=Sensor]") != nil
            }
            #expect(try await browser.text("#events tbody tr td[data-label=Sensor]") == "back door")
            _ = try await browser.script(
                "const s = document.querySelector('#filters select[name=sensor]'); s.value = 'front door';"
                    + " s.dispatchEvent(new Event('change', {bubbles: true})); return true")
            try await browser.waitUntil("only the front door") {
                let shown =
                    try await browser.script(
                        "return [...document.querySelectorAll('#events td[data-label=Sensor]')].map(t => t.textContent).join(',')"
                    )
                    as? String
                return shown == "front door"
            }
            #expect(
                try await browser.script("return document.getElementById('csv').getAttribute('href')") as? String
                    == "/api/v1/events?sensor=front%20door&since=24h&format=csv&limit=10000")

            // Discovery: a Zigbee2MQTT leak sensor's retained state on the broker, heard and added with a click.
            try await publish(
                broker, DeviceFixtures.zigbee2mqttLeakTopic, DeviceFixtures.zigbee2mqttLeakDry, retain: true)
            try await browser.open(origin + "/")
            try await browser.click("#discover-open")
            let heard = "#discover-list label[data-topic='\(DeviceFixtures.zigbee2mqttLeakTopic)'] input"
            try await browser.waitUntil("the leak sensor heard", within: .seconds(20)) {
                try await browser.script("return document.querySelector(\"\(heard)\")?.checked ?? false") as? Bool
                    == true
            }
            try await browser.click("#discover-add")
            try await eventually("the discovered sensor in the registry") {
                try hub.registry().sensor(onTopic: DeviceFixtures.zigbee2mqttLeakTopic)?.format.map?.description
                    == "true=leak,false=dry"
            }
        }

        /// The state a sensor's card shows (`data-look`), or nil when it is not on the page.
        func look(_ browser: WebDriver, _ name: String) async throws -> String? {
            try await browser.script(
                "return document.querySelector(\".sensor[data-name='\(name)']\")?.dataset.look ?? null") as? String
        }
    }
}
