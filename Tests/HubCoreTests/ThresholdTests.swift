import HubCore
import Testing

/// The one threshold mechanism: a crossing alerts once, the value back past the hysteresis clears once, a held
/// breach waits for its time, and the least interval between alerts holds; the configuration's `thresholds:`.
@Suite struct ThresholdTests {
    @Test func aCrossingAlertsOnceAndClearsOnlyPastTheHysteresis() {
        var watch = ThresholdWatch(limit: ThresholdLimit(above: 30, hysteresis: 1))
        let values: [Double] = [25, 31, 33, 30.5, 29.5, 28.9, 29.5, 31, 32]
        let crossings = values.enumerated().compactMap { index, value in watch.observe(value, at: Int64(index) * 1000) }
        #expect(crossings == [.raised(31), .cleared(28.9), .raised(31)])
        #expect(watch.alerting)
    }

    @Test func belowAndOutsideARange() {
        var low = ThresholdWatch(limit: ThresholdLimit(below: 15, hysteresis: 5))
        #expect(low.observe(16, at: 0) == nil)
        #expect(low.observe(14, at: 1) == .raised(14))
        #expect(low.observe(19, at: 2) == nil)
        #expect(low.observe(21, at: 3) == .cleared(21))
        var range = ThresholdWatch(limit: ThresholdLimit(above: 30, below: 18))
        #expect(range.observe(17, at: 0) == .raised(17))
        #expect(range.observe(31, at: 1) == nil)  // still outside: no second alert
        #expect(range.observe(20, at: 2) == .cleared(20))
        #expect(ThresholdLimit(above: 30, below: 18).describe { "\($0)" } == "outside 18.0 to 30.0")
    }

    @Test func aHeldBreachAlertsWhenItsTimeHasComeEvenWithoutANewValue() {
        var watch = ThresholdWatch(limit: ThresholdLimit(above: 30, holdFor: .seconds(300)))
        #expect(watch.observe(31, at: 0) == nil)
        #expect(watch.isPending)
        #expect(watch.tick(at: 299_000) == nil)
        #expect(watch.tick(at: 300_000) == .raised(31))
        #expect(!watch.isPending && watch.alerting)
        // A breach that does not hold starts over.
        var brief = ThresholdWatch(limit: ThresholdLimit(above: 30, holdFor: .seconds(300)))
        _ = brief.observe(31, at: 0)
        #expect(brief.observe(29, at: 100_000) == nil)
        #expect(!brief.isPending)
        #expect(brief.observe(32, at: 200_000) == nil)
        #expect(brief.tick(at: 400_000) == nil)
        #expect(brief.tick(at: 500_000) == .raised(32))
    }

    @Test func theLeastIntervalDelaysTheNextAlertUntilItIsOver() {
        var watch = ThresholdWatch(limit: ThresholdLimit(above: 10, minimumInterval: .seconds(60)))
        #expect(watch.observe(11, at: 0) == .raised(11))
        #expect(watch.observe(9, at: 1000) == .cleared(9))
        #expect(watch.observe(12, at: 2000) == nil)  // within the interval: waits
        #expect(watch.tick(at: 59_000) == nil)
        #expect(watch.tick(at: 60_000) == .raised(12))
    }

    @Test func rulesAreReadFromTheConfigurationAndCheckedWithClearErrors() throws {
        let yaml = """
            thresholds:
              - name: greenhouse too hot
                sensors: [green*]
                above: 30
                hysteresis: 1
                for: 5m
              - attribute: battery
                below: 15
            """
        let configuration = try HubConfiguration.read(try ConfigNode.parse(yaml, environment: [:]))
        #expect(configuration.thresholds.count == 2)
        let hot = configuration.thresholds[0]
        #expect(hot.limit == ThresholdLimit(above: 30, hysteresis: 1, holdFor: .seconds(300)))
        #expect(hot.applies(to: "Greenhouse") && !hot.applies(to: "cellar"))
        #expect(configuration.thresholds[1].name == "battery below 15")
        #expect(configuration.thresholds[1].applies(to: "anything"))
        func error(_ yaml: String) -> String {
            do {
                _ = try HubConfiguration.read(try ConfigNode.parse(yaml, environment: [:]))
                return ""
            } catch {
                return "\(error)"
            }
        }
        #expect(error("thresholds:\n  - name: x\n    hysteresis: 1\n").contains("needs above: or below:"))
        #expect(error("thresholds:\n  - above: 10\n    below: 20\n").contains("below: must be lower than above:"))
        #expect(error("thresholds:\n  - above: 10\n  - above: 10\n").contains("another threshold has this name"))
        #expect(error("thresholds:\n  - above: 10\n    for: soon\n").contains("thresholds[0].for"))
    }

    @Test func messagesSayWhatCrossedWithTheUnit() {
        let rule = ThresholdRule(name: "hot", limit: ThresholdLimit(above: 30, holdFor: .seconds(300)))
        let format = ValueFormat(unit: "°C")
        #expect(rule.message(.raised(31.24), format: format) == "hot: 31.24 °C is above 30 for 5m")
        #expect(rule.message(.cleared(28), format: format) == "hot: 28 °C is back from above 30")
        let battery = ThresholdRule(name: "low", attribute: "battery", limit: ThresholdLimit(below: 15))
        #expect(battery.message(.raised(12), format: format) == "low: battery 12% is below 15")
    }
}
