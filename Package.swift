// swift-tools-version:6.2
import PackageDescription

let package = Package(
    name: "SensorHub",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "hubd", targets: ["hubd"]),
        .executable(name: "hubctl", targets: ["hubctl"]),
        .library(name: "Mosquitto", targets: ["Mosquitto"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-configuration", from: "1.4.0", traits: [.defaults, "YAML"]),
        .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
    ],
    targets: [
        // libmosquitto through pkg-config (Debian: libmosquitto-dev).
        .systemLibrary(
            name: "CMosquitto",
            pkgConfig: "libmosquitto",
            providers: [.apt(["libmosquitto-dev"])]
        ),
        // The Swift wrapper: async operations tied to broker acknowledgements, messages as an AsyncSequence.
        .target(
            name: "Mosquitto",
            dependencies: [
                "CMosquitto",
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // What the agent and the command line share: the registry, its defaults store, the state directory.
        .target(
            name: "HubCore",
            dependencies: [
                "Mosquitto",
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        // The running agent: services, wiring, and the `hubd` command.
        .target(
            name: "HubAgent",
            dependencies: [
                "HubCore",
                "Mosquitto",
                .product(name: "HeapModule", package: "swift-collections"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ]
        ),
        // The `hubctl` commands.
        .target(
            name: "HubCLI",
            dependencies: [
                "HubCore",
                "Mosquitto",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(name: "hubd", dependencies: ["HubAgent"]),
        .executableTarget(name: "hubctl", dependencies: ["HubCLI"]),
        // A small client on the wrapper, used by tests (a client that dies) and by the receive benchmark.
        .executableTarget(
            name: "mosquitto-probe",
            dependencies: [
                "Mosquitto",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/MosquittoProbe"
        ),
        // Test helpers: a real mosquitto broker on a free loopback port, certificates, password files.
        .target(
            name: "HubTestKit",
            dependencies: [
                "Mosquitto",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/HubTestKit"
        ),
        .testTarget(
            name: "MosquittoTests",
            dependencies: ["Mosquitto", "HubTestKit", "mosquitto-probe"]
        ),
        .testTarget(
            name: "HubCoreTests",
            dependencies: ["HubCore", "HubTestKit"]
        ),
        .testTarget(
            name: "HubAgentTests",
            dependencies: ["HubAgent", "HubCore"]
        ),
        .testTarget(
            name: "HubToolsTests",
            dependencies: [
                "HubCore", "HubTestKit", "Mosquitto", "hubd", "hubctl",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
    ]
)
