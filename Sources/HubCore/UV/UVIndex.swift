import Foundation
import HubSupport

/// The clear-sky UV index from the Sun's zenith angle and the total ozone column.
///
/// Madronich's analytic formula: UVI ≈ 12.5 · μ₀^2.42 · (Ω/300)^−1.23, with μ₀ the cosine of the solar zenith angle
/// and Ω the ozone column in Dobson units (S. Madronich, "Analytic formula for the clear-sky UV index",
/// Photochemistry and Photobiology 83:1537–1538, 2007). It fits radiative-transfer results for a cloudless,
/// unpolluted sky over a dark surface at sea level to within about ±10 % for zenith angles below 70°; at larger angles
/// it drifts further, but the index is small there.
///
/// The UV index is 40 m²/W times the erythemally weighted irradiance: one unit is 25 mW/m² (WHO, *Global Solar UV
/// Index: A Practical Guide*, 2002).
public struct UVIndex: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The climatological ozone column used when none is known: 300 DU, the reference column of Madronich's fit (the
    /// global mean is about 290–300 DU; it ranges about 220–500 by season and latitude).
    public static let climatologicalOzone = 300.0
    /// The ozone columns accepted, in DU: the lowest seen in the Antarctic ozone hole is near 90, the highest about 600.
    public static let plausibleOzone = 50.0...700.0
    /// Erythemally weighted irradiance of one UV-index unit, W/m².
    public static let wattsPerSquareMetre = 0.025
    /// WHO's rule of thumb for height: the UV index rises by about 10 % for each 1,000 m (WHO, *Global Solar UV
    /// Index: A Practical Guide*, 2002, "Altitude").
    public static let altitudeGainPerKilometre = 0.10

    /// The index, unrounded; never negative.
    public let value: Double

    public init(_ value: Double) {
        self.value = value.isFinite ? max(0, value) : 0
    }

    /// Madronich's clear-sky index for a geometric zenith angle (degrees) and ozone column (DU); 0 with the Sun at or
    /// below the horizon. With `altitude` (metres above sea level) WHO's +10 % a kilometre is applied; 0 (sea level,
    /// off) by default. Below sea level nothing is taken off.
    public static func clearSky(zenith: Double, ozone: Double = climatologicalOzone, altitude: Double = 0) -> UVIndex {
        guard zenith.isFinite, ozone.isFinite, ozone > 0, zenith < 90 else { return UVIndex(0) }
        let mu = Angle.cos(zenith)
        let sea = 12.5 * pow(mu, 2.42) * pow(ozone / 300, -1.23)
        return UVIndex(sea * (1 + altitudeGainPerKilometre * max(0, altitude) / 1000))
    }

    /// The index as WHO reports it: a whole number, rounded half up (2.5 is 3), which is what the band is read from.
    /// WHO's guide gives the index as whole numbers (its bands are 0–2, 3–5, …) without naming the rounding; half up
    /// is the usual arithmetic rounding and the one national services (e.g. the US EPA) state.
    public var rounded: Int { Int((value + 0.5).rounded(.down)) }

    /// The WHO exposure category of the rounded index.
    public var band: UVBand { UVBand(unrounded: value) }

    /// The erythemally weighted irradiance, W/m².
    public var irradiance: Double { value * Self.wattsPerSquareMetre }

    /// Minutes at this index until an erythemally weighted dose (J/m²) is received: dose / (UVI · 0.025 W/m² · 60 s);
    /// `nil` when the index is 0 (never).
    public func minutes(toDose joulesPerSquareMetre: Double) -> Double? {
        guard irradiance > 0 else { return nil }
        return joulesPerSquareMetre / (irradiance * 60)
    }

    /// Minutes until a person of the skin type gets sunburnt (one MED), unprotected: see `SkinType.minimalErythemalDose`.
    public func minutesToErythema(_ skin: SkinType) -> Double? { minutes(toDose: skin.minimalErythemalDose) }

    /// Minutes for the standard vitamin D dose with `exposedFraction` of the body bare (see `VitaminD`).
    public func minutesForVitaminD(_ skin: SkinType, exposedFraction: Double = VitaminD.defaultExposedFraction)
        -> Double?
    {
        minutes(toDose: VitaminD.erythemalDose(skin, exposedFraction: exposedFraction))
    }

    /// One decimal, as TEMIS gives it.
    public var description: String { FixedDecimal.text(value, places: 1) }

    public static func < (lhs: UVIndex, rhs: UVIndex) -> Bool { lhs.value < rhs.value }
}

/// WHO's UV index exposure categories (WHO, *Global Solar UV Index: A Practical Guide*, 2002).
public enum UVBand: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case low = "Low"
    case moderate = "Moderate"
    case high = "High"
    case veryHigh = "Very High"
    case extreme = "Extreme"

    /// 0–2 Low, 3–5 Moderate, 6–7 High, 8–10 Very High, 11 and above Extreme: read from `ValueBands.whoUV`, the one
    /// table (a whole number is in the band its unrounded bounds put it in).
    public init(_ rounded: Int) {
        self.init(unrounded: Double(rounded))
    }

    /// The band of an unrounded index: `ValueBands.whoUV`'s bounds are those of the index rounded half up.
    public init(unrounded value: Double) {
        self = UVBand(rawValue: ValueBands.whoUV.name(for: value)) ?? .extreme
    }

    public var description: String { rawValue }
}

/// Fitzpatrick's sun-reactive skin types (T. B. Fitzpatrick, "The validity and practicality of sun-reactive skin
/// types I through VI", Archives of Dermatology 124:869–871, 1988).
public enum SkinType: Int, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case i = 1, ii, iii, iv, v, vi

    /// The minimal erythemal dose, erythemally weighted J/m²: 200, 250, 300, 450, 600 and 1,000 for types I–VI
    /// (2, 2.5, 3, 4.5, 6 and 10 SED, 1 SED = 100 J/m²): one table, the widely reprinted one for Fitzpatrick's six
    /// types, as Bentham Instruments' application guide "Erythemal dose and skin exposure to UV" gives it (in SED,
    /// with the CIE erythemal action spectrum, CIE S 007/E-1998) and a CMAJ Open article's Table 1 "Minimal erythemal
    /// dose (MED) for different skin types using the Fitzpatrick scale" (in J/m²). COST-713's *UV-Index for the
    /// Public* uses DIN 5050's four types instead. Measured MEDs vary widely within a type: a guide, not a threshold.
    public var minimalErythemalDose: Double {
        switch self {
        case .i: 200
        case .ii: 250
        case .iii: 300
        case .iv: 450
        case .v: 600
        case .vi: 1000
        }
    }

    /// "I" … "VI".
    public var description: String { ["I", "II", "III", "IV", "V", "VI"][rawValue - 1] }
}

/// The sun exposure for a standard vitamin D dose, in the simplest form of Webb and Engelsen's model.
///
/// Webb and Engelsen ("Calculated ultraviolet exposure levels for a healthy vitamin D status", Photochemistry and
/// Photobiology 82:1697–1703, 2006) define the standard dose as 1,000 IU of vitamin D, made by exposing a quarter of
/// the body (face, hands and arms) to a quarter of the skin type's MED (Holick's rule of thumb). Here that is taken as
/// it stands: the dose is MED/4 erythemally weighted, scaled by 0.25 / the fraction of skin exposed.
///
/// What this assumes, honestly: the dose scales linearly with bare area; and the vitamin-D-effective and erythemal
/// irradiances keep the ratio they have in the sunlight the rule was made for. Webb and Engelsen compute the
/// vitamin-D-weighted irradiance itself with a radiative transfer model; at large zenith angles (winter, morning,
/// evening, high latitude) UVB falls faster than erythemal UV, so the true time is longer than this one — and in
/// mid-latitude winter the skin may make next to no vitamin D at all. A rough guide, not advice.
public enum VitaminD {
    /// Face, hands and arms: about a quarter of the body's skin.
    public static let defaultExposedFraction = 0.25
    /// The standard dose, IU.
    public static let standardDose = 1000.0

    /// The erythemally weighted dose (J/m²) that makes the standard dose with `exposedFraction` (0…1] of the skin bare.
    public static func erythemalDose(_ skin: SkinType, exposedFraction: Double = defaultExposedFraction) -> Double {
        let fraction = exposedFraction.isFinite ? min(1, max(0.01, exposedFraction)) : defaultExposedFraction
        return skin.minimalErythemalDose / 4 * (defaultExposedFraction / fraction)
    }
}

extension SolarDay {
    /// The day's clear-sky maximum: the UV index at solar noon (Madronich's formula; see `UVIndex.clearSky`).
    public func maximumUVIndex(ozone: Double = UVIndex.climatologicalOzone, altitude: Double = 0) -> UVIndex {
        UVIndex.clearSky(zenith: noonPosition.zenith, ozone: ozone, altitude: altitude)
    }
}
