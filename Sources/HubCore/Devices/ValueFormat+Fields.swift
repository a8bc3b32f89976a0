import HubSupport

/// A device field given as text that can't be used: which one, and why.
public struct DeviceFieldError: Error, Sendable, Hashable, CustomStringConvertible {
    /// `value`, `map`, `unit`, `decimals`, `range` or `bands`.
    public var field: String
    public var reason: String
    /// Escaped: the text quoted in it came from a person or a file, and may hold anything.
    public var description: String { UnsafeText.escaped("\(field) \(reason)") }
}

extension ValueFormat {
    /// A format from its fields as people write them — `hubctl sensors add` options, an import file's columns, the
    /// API's members — each checked the same way.
    /// - Parameter knownDefaults: fill in the known field's map, unit and range where not given (adding a sensor);
    ///   not when restoring one exactly as it was exported.
    public static func fields(
        value: String?, map: String?, unit: String?, decimals: String?, range: String?, bands: String?,
        knownDefaults: Bool
    ) throws(DeviceFieldError) -> ValueFormat {
        var format = ValueFormat()
        if let value {
            do {
                format.path = try ValuePath(value)
            } catch {
                throw DeviceFieldError(field: "value", reason: "\(error)")
            }
        }
        if knownDefaults, let known = format.path.flatMap(KnownField.field(at:)) {
            format = known.format(path: format.path)
        }
        if let map {
            do {
                format.map = map.isEmpty ? nil : try ValueMap(map)
            } catch {
                throw DeviceFieldError(field: "map", reason: "\(error)")
            }
        }
        if let unit { format.unit = unit.isEmpty ? nil : unit }
        if let decimals {
            // "1" from a CSV cell or an option, 1.0 from a JSON number.
            guard let number = Double(decimals), number == number.rounded(), (0...6).contains(number) else {
                throw DeviceFieldError(field: "decimals", reason: "'\(decimals)' is not a whole number from 0 to 6")
            }
            format.decimals = Int(number)
        }
        if let range {
            guard let bounds = Self.range(range) else {
                throw DeviceFieldError(field: "range", reason: "'\(range)' is not low..high, like -40..85")
            }
            format.range = bounds
        }
        if let bands {
            // Empty: none (`--bands ''` clears them).
            do {
                format.bands = bands.isEmpty ? nil : try ValueBands(bands)
            } catch {
                throw DeviceFieldError(field: "bands", reason: "\(error)")
            }
        }
        return format
    }
}
