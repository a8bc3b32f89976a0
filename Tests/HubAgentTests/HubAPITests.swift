import Foundation
import HTTPTypes
import HubCore
import HubHistory
import HubNotify
import HubSupport
import HubTestKit
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import Testing
import Yams

@testable import HubAgent

/// The HTTP API through Hummingbird's router, on a real state directory and registry, with the hub's state given as
/// a snapshot (no agent runs): every endpoint, with bad input.
@Suite struct HubAPITests {
    let directory: TemporaryDirectory
    let store: DefaultsStore
    /// What the API reads as the hub's live state; a test sets it as a running hub would.
    let hub = Locked(HubSnapshot())

    init() throws {
        directory = try TemporaryDirectory()
        store = StateDirectory(option: directory.path).store
    }

    func withClient(
        token: String? = nil, webPushKey: String? = nil,
        session: (@Sendable (SessionAction, String) -> SensorTracker.Outcome)? = nil,
        _ body: @escaping @Sendable (any TestClientProtocol) async throws -> Void
    ) async throws {
        var logger = Logger(label: "api-test")
        logger.logLevel = .critical
        let hub = self.hub
        let api = HubAPI(
            snapshot: { _ in hub.withLock { $0 } }, store: FileRegistry(store), stateDirectory: directory.path,
            access: testAccess(directory.path, token: token ?? testAdminToken),
            metrics: MetricsExporter(), logger: logger, webPushKey: { webPushKey }, session: session,
            streamLifetime: 1)
        let app = Application(router: api.router())
        // A test that names a token checks who is let in: its requests carry only what it gives them.
        try await app.test(.router) { client in
            try await body(AuthorizedClient(base: client, token: token == nil ? testAdminToken : nil))
        }
    }

    func decode(_ buffer: ByteBuffer) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(buffer: buffer))
    }

    func error(_ buffer: ByteBuffer) -> String? {
        ((try? decode(buffer)) as? [String: Any])?["error"] as? String
    }

    /// hubd writes the alert book's files only when it must be durable: a page follows the book in memory (its
    /// revision, `AlertPlace.revision`), or an alert opened in its group's wait would show only 30 s later.
    @Test func theChangeFeedFollowsTheBookInMemory() throws {
        final class Place: AlertPlace {
            let moved = Locked(0)
            func saved() async throws -> SavedAlerts { SavedAlerts(book: AlertBook(), pending: []) }
            func send(_ requests: [AlertRequest]) async throws {}
            var revision: Int? { moved.withLock { $0 } }
        }
        let place = Place()
        let hub = self.hub
        let api = HubAPI(
            snapshot: { _ in hub.withLock { $0 } }, store: FileRegistry(store), stateDirectory: directory.path,
            access: testAccess(directory.path, token: testAdminToken), metrics: MetricsExporter(),
            logger: Logger(label: "api-test"), alerts: place)
        let before = api.changePrint()
        #expect(api.changePrint() == before, "nothing moved")
        place.moved.withLock { $0 += 1 }
        #expect(api.changePrint() != before, "the book moved, its files did not")
    }

    @Test func sensorsAddListGetRemoveAndBadInput() async throws {
        try await withClient { client in
            try await client.execute(
                uri: "/api/v1/sensors", method: .post, body: ByteBuffer(string: #"{"name":"kitchen window"}"#)
            ) {
                #expect($0.status == .created)
                let sensor = try #require(try decode($0.body) as? [String: Any])
                #expect(sensor["name"] as? String == "kitchen window" && sensor["status"] as? String == "Waiting")
                #expect(sensor["topic"] as? String == "kitchen window" && sensor["lastUpdated"] is NSNull)
            }
            try await client.execute(
                uri: "/api/v1/sensors", method: .post,
                body: ByteBuffer(
                    string:
                        #"{"name":"balcony","topic":"tele/balcony/SENSOR","kind":"particulate","silenceTimeout":"15m"}"#
                )
            ) { #expect($0.status == .created) }
            try await client.execute(uri: "/api/v1/sensors", method: .get) {
                let list = try #require(try decode($0.body) as? [[String: Any]])
                #expect(list.map { $0["name"] as? String } == ["balcony", "kitchen window"])
                #expect(list[0]["kind"] as? String == "particulate" && list[0]["silenceTimeout"] as? String == "15m")
            }
            try await client.execute(uri: "/api/v1/sensors/kitchen%20window", method: .get) {
                #expect($0.status == .ok)
            }
            // The same store as hubctl: the registry file has them.
            #expect(try store.read().sensors.count == 2)
            // Listed as hubctl lists them, case-insensitively (a byte order would put "Z" before "b").
            try await client.execute(
                uri: "/api/v1/sensors", method: .post, body: ByteBuffer(string: #"{"name":"Zoë gate"}"#)
            ) { #expect($0.status == .created) }
            try await client.execute(uri: "/api/v1/sensors", method: .get) {
                let list = try #require(try decode($0.body) as? [[String: Any]])
                #expect(list.map { $0["name"] as? String } == ["balcony", "kitchen window", "Zoë gate"])
            }
            try await client.execute(uri: "/api/v1/sensors/Zo%C3%AB%20gate", method: .delete) {
                #expect($0.status == .noContent)
            }
            // A device that publishes JSON, as `hubctl sensors add --value --map --availability` adds one.
            try await client.execute(
                uri: "/api/v1/sensors", method: .post,
                body: ByteBuffer(
                    string:
                        #"{"name":"shed","topic":"z2m/shed","value":"contact","map":"true=closed,false=open","availability":"z2m/shed/availability"}"#
                )
            ) { #expect($0.status == .created) }
            let shed = try #require(try store.read().sensor(named: "shed"))
            #expect(
                shed.format.path?.description == "contact" && shed.format.map?.description == "true=closed,false=open")
            #expect(shed.availability == "z2m/shed/availability")
            try await client.execute(uri: "/api/v1/sensors/shed", method: .delete) { #expect($0.status == .noContent) }

            let bad: [(String, HTTPResponse.Status, String)] = [
                ("{", .badRequest, "the body is not valid JSON"),
                ("[1]", .badRequest, "the body must be a JSON object"),
                (#"{"topic":"x"}"#, .badRequest, "\"name\" (a string) is required"),
                (#"{"name":"a/b"}"#, .badRequest, "'a/b'"),
                (#"{"name":"Kitchen Window"}"#, .conflict, "already exists"),
                (#"{"name":"x","colour":"red"}"#, .badRequest, "unknown field \"colour\""),
                (#"{"name":"x","kind":"thermometer"}"#, .badRequest, "\"kind\" is one of"),
                (#"{"name":"x","silenceTimeout":"soon"}"#, .badRequest, "\"silenceTimeout\" is a duration"),
                (#"{"name":"x","topic":"tele/balcony/SENSOR"}"#, .conflict, "tele/balcony/SENSOR"),
                (#"{"name":"x","topic":"a/#"}"#, .badRequest, "a/#"),
                (#"{"name":"x","value":"a..b"}"#, .badRequest, #""value": 'a..b', at character 3"#),
                (#"{"name":"x","map":"true"}"#, .badRequest, #""map": 'true', at character 1"#),
                (#"{"name":"x","availability":"a/+"}"#, .badRequest, "a/+"),
            ]
            for (body, status, message) in bad {
                try await client.execute(uri: "/api/v1/sensors", method: .post, body: ByteBuffer(string: body)) {
                    #expect($0.status == status, "\(body)")
                    #expect(error($0.body)?.contains(message) == true, "\(body): \(error($0.body) ?? "-")")
                }
            }
            let huge = ByteBuffer(string: #"{"name":""# + String(repeating: "a", count: 70_000) + "\"}")
            try await client.execute(uri: "/api/v1/sensors", method: .post, body: huge) {
                #expect($0.status == .contentTooLarge)
                #expect(error($0.body) == "the body is larger than 64 KiB")
            }
            try await client.execute(uri: "/api/v1/sensors/nobody", method: .get) {
                #expect($0.status == .notFound && error($0.body) == "no sensor named 'nobody'")
            }
            try await client.execute(uri: "/api/v1/sensors/balcony", method: .delete) {
                #expect($0.status == .noContent)
            }
            try await client.execute(uri: "/api/v1/sensors/balcony", method: .delete) {
                #expect($0.status == .notFound)
            }
            try await client.execute(uri: "/api/v1/nothing", method: .get) {
                #expect(
                    $0.status == .notFound && error($0.body) == "no such endpoint: GET /api/v1/nothing",
                    "\(String(buffer: $0.body))")
            }
        }
    }

    /// Issue 16: names and topics with control or bidi characters are refused naming the field; a status that got
    /// in anyway (an old registry file) is escaped in the JSON and on the dashboard, whose script escapes too.
    @Test func controlAndBidiCharactersAreRefusedAndEscaped() async throws {
        var document = DefaultsDocument()
        try document.addSensor(named: "door")
        document.recordStatus("\u{1B}[2Jopen\u{202E}", lastUpdated: .now, onTopic: "door")
        try FileManager.default.createDirectory(atPath: directory.path, withIntermediateDirectories: true)
        try Data(document.encode()).write(to: URL(fileURLWithPath: store.path))
        try await withClient { client in
            let bad: [(String, String)] = [
                (
                    #"{"name":"x","topic":"a\u001b[31m"}"#,
                    #"'a\u{1B}[31m' is not a valid sensor topic: it contains a control character (U+001B)"#
                ),
                (
                    #"{"name":"x","topic":"home/\u202edoor"}"#,
                    #"'home/\u{202E}door' is not a valid sensor topic: it contains an invisible formatting character (U+202E)"#
                ),
                (
                    #"{"name":"x\u0007"}"#,
                    #"'x\u{7}' is not a valid sensor name: it contains a control character (U+0007)"#
                ),
                (
                    #"{"name":"\ufeffx"}"#,
                    #"'\u{FEFF}x' is not a valid sensor name: it contains an invisible formatting character (U+FEFF)"#
                ),
            ]
            for (body, message) in bad {
                try await client.execute(uri: "/api/v1/sensors", method: .post, body: ByteBuffer(string: body)) {
                    #expect($0.status == .badRequest, "\(body)")
                    #expect(error($0.body)?.hasPrefix(message) == true, "\(body): \(error($0.body) ?? "-")")
                }
            }
            #expect(try store.read().sensors.map(\.name) == ["door"])
            try await client.execute(uri: "/api/v1/sensors", method: .get) {
                let text = String(buffer: $0.body)
                #expect(text.contains(#""status":"\u001b[2Jopen\u202e""#), "\(text)")
                #expect(UnsafeText.firstUnsafe(in: text) == nil)
            }
            try await client.execute(uri: "/", method: .get) {
                // The page's script draws the status (as vis() shows it, escaped); the page carries none raw.
                let html = String(buffer: $0.body)
                #expect(UnsafeText.firstUnsafe(in: html, allowing: .lineBreak) == nil)
            }
            try await client.execute(uri: "/dashboard/app.js", method: .get) {
                #expect(String(buffer: $0.body).contains(#"[\p{Cc}\p{Cf}\u2028\u2029]/gu"#))
            }
        }
    }

    @Test func everyRequestNeedsTheToken() async throws {
        let token = "0123456789abcdef0123"
        try await withClient(token: token) { client in
            try await client.execute(uri: "/api/v1/sensors", method: .post, body: ByteBuffer(string: #"{"name":"a"}"#))
            {
                #expect($0.status == .unauthorized)
                #expect(error($0.body)?.contains("Authorization: Bearer") == true)
            }
            try await client.execute(
                uri: "/api/v1/sensors", method: .post, headers: [.authorization: "Bearer wrong"],
                body: ByteBuffer(string: #"{"name":"a"}"#)
            ) { #expect($0.status == .unauthorized) }
            try await client.execute(
                uri: "/api/v1/sensors", method: .post, headers: [.authorization: "Bearer \(token)"],
                body: ByteBuffer(string: #"{"name":"a"}"#)
            ) { #expect($0.status == .created) }
            // Reads too, now: nobody looks at the hub without being someone it knows (issue 51).
            try await client.execute(uri: "/api/v1/sensors", method: .get) { #expect($0.status == .unauthorized) }
            try await client.execute(
                uri: "/api/v1/sensors", method: .get, headers: [.authorization: "Bearer \(token)"]
            ) { #expect($0.status == .ok) }
            try await client.execute(uri: "/api/v1/sensors/a", method: .delete) { #expect($0.status == .unauthorized) }
        }
    }

    @Test func devicesRegisterValidatedAndDeduplicated() async throws {
        let token = String(repeating: "ab", count: 32)
        try await withClient { client in
            try await client.execute(
                uri: "/api/v1/devices", method: .post, body: ByteBuffer(string: #"{"token":"\#(token)"}"#)
            ) {
                #expect($0.status == .created)
            }
            // The original app's shape, the same token: no duplicate.
            try await client.execute(
                uri: "/api/v1/devices", method: .post, body: ByteBuffer(string: #"{"ID":"\#(token.uppercased())"}"#)
            ) {
                #expect($0.status == .ok)
                let object = try decode($0.body) as? [String: Any]
                #expect(object?["added"] as? Bool == false)
            }
            try await client.execute(
                uri: "/api/v1/devices", method: .post, body: ByteBuffer(string: #"{"token":"zz"}"#)
            ) {
                #expect($0.status == .badRequest && error($0.body)?.contains("hexadecimal") == true)
            }
            try await client.execute(uri: "/api/v1/devices/\(token)", method: .delete) {
                #expect($0.status == .noContent)
            }
            try await client.execute(uri: "/api/v1/devices/\(token)", method: .delete) {
                #expect($0.status == .notFound)
            }
        }
    }

    /// Air, the original alert endpoint, air history, events, health, metrics, the dashboard and its chart.
    @Test func airEventsHealthMetricsAndDashboard() async throws {
        try store.update { document throws(RegistryError) in
            try document.addSensor(named: "air quality", topic: "sensorhub/sds011/A160/state", kind: .particulate)
            try document.addSensor(named: "front door", topic: "door")
        }
        let document = try store.read()
        let now = Timestamp.now.millisecondsSince1970
        let readings = [(10.0, 20.0), (27.4, 40.0)].enumerated().map { index, value in
            ParticulateReading(
                pm25: value.0, pm10: value.1,
                time: Timestamp(millisecondsSince1970: now - 60_000 + Int64(index) * 30_000))
        }
        var policy = AirQualityPolicy()
        policy.metric = .init(.pm25, window: nil)
        var tracker = SensorTracker()
        tracker.airPolicy = policy
        _ = tracker.follow(document, now: .now)
        for reading in readings {
            _ = tracker.ingest(
                topic: "sensorhub/sds011/A160/state", payload: Array(reading.json.utf8), retained: false,
                time: reading.time, now: .now)
        }
        _ = tracker.ingest(topic: "door", payload: Array("open".utf8), retained: false, time: .now, now: .now)
        let history = try History(directory: directory.path)
        try await history.record(
            readings: readings.map { RecordedReading(sensor: "air quality", reading: .particulate($0)) },
            events: [
                SensorEvent(
                    id: SensorEvent.randomID(), kind: .changed, sensor: "front door", topic: "front door",
                    oldStatus: "Waiting", newStatus: "open",
                    time: .now)
            ])
        hub.withLock {
            $0.take(tracker, statuses: true)
            $0.counters.messages = 3
        }

        try await withClient { client in
            try await client.execute(uri: "/api/v1/air", method: .get) {
                let air = try #require((try decode($0.body) as? [[String: Any]])?.first)
                #expect(
                    air["pm25"] as? Double == 27.4 && air["aqi"] as? Int == 85
                        && air["category"] as? String == "Moderate")
                #expect(
                    air["colour"] as? String == "yellow" && air["alert"] as? Bool == true
                        && air["light"] as? String == "red")
            }
            try await client.execute(uri: "/api/v1/alert", method: .get) {
                let alert = try #require(try decode($0.body) as? [String: Any])
                #expect(alert["alert"] as? Bool == true && alert["pollutant"] as? String == "PM2.5")
                #expect(alert["value"] as? Double == 27.4 && alert["time"] as? String == readings[1].time.iso8601)
            }
            try await client.execute(uri: "/api/v1/air/history?period=day&since=2d", method: .get) {
                let rows = try #require(try decode($0.body) as? [[String: Any]])
                #expect(rows.last?["readings"] as? Int == 2)
                #expect((rows.last?["pm25"] as? [String: Any])?["max"] as? Double == 27.4)
            }
            try await client.execute(uri: "/api/v1/air/history?period=fortnight", method: .get) {
                #expect($0.status == .badRequest && error($0.body) == "period is hour, day, week or month")
            }
            try await client.execute(uri: "/api/v1/air/history?sensor=front%20door", method: .get) {
                #expect($0.status == .badRequest)
            }
            try await client.execute(uri: "/api/v1/events?since=1h", method: .get) {
                let events = try #require(try decode($0.body) as? [[String: Any]])
                #expect(events.map { $0["to"] as? String } == ["open"])
            }
            try await client.execute(uri: "/api/v1/events?since=yesterday", method: .get) {
                #expect($0.status == .badRequest)
            }
            // Not connected to the broker: not healthy (it said 200 "ok", issue 52).
            try await client.execute(uri: "/healthz", method: .get) {
                let object = try decode($0.body) as? [String: Any]
                #expect($0.status == .serviceUnavailable)
                #expect(object?["connected"] as? Bool == false && object?["status"] as? String == "disconnected")
            }
            hub.withLock { $0.connection.connected = true }
            try await client.execute(uri: "/healthz", method: .get) {
                let object = try decode($0.body) as? [String: Any]
                #expect($0.status == .ok && object?["status"] as? String == "ok")
            }
            hub.withLock { $0.connection.connected = false }
            // The SDS011 reader's counts (SDS011HubTests makes real ones through a noisy pseudo-terminal).
            hub.withLock {
                $0.counters.sds011 = .init()
                $0.counters.sds011?.discardedBytes = 19
                $0.counters.sds011?.badChecksums = 1
                $0.counters.journal = .init()
                $0.counters.journal?.records = 5
                $0.counters.journal?.longestWait = 0.0042
                $0.counters.journal?.unacknowledged = ["store": 1200, "router": 0]
                $0.counters.storeWrites = 2
            }
            try await client.execute(uri: "/metrics", method: .get) {
                let text = String(buffer: $0.body)
                #expect(text.contains("sensorhub_sds011_skipped_bytes_total 19"))
                #expect(text.contains("sensorhub_sds011_bad_checksums_total 1"))
                #expect(text.contains("sensorhub_messages_total 3"))
                #expect(text.contains("sensorhub_journal_records_total 5"))
                #expect(text.contains("sensorhub_journal_longest_wait_seconds 0.0042"))
                #expect(text.contains("sensorhub_journal_unacknowledged{consumer=\"store\"} 1200"))
                #expect(text.contains("sensorhub_journal_unacknowledged{consumer=\"router\"} 0"))
                #expect(text.contains("sensorhub_store_writes_total 2"))
                #expect(text.contains("sensorhub_sensors 2"))
                #expect(text.contains("sensorhub_pm25_ugm3{sensor=\"air quality\"} 27.4"))
            }
            try await client.execute(uri: "/", method: .get) {
                let html = String(buffer: $0.body)
                #expect($0.headers[.contentType] == "text/html; charset=utf-8")
                #expect(html.contains("<div id=\"sensors\"") && html.contains("<script src=\"/dashboard/app.js\" defer>"))
                #expect(html.contains("AQI 85 · Moderate") && html.contains("class=\"card yellow\""))
            }
            try await client.execute(uri: "/dashboard/chart.svg?pollutant=pm25&period=hour", method: .get) {
                let svg = String(buffer: $0.body)
                #expect(svg.hasPrefix("<svg") && svg.contains("<polyline class=\"series\""))
                #expect(svg.contains("WHO 24 h guideline 15"))
            }
        }
    }

    /// The OpenAPI document lists exactly the router's endpoints, and each one answers.
    @Test func openAPIDocumentMatchesTheRoutes() async throws {
        let document = try #require(try Yams.load(yaml: OpenAPIDocument.yaml) as? [String: Any])
        let paths = try #require(document["paths"] as? [String: Any])
        var documented = Set<String>()
        var open = Set<String>()
        for (path, item) in paths {
            for (method, operation) in (item as? [String: Any]) ?? [:] where method != "parameters" {
                documented.insert("\(method.uppercased()) \(path)")
                if ((operation as? [String: Any])?["security"] as? [Any])?.isEmpty == true {
                    open.insert("\(method.uppercased()) \(path)")
                }
            }
        }
        #expect(documented == Set(HubAPI.routes.map { "\($0.0) \($0.1)" }))
        // The operations the document says need no identity are the route table's public ones.
        let everyone = HubAPI.table.filter { if case .everyone = $0.access { true } else { false } }
        #expect(open == Set(everyone.map { "\($0.method) \($0.path)" }))
        try await withClient { client in
            try await client.execute(uri: "/api/v1/openapi.yaml", method: .get) {
                #expect(String(buffer: $0.body) == OpenAPIDocument.yaml)
            }
            for (method, path) in HubAPI.routes {
                let uri = path.replacingOccurrences(of: "{name}", with: "nobody").replacingOccurrences(
                    of: "{id}", with: "00")
                try await client.execute(uri: uri, method: method, body: ByteBuffer(string: "{}")) { response in
                    let unrouted =
                        response.status == .notFound && error(response.body)?.hasPrefix("no such endpoint") == true
                    #expect(!unrouted && response.status != .methodNotAllowed, "\(method) \(path): \(response.status)")
                }
            }
        }
    }
}

extension HubAPITests {
    /// A static file answers with its ETag, and 304 with no body to a browser that has that version.
    @Test func staticFilesAnswer304ToTheirETag() async throws {
        try await withClient { client in
            var tag = ""
            try await client.execute(uri: "/dashboard/dygraph.js", method: .get) {
                #expect($0.status == .ok && $0.body.readableBytes > 100_000)
                tag = $0.headers[.eTag] ?? ""
            }
            #expect(tag.hasPrefix("\"") && tag.count == 26)
            try await client.execute(uri: "/dashboard/dygraph.js", method: .get, headers: [.ifNoneMatch: tag]) {
                #expect($0.status == .notModified && $0.body.readableBytes == 0)
            }
            try await client.execute(
                uri: "/dashboard/dygraph.js", method: .get, headers: [.ifNoneMatch: "\"0123\""]
            ) { #expect($0.status == .ok) }
        }
    }

    /// `/api/v1/stream` says `change` at once (the page draws itself), then at each change, and ends after its
    /// lifetime (a second here; an hour in hubd), which the browser's EventSource follows with a new one.
    @Test func theStreamSaysChangeAndEnds() async throws {
        try await withClient { client in
            try await client.execute(uri: "/api/v1/stream", method: .get) {
                #expect($0.status == .ok)
                #expect($0.headers[.contentType] == "text/event-stream; charset=utf-8")
                #expect(String(buffer: $0.body) == "retry: 3000\nevent: change\ndata: {}\n\n")
            }
        }
    }

    /// A silence that matches no sensor is taken, with a warning in the answer (issue 52); one that can't mean
    /// anything is refused naming why.
    @Test func silencesSayWhenTheyMatchNothing() async throws {
        try await withClient { client in
            try await client.execute(
                uri: "/api/v1/sensors", method: .post, body: ByteBuffer(string: #"{"name":"front door"}"#)
            ) { #expect($0.status == .created) }
            let end = Timestamp.now.adding(milliseconds: 3_600_000).iso8601
            try await client.execute(
                uri: "/api/v1/silences", method: .post,
                body: ByteBuffer(string: #"{"matchers":["garage*"],"endsAt":"\#(end)"}"#)
            ) {
                #expect($0.status == .created)
                let answer = try #require(try decode($0.body) as? [String: Any])
                #expect((answer["warning"] as? String)?.hasPrefix("no sensor matches sensor=garage* now") == true)
            }
            try await client.execute(
                uri: "/api/v1/silences", method: .post,
                body: ByteBuffer(string: #"{"matchers":["front*"],"endsAt":"\#(end)"}"#)
            ) {
                #expect($0.status == .created)
                let answer = try decode($0.body) as? [String: Any]
                #expect(answer?["warning"] == nil)
            }
            try await client.execute(
                uri: "/api/v1/silences", method: .post,
                body: ByteBuffer(string: #"{"matchers":["sensor=~door.*"],"endsAt":"\#(end)"}"#)
            ) {
                #expect($0.status == .badRequest)
                #expect(error($0.body)?.contains("regular expressions (=~, !~) are not supported") == true)
            }
        }
    }
}

extension HubAPITests {
    /// The dashboard's doors (issue 53), and what each says to bad input.
    @Test func theDashboardsDoorsAndTheirMistakes() async throws {
        try await withClient { client in
            for body in [#"{"name":"front door"}"#, #"{"name":"back door"}"#] {
                try await client.execute(uri: "/api/v1/sensors", method: .post, body: ByteBuffer(string: body)) {
                    #expect($0.status == .created)
                }
            }
            // A preset: Zigbee2MQTT's topic, map and availability, as hubctl's --preset makes them.
            try await client.execute(
                uri: "/api/v1/sensors", method: .post,
                body: ByteBuffer(string: #"{"name":"garage","preset":"zigbee2mqtt","value":"contact"}"#)
            ) {
                #expect($0.status == .created)
                let sensor = try #require(try decode($0.body) as? [String: Any])
                #expect(sensor["topic"] as? String == "zigbee2mqtt/garage")
            }
            #expect(try store.read().sensor(named: "garage")?.availability == "zigbee2mqtt/garage/availability")
            for (body, message) in [
                (#"{"name":"x","preset":"zwave"}"#, #""preset" is one of: zigbee2mqtt, tasmota, esphome, shelly"#),
                (#"{"name":"x","device":"y"}"#, #""device" goes with "preset""#),
            ] {
                try await client.execute(uri: "/api/v1/sensors", method: .post, body: ByteBuffer(string: body)) {
                    #expect($0.status == .badRequest && error($0.body) == message, "\(body): \(error($0.body) ?? "-")")
                }
            }
            // Renaming: the topic stays; a taken name is a conflict; an unknown sensor 404.
            try await client.execute(
                uri: "/api/v1/sensors/garage", method: .patch, body: ByteBuffer(string: #"{"name":"garage door"}"#)
            ) {
                #expect($0.status == .ok)
                let renamed = try decode($0.body) as? [String: Any]
                #expect(renamed?["topic"] as? String == "zigbee2mqtt/garage")
            }
            try await client.execute(
                uri: "/api/v1/sensors/garage%20door", method: .patch, body: ByteBuffer(string: #"{"name":"front door"}"#)
            ) { #expect($0.status == .conflict) }
            try await client.execute(
                uri: "/api/v1/sensors/nobody", method: .patch, body: ByteBuffer(string: #"{"name":"x"}"#)
            ) { #expect($0.status == .notFound) }
            try await client.execute(
                uri: "/api/v1/sensors/front%20door", method: .patch, body: ByteBuffer(string: #"{"topic":"x"}"#)
            ) { #expect($0.status == .badRequest && error($0.body)?.hasPrefix("unknown field \"topic\"") == true) }

            // The list's looks: no rule, so nothing is red; waiting until a first message.
            try await client.execute(uri: "/api/v1/sensors", method: .get) {
                let list = try #require(try decode($0.body) as? [[String: Any]])
                #expect(list.map { $0["look"] as? String } == ["waiting", "waiting", "waiting"])
            }
            // A silence's preview: what it holds, and a warning when nothing.
            try await client.execute(uri: "/api/v1/silences/preview?matcher=*door", method: .get) {
                let answer = try #require(try decode($0.body) as? [String: Any])
                #expect(answer["sensors"] as? [String] == ["back door", "front door", "garage door"])
                #expect(answer["alerts"] as? [String] == [] && answer["warning"] == nil)
            }
            try await client.execute(uri: "/api/v1/silences/preview?matcher=cellar&matcher=kind=offline", method: .get) {
                let answer = try #require(try decode($0.body) as? [String: Any])
                #expect((answer["warning"] as? String)?.hasPrefix("no sensor matches sensor=cellar kind=offline") == true)
            }
            try await client.execute(uri: "/api/v1/silences/preview", method: .get) {
                #expect($0.status == .badRequest && error($0.body)?.hasPrefix("give one matcher or more") == true)
            }
            try await client.execute(uri: "/api/v1/silences/preview?matcher=door%5B", method: .get) {
                #expect($0.status == .badRequest)
            }
            // Snoozing: a length with its unit, from 1 min to 7 days, of a firing alert.
            for (body, status, message) in [
                (#"{"for":"10"}"#, HTTPResponse.Status.badRequest, #""for" is a duration with its unit, like 30m, 1h or 1d"#),
                (#"{"for":"30s"}"#, .badRequest, #""for" is from 1m to 7d (a longer pause is a silence)"#),
                (#"{"for":"8d"}"#, .badRequest, #""for" is from 1m to 7d (a longer pause is a silence)"#),
                (#"{"for":"1h"}"#, .notFound, "no firing alert 'doors/front door/status'"),
            ] {
                try await client.execute(
                    uri: "/api/v1/alerts/doors%2Ffront%20door%2Fstatus/snooze", method: .post,
                    body: ByteBuffer(string: body)
                ) {
                    #expect($0.status == status && error($0.body) == message, "\(body): \(error($0.body) ?? "-")")
                }
            }
            // Events: the kinds known, a limit, CSV.
            try await client.execute(uri: "/api/v1/events?kind=changed,nonsense", method: .get) {
                #expect($0.status == .badRequest && error($0.body)?.hasPrefix("kind 'nonsense' is not one of: ") == true)
            }
            try await client.execute(uri: "/api/v1/events?limit=0", method: .get) {
                #expect($0.status == .badRequest && error($0.body) == "limit is a count of events from 1 to 10000")
            }
            try await client.execute(uri: "/api/v1/events?format=xml", method: .get) {
                #expect($0.status == .badRequest && error($0.body) == "format is json or csv")
            }
            // The backends: none here; a test through one that does not exist.
            try await client.execute(uri: "/api/v1/notifiers", method: .get) { #expect(String(buffer: $0.body) == "[]") }
            try await client.execute(uri: "/api/v1/notifiers/phone/test", method: .post, body: ByteBuffer(string: "{}")) {
                #expect($0.status == .serviceUnavailable)
            }
        }
    }
}
