import Foundation
import HubCore
import HubHistory
import HubTestKit
import Testing

@Suite struct AirQualityTests {
    /// The EPA's worked examples and the breakpoints' edges (2024 PM2.5 table).
    @Test func aqiMatchesTheWorkedExamplesAndBreakpoints() {
        #expect(AQI.index(.pm25, 123.6) == 199)
        #expect(AQI.index(.pm10, 261.8) == 154)
        #expect(AQI.index(.pm25, 0) == 0)
        #expect(AQI.index(.pm25, 9.0) == 50)
        #expect(AQI.index(.pm25, 9.1) == 51)
        #expect(AQI.index(.pm25, 9.09) == 50)  // truncated to 9.0 first
        #expect(AQI.index(.pm25, 35.4) == 100)
        #expect(AQI.index(.pm25, 55.5) == 151)
        #expect(AQI.index(.pm25, 325.4) == 500)
        #expect(AQI.index(.pm25, 900) == 500)
        #expect(AQI.index(.pm10, 54.9) == 50)  // truncated to 54
        #expect(AQI.index(.pm10, 604) == 500)
        #expect(AQI.category(199).name == "Unhealthy" && AQI.category(199).colour == "red")
        #expect(AQI.category(154).name == "Unhealthy" && AQI.category(101).name == "Unhealthy for Sensitive Groups")
        #expect(AQI.index(pm25: 123.6, pm10: 261.8) == 199)
        #expect(AirLight(pm25: 4.9, pm10: 14.9) == .yellow)
        #expect(AirLight(pm25: 5, pm10: 0) == .red)
        #expect(AirLight(pm25: 2.9, pm10: 9.9) == .green)
    }

    /// Found by the fuzzer: a duration too large for Int64 milliseconds trapped.
    @Test func hugeDurationsAreRefusedNotACrash() {
        #expect(DurationText.parse(String(repeating: "2", count: 42) + "+") == nil)
        #expect(DurationText.parse("99999999999999999999s") == nil)
        #expect(DurationText.parse("1e400s") == nil)
        #expect(DurationText.parse("300y") == nil)
        #expect(DurationText.parse("365d") == .seconds(365 * 86_400))
    }

    @Test func readsTheHubTasmotaAndESPHomePayloads() {
        let now = Timestamp(iso8601: "2026-11-22T10:00:00Z")!
        let hub = ParticulateReading.parse(
            Array(#"{"pm25":12.3,"pm10":20.1,"time":"2026-11-22T09:59:00Z","id":"A160"}"#.utf8), receivedAt: now)
        #expect(
            hub
                == ParticulateReading(
                    pm25: 12.3, pm10: 20.1, time: Timestamp(iso8601: "2026-11-22T09:59:00Z")!, device: "A160"))
        let tasmota = ParticulateReading.parse(
            Array(#"{"Time":"2026-11-22T10:00:00","SDS0X1":{"PM2.5":7.5,"PM10":11}}"#.utf8), receivedAt: now)
        #expect(tasmota?.pm25 == 7.5 && tasmota?.pm10 == 11)
        #expect(ParticulateReading.parse(Array(" 42.5\n".utf8), receivedAt: now)?.pm25 == 42.5)
        // Clean air: 0 and 1 are numbers, not booleans (the fuzzer found them rejected).
        for clean in [
            #"{"pm25":0,"pm10":1}"#, #"{"pm25":1.0,"time":"2027-01-15T08:00:00.000Z"}"#,
            #"{"SDS0X1":{"PM2.5":0,"PM10":0}}"#,
        ] {
            #expect(ParticulateReading.parse(Array(clean.utf8), receivedAt: now) != nil, "\(clean)")
        }
        for bad in ["open", "-3", "nan", "1e9", #"{"pm25":"x"}"#, #"{"a":1}"#, "[1,2]", #"{"pm25":true}"#, ""] {
            #expect(ParticulateReading.parse(Array(bad.utf8), receivedAt: now) == nil, "\(bad)")
        }
        #expect(ParticulateReading.parse([0xFF, 0xFE], receivedAt: now) == nil)
        #expect(hub?.json == #"{"pm25":12.3,"pm10":20.1,"time":"2026-11-22T09:59:00.000Z","id":"A160"}"#)
        // A device id with quotes, backslashes and a NUL (the fuzzer's find) is escaped, so the hub's own JSON reads
        // back as the same reading.
        let odd = ParticulateReading(pm25: 1, pm10: 2, time: now, device: "A1\"6\\\u{0}")
        #expect(ParticulateReading.parse(Array(odd.json.utf8), receivedAt: now)?.device == odd.device)
    }

    /// Above the threshold once: one alert; still above: nothing; below the hysteresis: cleared; above again
    /// within the minimum interval: held until it is over.
    @Test func alertsOncePerCrossingWithHysteresisAndMinimumInterval() {
        var policy = AirQualityPolicy()
        policy.metric = AirQualityPolicy.Metric(.pm25, window: nil)
        policy.threshold = 15
        policy.hysteresis = 0.1
        policy.minimumInterval = .seconds(1200)
        var monitor = AirQualityMonitor(policy: policy)
        var minute: Int64 = 0
        func reading(_ pm25: Double) -> ParticulateReading {
            minute += 1
            return ParticulateReading(pm25: pm25, pm10: 10, time: Timestamp(millisecondsSince1970: minute * 60_000))
        }
        #expect(monitor.add(reading(10)) == nil)
        let alert = monitor.add(reading(27.4))
        #expect(alert?.raised == true)
        #expect(alert?.message == "PM2.5 27.4 µg/m³ is above the WHO annual interim target 3 of 15")
        #expect(monitor.add(reading(30)) == nil)
        #expect(monitor.add(reading(14)) == nil)  // within the hysteresis band
        #expect(monitor.add(reading(13.4))?.raised == false)
        #expect(monitor.add(reading(20)) == nil)  // 5 minutes after the last alert
        for _ in 0..<15 { #expect(monitor.add(reading(20)) == nil) }  // up to 19 minutes after the last alert
        #expect(monitor.add(reading(20))?.raised == true)  // 20 minutes after it
    }

    @Test func defaultAlertWatchesTheWHOGuidelineOnThe24HourMean() {
        var monitor = AirQualityMonitor(policy: AirQualityPolicy())
        var alerts: [AirQualityMonitor.Alert] = []
        for hour in 0..<24 {
            let value = hour < 12 ? 10.0 : 44.8  // the mean passes 15 after a few hours of 44.8
            if let alert = monitor.add(
                ParticulateReading(
                    pm25: value, pm10: 5, time: Timestamp(millisecondsSince1970: Int64(hour) * 3_600_000)))
            {
                alerts.append(alert)
            }
        }
        #expect(alerts.count == 1)
        #expect(alerts.first?.message.hasSuffix("µg/m³ (24 h mean) is above the WHO guideline of 15") == true)
        #expect(monitor.mean(.pm25, over: .seconds(86_400))! > 15)
        #expect(monitor.level(ParticulateReading(pm25: 44.8, pm10: 5, time: .now)) == "Unhealthy for Sensitive Groups")
    }

    /// The running 24 h sums and the 1 h scan agree with a plain mean of the readings in the window, through
    /// days of readings coming and going at uneven gaps, some without a PM10.
    @Test func runningMeansMatchAPlainMean() throws {
        var monitor = AirQualityMonitor(policy: AirQualityPolicy())
        let seed = UInt64.random(in: 0...UInt64.max)
        var generator = SplitMix64(seed: seed)
        var added: [(time: Int64, pm25: Double, pm10: Double?)] = []
        var time: Int64 = 0
        for _ in 0..<5_000 {
            time += Int64.random(in: 1...120_000, using: &generator)
            let pm25 = Double(Int.random(in: 0...5_000, using: &generator)) / 10
            let pm10 = Bool.random(using: &generator) ? Double(Int.random(in: 0...9_999, using: &generator)) / 10 : nil
            _ = monitor.add(ParticulateReading(pm25: pm25, pm10: pm10, time: Timestamp(millisecondsSince1970: time)))
            added.append((time, pm25, pm10))
        }
        for (window, milliseconds) in [(Duration.seconds(86_400), Int64(86_400_000)), (.seconds(3600), 3_600_000)] {
            let kept = added.filter { $0.time > time - milliseconds }
            let pm25 = kept.map(\.pm25).reduce(0, +) / Double(kept.count)
            let pm10s = kept.compactMap(\.pm10)
            let pm10 = pm10s.reduce(0, +) / Double(pm10s.count)
            #expect(abs(try #require(monitor.mean(.pm25, over: window)) - pm25) < 1e-9, "\(window), seed \(seed)")
            #expect(abs(try #require(monitor.mean(.pm10, over: window)) - pm10) < 1e-9, "\(window), seed \(seed)")
        }
    }

    @Test func historyKeepsAggregatesAndPrunes() async throws {
        let directory = try TemporaryDirectory()
        let history = try History(directory: directory.path)
        let base = Timestamp(iso8601: "2026-11-02T00:00:00Z")!.millisecondsSince1970  // a Monday
        var readings: [RecordedReading] = []
        for hour in 0..<48 {
            for minute in [0, 30] {
                let time = Timestamp(millisecondsSince1970: base + Int64(hour * 3_600_000 + minute * 60_000))
                readings.append(RecordedReading(sensor: "air", reading: .particulate(ParticulateReading(pm25: Double(hour), pm10: Double(minute), time: time))))
            }
        }
        try await history.record(
            readings: readings,
            events: [
                SensorEvent(
                    id: SensorEvent.randomID(), kind: .changed, sensor: "door", topic: "home/door", oldStatus: "closed",
                    newStatus: "open",
                    time: .now)
            ])
        let reader = try History(directory: directory.path, create: false)
        #expect(try reader.readings(of: "air", since: Timestamp(millisecondsSince1970: base)).count == 96)
        let hours = try reader.aggregates(of: "air", since: Timestamp(millisecondsSince1970: base), per: .hour)
        #expect(hours.count == 48 && hours[1].count == 2 && hours[1].pm10?.mean == 15)
        let days = try reader.aggregates(of: "air", since: Timestamp(millisecondsSince1970: base), per: .day)
        #expect(days.count == 2)
        #expect(days[0].pm25?.min == 0 && days[0].pm25?.max == 23 && days[0].pm25?.mean == 11.5)
        #expect(days[1].start.iso8601 == "2026-11-03T00:00:00.000Z")
        let weeks = try reader.aggregates(of: "air", since: Timestamp(millisecondsSince1970: base), per: .week)
        #expect(weeks.count == 1 && weeks[0].start.iso8601 == "2026-11-02T00:00:00.000Z")
        let months = try reader.aggregates(of: "air", since: Timestamp(millisecondsSince1970: 0), per: .month)
        #expect(months.count == 1 && months[0].start.iso8601 == "2026-11-01T00:00:00.000Z" && months[0].count == 96)
        let events = try reader.events(of: "door", since: Timestamp(millisecondsSince1970: 0))
        #expect(events.map(\.newStatus) == ["open"] && events.map(\.topic) == ["home/door"])
        #expect(events.map(\.kind) == [.changed])
        let removed = try await history.prune(before: Timestamp(millisecondsSince1970: base + 86_400_000))
        #expect(removed == 48)
        #expect(try reader.readings(of: "air", since: Timestamp(millisecondsSince1970: 0)).count == 48)
    }
}
