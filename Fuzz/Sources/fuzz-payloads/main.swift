import HubCore

/// Arbitrary bytes as an MQTT payload, a device's JSON, a value path or map, a status, a name, a time, a registry
/// file and a TEMIS UV-index page. Checks: no crash; a reading is always in range and survives its own JSON; a
/// device's value is finite and safe to show, its attributes bounded; a registry that decodes encodes and decodes to
/// itself; a TEMIS page read has plausible days, each at a finite solar noon.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: count))
    let now = Timestamp(millisecondsSince1970: 1_800_000_000_000)
    if let reading = ParticulateReading.parse(bytes, receivedAt: now) {
        for value in [reading.pm25, reading.pm10].compactMap({ $0 }) {
            precondition(value.isFinite && (0...10_000).contains(value))
        }
        let again = ParticulateReading.parse(Array(reading.json.utf8), receivedAt: now)
        precondition(again != nil, "the hub's own JSON does not parse: \(reading.json)")
    }
    let text = String(decoding: bytes, as: UTF8.self)
    fuzzDevices(text)
    _ = try? SensorRules.name(text)
    _ = try? SensorRules.topic(text)
    _ = Timestamp(iso8601: text)
    _ = DurationText.parse(text)
    fuzzTEMIS(bytes, text)
    if let document = try? DefaultsDocument.decode(bytes) {
        let encoded = document.encode()
        let decoded = try? DefaultsDocument.decode(encoded)
        precondition(decoded?.sensors.map(\.name) == document.sensors.map(\.name), "registry round trip changed")
    }
    // The bytes as the registry's status log, over a registry whose sensors it may name.
    var registry = DefaultsDocument()
    _ = try? registry.addSensor(named: "door")
    if (try? registry.replayStatusLog(bytes)) != nil {
        precondition(registry.sensors.map(\.name) == ["door"], "a status log changed the sensors")
    }
    return 0
}

/// The bytes as a TEMIS page for a place in each hemisphere, and the text as a date.
func fuzzTEMIS(_ bytes: [UInt8], _ text: String) {
    for place in [GeoPoint(latitude: 52.1, longitude: 5.18)!, GeoPoint(latitude: -77.85, longitude: 166.67)!] {
        guard let page = try? TEMISPage(html: bytes, place: place) else { continue }
        precondition(!page.days.isEmpty)
        for day in page.days {
            precondition(TEMISPage.plausibleIndex.contains(day.uvIndex.value), "\(day.uvIndex)")
            precondition(UVIndex.plausibleOzone.contains(day.ozone), "\(day.ozone)")
            precondition(day.solarNoon.timeIntervalSince1970.isFinite)
        }
    }
    if let day = CalendarDay(text) { precondition(CalendarDay(day.description) == day) }
}

/// The same text as a payload of devices read three ways, and as a value path and a value map.
func fuzzDevices(_ text: String) {
    _ = try? ValuePath(text)
    _ = try? ValueMap(text)
    let formats = [
        (ValueFormat(path: try? ValuePath("contact"), map: try? ValueMap("true=closed,false=open")), false),
        (ValueFormat(path: try? ValuePath("*.Temperature"), range: -40...80), true),
        (ValueFormat(path: try? ValuePath("/a/0"), decimals: 1), true),
        (ValueFormat(), true),
    ]
    for (format, numeric) in formats {
        guard case .success(let decoded) = format.decode(text, numeric: numeric) else { continue }
        if numeric {
            let number = decoded.number!
            precondition(number.isFinite && abs(number) <= ValueFormat.largestNumber, "\(number)")
        }
        precondition(!decoded.status.unicodeScalars.contains { $0.value < 0x20 && $0 != "\t" }, decoded.status)
        precondition(decoded.attributes.count <= ValueFormat.maximumAttributes)
        for attribute in decoded.attributes {
            precondition(!attribute.name.unicodeScalars.contains { $0.value < 0x20 }, attribute.name)
        }
    }
}

// SwiftPM links an executable's entry point as `<module>_main`; hand it to libFuzzer's driver.
@_silgen_name("LLVMFuzzerRunDriver")
func runDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> CInt
) -> CInt

@_cdecl("fuzz_payloads_main")
public func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var argc = argc
    var argv = argv
    return runDriver(&argc, &argv, fuzz)
}
