// swift-tools-version:6.2
// libFuzzer targets for SensorHub's parsers of untrusted input. Built only by `make fuzz` (a fuzzer executable
// has no main of its own: libFuzzer provides it), with -sanitize=fuzzer,address.
import PackageDescription

let package = Package(
    name: "SensorHubFuzz",
    platforms: [.macOS(.v15)],
    dependencies: [.package(name: "SensorHub", path: "..")],
    targets: [
        // The SDS011 frame decoder: bytes from a serial line.
        .executableTarget(
            name: "fuzz-sds011",
            dependencies: [.product(name: "SDS011", package: "SensorHub")],
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]
        ),
        // What arrives over MQTT: particulate readings, statuses, and the registry file the hub reads.
        .executableTarget(
            name: "fuzz-payloads",
            dependencies: [.product(name: "HubCore", package: "SensorHub")],
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]
        ),
    ]
)
