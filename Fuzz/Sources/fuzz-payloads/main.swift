import HubCore

/// Arbitrary bytes as an MQTT payload, a status, a name, a time and a registry file. Checks: no crash; a
/// reading is always in range and survives its own JSON; a registry that decodes encodes and decodes to itself.
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
    _ = try? SensorRules.name(text)
    _ = try? SensorRules.topic(text)
    _ = Timestamp(iso8601: text)
    _ = DurationText.parse(text)
    if let document = try? DefaultsDocument.decode(bytes) {
        let encoded = document.encode()
        let decoded = try? DefaultsDocument.decode(encoded)
        precondition(decoded?.sensors.map(\.name) == document.sensors.map(\.name), "registry round trip changed")
    }
    return 0
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
