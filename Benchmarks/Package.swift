// swift-tools-version: 6.1
import PackageDescription

/// Warnings are errors in the benchmarks' own targets, as in the main package.
let strict: [SwiftSetting] = [.unsafeFlags(["-warnings-as-errors"])]

/// The Offstage benchmarks: a package of their own, so the main package's build and tests never compile the
/// benchmark harness. Run from the repository root with `swift package --package-path Benchmarks benchmark`.
let package = Package(
    name: "OffstageBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
        .package(name: "Offstage", path: ".."),
        // The daemon's own event loops, for the notification benchmark's bare-timer baseline (the same version the
        // main package resolves).
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        // HTTP/2 for the push benchmarks' bare server (the same version the main package resolves).
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
    ],
    targets: [
        // Clock, percentiles, plain Unix sockets and the report formats shared by the probe and the benchmarks.
        .target(name: "OffstageBenchKit", swiftSettings: strict),
        // The app the benchmarks install: a real app on the Offstage SDK.
        .executableTarget(
            name: "OffstageBenchProbe",
            dependencies: [
                "OffstageBenchKit",
                .product(name: "Offstage", package: "Offstage"),
                .product(name: "OffstageProtocol", package: "Offstage"),
            ],
            swiftSettings: strict
        ),
        // The policy benchmark: the scheduling policies side by side on real and synthetic usage traces, through the
        // simulator (no timing: run it with `swift run -c release --package-path Benchmarks PolicyBenchmark`).
        .executableTarget(
            name: "PolicyBenchmark",
            dependencies: [
                .product(name: "OffstageCore", package: "Offstage"),
                .product(name: "OffstageSimulator", package: "Offstage"),
            ],
            swiftSettings: strict
        ),
        // The test kit under measurement, in a process of its own: the harness blocks its main thread while a benchmark
        // runs, and the kit's devices live on the main actor.
        .executableTarget(
            name: "OffstageKitProbe",
            dependencies: [
                .product(name: "Offstage", package: "Offstage"),
                .product(name: "OffstageTesting", package: "Offstage"),
            ],
            swiftSettings: strict
        ),
        // The baselines' other end: an echo server and a 1 Hz timer, with no SDK and no Foundation.
        .executableTarget(name: "OffstageBenchHelper", dependencies: ["OffstageBenchKit"], swiftSettings: strict),
        // The benchmarks. Depending on the daemon, the probe and the helper makes SwiftPM build them (in release,
        // as the benchmark plugin builds) next to the benchmark executable, where it finds them.
        .executableTarget(
            name: "OffstageBenchmarks",
            dependencies: [
                "OffstageBenchKit",
                "OffstageBenchProbe",
                "OffstageBenchHelper",
                "OffstageKitProbe",
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "offstaged", package: "Offstage"),
                // The CLI, which the scale benchmark times end to end (`offstage apps`).
                .product(name: "offstage", package: "Offstage"),
                // The multi-device gateway, whose nodes the push cluster benchmarks start over PostgreSQL.
                .product(name: "offstage-push", package: "Offstage"),
                .product(name: "OffstageProtocol", package: "Offstage"),
                .product(name: "OffstageCore", package: "Offstage"),
                // `offstage_open_pty`: the accessory benchmark's stand-in serial port.
                .product(name: "COffstageSystem", package: "Offstage"),
                // `scheduleTask` on an event loop: the timer the daemon arms for its next deadline, armed bare.
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                // The push benchmarks: an app server's provider client and keys, and a bare HTTP/2 server to compare.
                .product(name: "OffstagePush", package: "Offstage"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                // The transfer engine, reached through its benchmark entry (`@_spi(Benchmarks)`), timed against curl.
                .product(name: "OffstageDaemon", package: "Offstage"),
            ],
            path: "Benchmarks/OffstageBenchmarks",
            swiftSettings: strict,
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ]
)
