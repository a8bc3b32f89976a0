import SDS011

/// Feeds arbitrary bytes to the SDS011 decoder in chunks the first byte chooses. Checks: no crash, and every
/// frame it reports is one whose exact 10 bytes are in the input with a valid checksum (it invents nothing).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: count))
    guard let first = bytes.first else { return 0 }
    let chunk = Int(first % 16) + 1
    var decoder = SDS011Decoder()
    var frames: [SDS011Frame] = []
    var index = 1
    while index < bytes.count {
        frames += decoder.feed(bytes[index..<min(index + chunk, bytes.count)])
        index += chunk
    }
    let input = bytes.dropFirst()
    for frame in frames {
        let encoded = frame.encode()
        precondition(encoded.count == 10 && encoded.first == 0xAA && encoded.last == 0xAB)
        let found = input.indices.contains { start in
            start + 10 <= input.endIndex && Array(input[start..<start + 10]) == encoded
        }
        precondition(found, "decoded a frame that is not in the input: \(encoded)")
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

@_cdecl("fuzz_sds011_main")
public func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var argc = argc
    var argv = argv
    return runDriver(&argc, &argv, fuzz)
}
