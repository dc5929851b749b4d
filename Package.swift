// swift-tools-version: 6.2
import PackageDescription

/// Warnings are errors in every target of the project.
let strict: [SwiftSetting] = [.treatAllWarnings(as: .error)]

/// The pure core and its tests are compiled optimised in debug builds too: the core's random-session tests run several
/// thousand sequences through it on every test run, four times faster so (decision 0060). Everything else keeps
/// `-Onone` for the debugger.
let optimizedInDebug: [SwiftSetting] = [.unsafeFlags(["-O"], .when(configuration: .debug))]

/// The example apps: each is a real app on the SDK, installed as a bundle with the `Info.plist` beside its source
/// (and, for some, resources: the player's playlist).
let exampleApps = [
    "FiniteTask", "NeverEndingTask", "HangingBackground", "ExitsOnSuspend", "NewsApp", "RefreshApp", "ProcessingApp", "Player",
    "Phone", "Tracker", "Scanner", "Alarm", "Messenger", "Downloader", "Exporter",
    "Newsstand", "FeedSync", "PhotoViewer",
]

/// Folders an example ships in its bundle beside the executable (not compiled).
let exampleResources = ["Player": ["Playlist"]]

/// Libraries an example links besides the SDK (the downloader and the newsstand print their files' SHA-256).
let exampleDependencies: [String: [Target.Dependency]] = [
    "Downloader": [.product(name: "Crypto", package: "swift-crypto")],
    "Newsstand": [.product(name: "Crypto", package: "swift-crypto")],
]

let package = Package(
    name: "Offstage",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Offstage", targets: ["Offstage"]),
        .library(name: "OffstageCore", targets: ["OffstageCore"]),
        .library(name: "OffstageProtocol", targets: ["OffstageProtocol"]),
        .library(name: "OffstageDaemon", targets: ["OffstageDaemon"]),
        .library(name: "OffstageSimulator", targets: ["OffstageSimulator"]),
        // For app developers' test targets: their app's real code on the real core, on virtual time (SPEC KIT).
        .library(name: "OffstageTesting", targets: ["OffstageTesting"]),
        .executable(name: "offstaged", targets: ["offstaged"]),
        .executable(name: "offstage", targets: ["offstage"]),
        // The C wrappers, for the benchmarks package (its accessory benchmark opens a pseudo-terminal with them).
        .library(name: "COffstageSystem", targets: ["COffstageSystem"]),
        // The push gateway and its provider client, for the benchmarks package (its push benchmarks send as an app server).
        .library(name: "OffstagePush", targets: ["OffstagePush"]),
        // The multi-device push gateway on PostgreSQL, and its program (SPEC NT-5).
        .library(name: "OffstagePushService", targets: ["OffstagePushService"]),
        .executable(name: "offstage-push", targets: ["offstage-push"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        // The daemon's counters and histograms, and their Prometheus text format (daemon and offstaged only).
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        // Seeded random generators for the core's model-based tests (test target only).
        .package(url: "https://github.com/x-sheep/swift-property-based.git", from: "2.0.1"),
        // The push gateway: HTTP/2 (h2c on loopback, TLS with ALPN h2), ES256 provider tokens, Web Push's ECDH and
        // AES-GCM (OffstagePush, and what links it).
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.8.0"),
        // The multi-device gateway's store: PostgreSQL, pooled, with LISTEN/NOTIFY (OffstagePushService only).
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        // The transfer engine's HTTP client: background downloads and uploads, streamed (OffstageDaemon only).
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
    ],
    targets: [
        // The pure core: no I/O, no clock.
        .target(name: "OffstageCore", swiftSettings: strict + optimizedInDebug),
        // Wire types, Varlink framing and the blocking client shared by the SDK and the CLI.
        .target(name: "OffstageProtocol", dependencies: ["OffstageCore"], swiftSettings: strict),
        // How a shell answers the apps' calls that only ask or tell the core: shared by the daemon and the test kit, so
        // that an app under test is answered as the daemon answers it.
        .target(name: "OffstageHost", dependencies: ["OffstageCore", "OffstageProtocol", "OffstagePush"], swiftSettings: strict),
        // The push gateway (SPEC NT-3): the APNs-compatible provider API and the Web Push front door over HTTP/2, its
        // rules, and a provider client (the CLI's `push`). Storage is a port: SQLite in the daemon, PostgreSQL in
        // `offstage-push`.
        .target(
            name: "OffstagePush",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        // The multi-device push gateway (SPEC NT-5): the ports of OffstagePush on PostgreSQL for many devices and nodes,
        // and the node that serves them.
        .target(
            name: "OffstagePushService",
            dependencies: [
                "OffstagePush",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "offstage-push",
            dependencies: [
                "OffstagePushService", "OffstagePush",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: strict
        ),
        // C wrappers for what the Glibc module does not import (prctl, pidfd, fork+exec into a cgroup, wait status).
        .target(name: "COffstageSystem"),
        // The real shell.
        .target(
            name: "OffstageDaemon",
            dependencies: [
                "OffstageCore", "OffstageProtocol", "OffstageHost", "COffstageSystem", "OffstagePush",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                // To tell a certificate the transfer engine cannot trust from a connection that failed.
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "offstaged",
            dependencies: [
                "OffstageDaemon",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        // The SDK an app imports (it uses the core's geodesy for Location.distance(from:), the same the daemon uses).
        .target(name: "Offstage", dependencies: ["OffstageCore", "OffstageProtocol", "COffstageSystem"], swiftSettings: strict),
        // The command line (it sends pushes through the gateway's provider API as an app server would: OffstagePush).
        .executableTarget(
            name: "offstage",
            dependencies: [
                "OffstageProtocol", "OffstagePush",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strict
        ),
        // The core on virtual time and a virtual device.
        .target(name: "OffstageSimulator", dependencies: ["OffstageCore"], swiftSettings: strict),
        // The test kit: an app's real delegate and handlers, through the SDK, against the simulator's core in the
        // test's own process.
        .target(
            name: "OffstageTesting",
            dependencies: ["Offstage", "OffstageCore", "OffstageProtocol", "OffstageHost", "OffstageSimulator", "OffstagePush"],
            swiftSettings: strict),

        // The committed fuzz inputs, replayed by the test targets of the parsers they were found for.
        .target(name: "FuzzInputs", path: "Tests/FuzzInputs", swiftSettings: strict),
        // The acceptance scenarios written once, run on the test kit and on the real daemon (KIT-4).
        .target(name: "SharedScenarios", path: "Tests/SharedScenarios", swiftSettings: strict),
        .testTarget(
            name: "OffstageCoreTests",
            dependencies: [
                // COffstageSystem only for the heap figure of the notification memory tests.
                "OffstageCore", "OffstageSimulator", "FuzzInputs", "COffstageSystem",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            swiftSettings: strict + optimizedInDebug
        ),
        .testTarget(
            name: "OffstagePushTests",
            dependencies: [
                "OffstagePush", "FuzzInputs",
                // NIOCore and NIOPosix: a TLS client speaking HTTP/1.1 with ALPN, for the Web Push front door.
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
            ],
            swiftSettings: strict
        ),
        // The PostgreSQL gateway against a real PostgreSQL the tests start, and the real `offstage-push`.
        .testTarget(
            name: "OffstagePushServiceTests",
            dependencies: [
                "OffstagePushService", "OffstagePush", "offstage-push", "TestProcesses",
                // PostgresNIO: a test holds a row lock as another node's pull would.
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            swiftSettings: strict
        ),
        .testTarget(name: "OffstageSimulatorTests", dependencies: ["OffstageSimulator"], swiftSettings: strict),
        // The answers every shell gives apps' calls, fed the calls' own wire text.
        .testTarget(name: "OffstageHostTests", dependencies: ["OffstageHost", "OffstageCore", "OffstageProtocol"], swiftSettings: strict),
        // The test kit, used as an app developer uses it: only the SDK and the kit.
        // COffstageSystem: a pseudo-terminal standing in for a serial accessory.
        .testTarget(name: "OffstageTestingTests", dependencies: ["Offstage", "OffstageTesting", "COffstageSystem"], swiftSettings: strict),
        // The examples' own tests, as their developers would write them with the kit.
        .testTarget(name: "RefreshAppTests", dependencies: ["RefreshApp", "Offstage", "OffstageTesting"], swiftSettings: strict),
        .testTarget(name: "AlarmTests", dependencies: ["Alarm", "Offstage", "OffstageTesting"], swiftSettings: strict),
        .testTarget(name: "MessengerTests", dependencies: ["Messenger", "Offstage", "OffstageTesting"], swiftSettings: strict),
        .testTarget(name: "DownloaderTests", dependencies: ["Downloader", "Offstage", "OffstageTesting"], swiftSettings: strict),
        .testTarget(name: "PlayerTests", dependencies: ["Player", "Offstage", "OffstageTesting"], swiftSettings: strict),
        .testTarget(name: "TrackerTests", dependencies: ["Tracker", "Offstage", "OffstageTesting"], swiftSettings: strict),
        // The shared scenarios on the test kit, with the example apps' real delegates.
        .testTarget(
            name: "KitScenarioTests",
            dependencies: [
                "SharedScenarios", "Offstage", "OffstageTesting", "FiniteTask", "ExitsOnSuspend", "NewsApp", "RefreshApp",
                "ProcessingApp",
            ],
            swiftSettings: strict),
        // Processes tests start and end by pid: any helper (gpsfake, a signalling server), a private PulseAudio, a
        // private session bus with the test notification server, a private nginx and the transfer fault server; the
        // Python ones run with python3 from their place in the source tree (found by #filePath).
        .target(
            name: "TestProcesses", path: "Tests/TestProcesses",
            exclude: [
                "notification_server.py", "apns_client.py", "webpush_client.py", "transfer_fault_server.py", "network_manager.py",
            ],
            swiftSettings: strict),
        .testTarget(
            name: "OffstageTests", dependencies: ["Offstage", "COffstageSystem", "TestProcesses"], swiftSettings: strict),
        .testTarget(
            name: "OffstageProtocolTests", dependencies: ["OffstageProtocol", "OffstageCore", "FuzzInputs"],
            swiftSettings: strict),
        .testTarget(
            name: "OffstageDaemonTests",
            dependencies: [
                "OffstageDaemon", "OffstageHost", "COffstageSystem", "TestProcesses", "OffstagePush",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                // The transfer engine's TLS tests trust the certificate they made.
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: strict
        ),
        // Real daemon, real app processes, the real CLI: these tests run the built binaries.
        .testTarget(
            name: "IntegrationTests",
            dependencies: [
                "OffstageProtocol", "OffstageDaemon", "OffstagePush", "offstaged", "offstage", "offstage-push", "CrashHarness",
                "TestProcesses", "SharedScenarios",
                // The transfer test's SHA-256 of the served and the downloaded file.
                .product(name: "Crypto", package: "swift-crypto"),
            ]
                + (exampleApps + ["PhoneServer", "ScannerDevice"]).map { .target(name: $0) },
            swiftSettings: strict
        ),
        // Kills a real daemon at random moments and checks what survives (a short run is part of the tests).
        .executableTarget(
            name: "CrashHarness",
            dependencies: ["OffstageCore", "OffstageProtocol", "OffstageDaemon", "OffstageSimulator", "OffstagePush", "TestProcesses"],
            path: "Tests/CrashHarness",
            swiftSettings: strict
        ),
        // The Phone example's signalling server (not an app: it has no manifest).
        .executableTarget(name: "PhoneServer", path: "Examples/PhoneServer", swiftSettings: strict),
        // The Scanner example's stand-in barcode scanner: a pseudo-terminal behind a link (not an app either).
        .executableTarget(
            name: "ScannerDevice", dependencies: ["COffstageSystem"], path: "Examples/ScannerDevice", swiftSettings: strict),
    ] + exampleApps.map { name in
        .executableTarget(
            name: name,
            dependencies: ["Offstage"] + (exampleDependencies[name] ?? []),
            path: "Examples/\(name)",
            exclude: ["Info.plist"] + (exampleResources[name] ?? []),
            swiftSettings: strict
        )
    }
)
