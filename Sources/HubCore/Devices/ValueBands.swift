import Foundation
import HubSupport

/// Named ranges of a numeric sensor's value (WHO's UV index bands, NEA's PSI bands): with bands, the sensor's status
/// is the name of the band its value is in, and each value is still a reading. `0=Low,3=Moderate,6=High`: each band
/// from its lower bound up to the next band's; a value below the first bound is in the first band.
public struct ValueBands: Sendable, Hashable, CustomStringConvertible {
    public struct Band: Sendable, Hashable {
        /// The lowest value in the band (the bound itself is in it).
        public var lower: Double
        public var name: String

        public init(lower: Double, name: String) {
            self.lower = lower
            self.name = name
        }
    }

    /// Why a text is not a list of bands: what is wrong, and where.
    public struct Problem: Error, Sendable, Hashable, CustomStringConvertible {
        public var reason: String
        public var description: String { UnsafeText.escaped(reason) }
    }

    /// More bands than this are refused: a scale people read has a handful.
    public static let maximumCount = 20
    /// A band's name is a status: short enough to read at a glance.
    public static let maximumNameLength = 64
    /// The attribute that keeps a banded sensor's number (its status is the band's name).
    public static let valueAttribute = "value"

    /// In ascending order of their lower bounds.
    public private(set) var bands: [Band]

    /// Parses `bound=name` pairs separated by commas, bounds strictly ascending.
    public init(_ text: String) throws(ValueBands.Problem) {
        var bands: [Band] = []
        for (index, pair) in text.split(separator: ",", omittingEmptySubsequences: false).enumerated() {
            let ordinal = "band \(index + 1)"
            guard let equals = pair.firstIndex(of: "=") else {
                throw Problem(reason: "\(ordinal) '\(pair)' is not 'lower=name', like 0=Low,3=Moderate")
            }
            let boundText = pair[..<equals].trimmingCharacters(in: .whitespaces)
            let name = pair[pair.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            guard let lower = Double(boundText), lower.isFinite, abs(lower) <= ValueFormat.largestNumber else {
                throw Problem(reason: "\(ordinal): '\(boundText)' is not a number")
            }
            guard !name.isEmpty else { throw Problem(reason: "\(ordinal) has no name after '='") }
            guard !name.contains("=") else { throw Problem(reason: "\(ordinal): the name '\(name)' contains '='") }
            guard name.count <= Self.maximumNameLength else {
                throw Problem(reason: "\(ordinal): the name is longer than \(Self.maximumNameLength) characters")
            }
            if let problem = UnsafeText.problem(in: name) { throw Problem(reason: "\(ordinal): the name \(problem)") }
            if let last = bands.last, lower <= last.lower {
                throw Problem(reason: "\(ordinal): \(Self.text(lower)) is not above \(Self.text(last.lower))")
            }
            if bands.contains(where: { $0.name == name }) {
                throw Problem(reason: "\(ordinal): '\(name)' names two bands")
            }
            bands.append(Band(lower: lower, name: name))
        }
        guard bands.count <= Self.maximumCount else {
            throw Problem(reason: "\(bands.count) bands, more than \(Self.maximumCount)")
        }
        self.bands = bands
    }

    /// Bands known to be valid (the built-in tables).
    init(checked bands: [Band]) { self.bands = bands }

    /// The name of the band `value` is in.
    public func name(for value: Double) -> String {
        bands.last { value >= $0.lower }?.name ?? bands[0].name
    }

    /// The band names, lowest first.
    public var names: [String] { bands.map(\.name) }

    public var description: String { bands.map { "\(Self.text($0.lower))=\($0.name)" }.joined(separator: ",") }

    /// A bound as written: `3`, `2.5` — exactly, so the text reads back to the same bands.
    static func text(_ value: Double) -> String {
        value.rounded() == value && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }
}

extension ValueBands {
    /// WHO's UV index exposure categories (WHO, *Global Solar UV Index: A Practical Guide*, 2002): 0–2 Low, 3–5
    /// Moderate, 6–7 High, 8–10 Very High, 11+ Extreme, of the index rounded to a whole number, half up (see
    /// `UVIndex.rounded`). On the value as reported, unrounded, that is bounds of 2.5, 5.5, 7.5 and 10.5: 2.49 rounds
    /// to 2 (Low), 2.5 to 3 (Moderate). The one table: `UVBand` reads its bands from it.
    public static let whoUV = ValueBands(checked: [
        Band(lower: 0, name: "Low"), Band(lower: 2.5, name: "Moderate"), Band(lower: 5.5, name: "High"),
        Band(lower: 7.5, name: "Very High"), Band(lower: 10.5, name: "Extreme"),
    ])

    /// Singapore NEA's Pollutant Standards Index bands: 0–50 Good, 51–100 Moderate, 101–200 Unhealthy, 201–300 Very
    /// Unhealthy, above 300 Hazardous. The PSI is a whole number; a fraction between two bands (50.5) is in the
    /// lower one.
    public static let psi = ValueBands(checked: [
        Band(lower: 0, name: "Good"), Band(lower: 51, name: "Moderate"), Band(lower: 101, name: "Unhealthy"),
        Band(lower: 201, name: "Very Unhealthy"), Band(lower: 301, name: "Hazardous"),
    ])

    /// The US EPA AQI categories, from `AQI.categories` (one table): each from the lowest index of its range.
    public static let usAQI = ValueBands(
        checked: AQI.categories.map { Band(lower: Double($0.range.lowerBound), name: $0.name) })
}
