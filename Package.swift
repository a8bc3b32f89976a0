// swift-tools-version:6.2
import PackageDescription

/// Every module of ours: an existential is written `any P`, so its cost shows where it is paid.
let strict: [SwiftSetting] = [.enableUpcomingFeature("ExistentialAny")]

let package = Package(
    name: "SensorHub",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "hubd", targets: ["hubd"]),
        .executable(name: "hubctl", targets: ["hubctl"]),
        .library(name: "Mosquitto", targets: ["Mosquitto"]),
        // For the libFuzzer package in Fuzz/.
        .library(name: "SDS011", targets: ["SDS011"]),
        .library(name: "HubCore", targets: ["HubCore"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-http2", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
    ],
    targets: [
        // libmosquitto through pkg-config (Debian: libmosquitto-dev).
        .systemLibrary(
            name: "CMosquitto",
            pkgConfig: "libmosquitto",
            providers: [.apt(["libmosquitto-dev"])]
        ),
        // libsodium through pkg-config (Debian: libsodium-dev): argon2id for household passwords, random bytes.
        .systemLibrary(name: "CSodium", pkgConfig: "libsodium", providers: [.apt(["libsodium-dev"])]),
        // Who may act on the hub: household accounts, API tokens, login sessions (`access.json`), the password hash,
        // the login throttle. Shared by hubd's HTTP server and hubctl's `users` and `tokens`.
        .target(
            name: "HubAccess",
            dependencies: [
                "CSodium", "HubCore", "HubSupport", .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strict
        ),
        // Small pieces every layer uses: a lock, throttled log lines, MQTT topic rules, waiting with a deadline.
        // No MQTT client, no I/O policy: what depends on it links no libmosquitto.
        .target(name: "HubSupport", swiftSettings: strict),
        // The Swift wrapper: async operations tied to broker acknowledgements, messages as an AsyncSequence.
        .target(
            name: "Mosquitto",
            dependencies: [
                "CMosquitto",
                "HubSupport",
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        // The SDS011 particulate sensor: its serial port (termios), its protocol, its commands.
        .target(name: "SDS011", swiftSettings: strict),
        // A simulated SDS011 on a pseudo-terminal, for tests and for trying the hub without the hardware.
        .target(name: "SDS011Simulator", dependencies: ["SDS011", "CPseudoTerminal", "HubSupport"]),
        .target(name: "CPseudoTerminal"),
        .executableTarget(
            name: "sds011-sim",
            dependencies: [
                "SDS011", "SDS011Simulator", .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "examples/sds011-sim"
        ),
        // What the agent and the command line share: the registry, its defaults store, the state directory, the
        // configuration, sensor events. No networking and no libmosquitto.
        .target(
            name: "HubCore",
            dependencies: [
                "HubSupport",
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "HeapModule", package: "swift-collections"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Yams", package: "Yams"),
            ],
            swiftSettings: strict
        ),
        // Notifications: rules, the durable outbox, per-backend queues with retries and rate limits, the backends.
        .target(
            name: "HubNotify",
            dependencies: [
                "HubCore",
                "HubSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        // History: readings (particulate and numeric sensors') and status events in SQLite, with aggregates and
        // retention.
        .target(
            name: "HubHistory",
            dependencies: ["HubCore", "HubSupport", .product(name: "GRDB", package: "GRDB.swift")],
            swiftSettings: strict
        ),
        // The remote store: readings, sessions and events through a durable queue into a PostgreSQL database that
        // several hubs can share (PostGIS when the server has it).
        .target(
            name: "HubRemote",
            dependencies: [
                "HubCore",
                "HubHistory",
                "HubNotify",
                "HubSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        // The registry's broker settings as the MQTT wrapper takes them: shared by hubd and hubctl.
        .target(name: "HubMQTT", dependencies: ["HubCore", "HubSupport", "Mosquitto"], swiftSettings: strict),
        // The running agent: services, wiring, and the `hubd` command.
        .target(
            name: "HubAgent",
            dependencies: [
                "HubAccess",
                "HubCore",
                "HubHistory",
                "HubMQTT",
                "HubNotify",
                "HubRemote",
                "HubSupport",
                "Mosquitto",
                "SDS011",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "HeapModule", package: "swift-collections"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        // The `hubctl` commands.
        .target(
            name: "HubCLI",
            dependencies: [
                "HubAccess",
                "HubCore",
                "HubHistory",
                "HubMQTT",
                "HubNotify",
                "HubRemote",
                "HubSupport",
                "SDS011",
                "Mosquitto",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        // hubd and hubctl in one executable, dispatching on the name it was run by: what the package installs.
        .executableTarget(name: "hubd", dependencies: ["HubAgent", "HubCLI"]),
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
        // An HTTP sink that counts requests, for the fan-out benchmark's webhooks.
        .executableTarget(
            name: "bench-sink",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: "Tests/BenchSink"
        ),
        // The route benchmark (bench/route.sh): A* beside a plain Dijkstra on a 1,000 × 1,000 grid and on a road
        // network of over 100,000 edges.
        .executableTarget(
            name: "route-bench", dependencies: ["HubCore"], path: "Tests/RouteBench", swiftSettings: strict),
        // The alert stage's benchmark (bench/alerts.sh): the router with and without alerting, and a 10,000-sensor storm.
        .executableTarget(
            name: "alert-bench",
            dependencies: ["HubCore", "HubNotify", "HubSupport", .product(name: "Logging", package: "swift-log")],
            path: "Tests/AlertBench"),
        // Test helpers: a real mosquitto broker on a free loopback port, certificates, password files.
        .target(
            name: "HubTestKit",
            dependencies: [
                "HubCore",
                "HubSupport",
                "Mosquitto",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            path: "Tests/HubTestKit"
        ),
        .testTarget(
            name: "MosquittoTests",
            dependencies: ["HubSupport", "Mosquitto", "HubTestKit", "mosquitto-probe"]
        ),
        .testTarget(name: "HubAccessTests", dependencies: ["HubAccess", "HubCore", "HubTestKit"]),
        .testTarget(
            name: "HubCoreTests",
            dependencies: ["HubCore", "HubHistory", "HubSupport", "HubTestKit"]
        ),
        // The history on real SQLite files in temporary directories, GRDB to write a database as an older hubd left it.
        .testTarget(
            name: "HubHistoryTests",
            dependencies: ["HubCore", "HubHistory", "HubTestKit", .product(name: "GRDB", package: "GRDB.swift")]
        ),
        .testTarget(
            name: "SDS011Tests",
            dependencies: ["SDS011", "SDS011Simulator"]
        ),
        .testTarget(
            name: "HubNotifyTests",
            dependencies: [
                "HubNotify", "HubCore", "HubSupport", "HubTestKit", "Mosquitto",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "HubAgentTests",
            dependencies: [
                "HubAgent", "HubCore", "HubHistory", "HubNotify", "HubSupport", "HubTestKit",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Yams", package: "Yams"),
            ]
        ),
        // The remote store against a real PostgreSQL 15 (with PostGIS when installed) started by the tests.
        .testTarget(
            name: "HubRemoteTests",
            dependencies: [
                "HubRemote", "HubCore", "HubHistory", "HubNotify", "HubSupport", "HubTestKit",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "HubToolsTests",
            dependencies: [
                "CPseudoTerminal", "HubAccess", "HubAgent", "HubCore", "HubHistory", "HubSupport", "HubTestKit",
                "Mosquitto", "SDS011Simulator", "hubd", "hubctl",
                "HubCLI", .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
    ]
)
