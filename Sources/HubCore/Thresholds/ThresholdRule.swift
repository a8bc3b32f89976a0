import HubSupport

/// One entry of `thresholds:` in hubd.yaml: a limit on the value (or an attribute) of the sensors it names. It
/// alerts once per crossing and clears once when the value is back (`ThresholdWatch`).
///
/// ```yaml
/// thresholds:
///   - name: greenhouse too hot
///     sensors: ["greenhouse*"]
///     above: 30
///     hysteresis: 1
///     for: 5m
///   - name: battery low
///     attribute: battery
///     below: 15
///     hysteresis: 5
/// ```
public struct ThresholdRule: Sendable, Hashable {
    public var name: String
    /// Sensor names or globs, matched regardless of case; every sensor when empty.
    public var sensors: [String]
    /// The attribute watched (`battery`, `AM2301.Humidity`); `nil`: the sensor's value.
    public var attribute: String?
    public var limit: ThresholdLimit

    public init(name: String, sensors: [String] = [], attribute: String? = nil, limit: ThresholdLimit) {
        self.name = name
        self.sensors = sensors
        self.attribute = attribute
        self.limit = limit
    }

    /// Whether the rule watches the sensor called `name`.
    public func applies(to name: String) -> Bool {
        glob(anyOf: sensors, name)
    }

    /// The value the rule watches: the sensor's number, or its attribute's (true counts as 1, false as 0).
    public func value(number: Double?, attributes: SensorAttributes) -> Double? {
        guard let attribute else { return number }
        switch attributes[attribute] {
        case .number(let value)?: return value
        case .bool(let flag)?: return flag ? 1 : 0
        case .string(let text)?: return Double(text)
        case nil: return nil
        }
    }

    /// What an event says of a crossing: "greenhouse too hot: 31.2 °C is above 30".
    public func message(_ crossing: ThresholdWatch.Crossing, format: ValueFormat) -> String {
        // An attribute's unit is its known field's, by the last key of its name (`AM2301.Humidity`: %).
        let unit =
            attribute == nil
            ? format.unit : attribute.flatMap { try? ValuePath($0) }.flatMap(KnownField.field(at:))?.unit
        let shown = ValueFormat(unit: unit, decimals: format.decimals)
        let what = attribute.map { "\($0) " } ?? ""
        switch crossing {
        case .raised(let value):
            let held = limit.holdFor.map { " for \(DurationText.format($0))" } ?? ""
            return "\(name): \(what)\(shown.withUnit(shown.format(value))) is \(limit.describe(shown.format))\(held)"
        case .cleared(let value):
            return "\(name): \(what)\(shown.withUnit(shown.format(value))) is back from \(limit.describe(shown.format))"
        }
    }

    /// Reads `thresholds:`; names are unique, each rule has `above` or `below`.
    public static func read(_ node: ConfigNode) throws(ConfigurationError) -> [ThresholdRule] {
        var rules: [ThresholdRule] = []
        for item in try node.list() {
            try item.allow(keys)
            var limit = ThresholdLimit()
            limit.above = try item["above"].number(in: -1e12...1e12)
            limit.below = try item["below"].number(in: -1e12...1e12)
            guard limit.above != nil || limit.below != nil else {
                throw item.invalid("a threshold needs above: or below: (or both)")
            }
            if let high = limit.above, let low = limit.below, low >= high {
                throw item["below"].invalidValue("\(low)", "below: must be lower than above: (\(high))")
            }
            limit.hysteresis = try item["hysteresis"].number(in: 0...1e12) ?? 0
            limit.holdFor = try item["for"].duration(in: .zero...(.seconds(7 * 86_400)))
            limit.minimumInterval = try item["min_interval"].duration(in: .zero...(.seconds(7 * 86_400)))
            let attribute = try item["attribute"].string().flatMap { $0.isEmpty ? nil : $0 }
            let sensors = try item["sensors"].strings() ?? []
            let generated = "\(attribute ?? "value") \(limit.describe(ValueFormat().format))"
            let name = try item["name"].string().flatMap { $0.isEmpty ? nil : $0 } ?? generated
            if let problem = UnsafeText.problem(in: name) { throw item["name"].invalidValue(name, "it " + problem) }
            if name == AirQualityPolicy.alertName {
                throw item["name"].invalidValue(name, "the particulate sensors' own alert (air.alert) has this name")
            }
            if rules.contains(where: { $0.name == name }) {
                throw item["name"].invalidValue(name, "another threshold has this name")
            }
            rules.append(ThresholdRule(name: name, sensors: sensors, attribute: attribute, limit: limit))
        }
        return rules
    }
}
