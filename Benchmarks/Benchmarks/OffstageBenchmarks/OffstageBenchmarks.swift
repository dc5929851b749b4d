import Benchmark

/// The Offstage benchmarks. Each runs once (it takes its own samples: thousands of calls, hundreds of lifecycle
/// cycles, a 60 s idle window), prints its figure next to a baseline measured in the same run, and records the
/// samples as custom metrics so the benchmark tool's table shows their percentiles too.
///
/// Run with `swift package --package-path Benchmarks benchmark` from the repository root (release build).
let benchmarks: @Sendable () -> Void = {
    func once(_ metrics: [BenchmarkMetric], seconds: Int) -> Benchmark.Configuration {
        Benchmark.Configuration(
            metrics: metrics,
            units: Dictionary(uniqueKeysWithValues: metrics.map { ($0, BenchmarkUnits.count) }),
            warmupIterations: 0,
            maxDuration: .seconds(seconds),
            maxIterations: 1)
    }

    Benchmark(
        "SDK call round trip",
        configuration: once(
            [Metrics.sdkBegin, Metrics.sdkEnd, Metrics.sdkPair, Metrics.bareBegin, Metrics.bareEnd, Metrics.barePair],
            seconds: 300)
    ) { benchmark in
        try SDKCallBenchmark.run(benchmark)
    }

    Benchmark(
        "Kit: a day of an app on virtual time, against the daemon",
        configuration: once([Metrics.kitLifecycle, Metrics.daemonLifecycle, Metrics.kitDay, Metrics.kitYear], seconds: 900)
    ) { benchmark in
        try KitBenchmark.run(benchmark)
    }

    Benchmark(
        "Lifecycle: home → frozen, open → active",
        configuration: once([Metrics.homeFrozen, Metrics.rawFreeze, Metrics.openActive, Metrics.rawThaw], seconds: 300)
    ) { benchmark in
        try LifecycleBenchmark.run(benchmark)
    }

    Benchmark(
        "VoIP: socket data → handler runs",
        configuration: once([Metrics.voipWake, Metrics.bareThawRead], seconds: 300)
    ) { benchmark in
        try VoIPWakeBenchmark.run(benchmark)
    }

    Benchmark(
        "Accessory: session data → handler runs",
        configuration: once([Metrics.accessoryWake, Metrics.accessoryBareThawRead], seconds: 300)
    ) { benchmark in
        try AccessoryWakeBenchmark.run(benchmark)
    }

    Benchmark(
        "Push: accepted → handler runs in a suspended app",
        configuration: once([Metrics.pushWake, Metrics.pushAccepted, Metrics.pushBareRoundTrip], seconds: 300)
    ) { benchmark in
        try PushWakeBenchmark.run(benchmark)
    }

    Benchmark(
        "Push: pushes/s accepted, one node",
        configuration: once(
            [Metrics.pushRate, Metrics.pushBareRate, Metrics.pushLoadLatency, Metrics.pushBareLoadLatency], seconds: 300)
    ) { benchmark in
        try PushThroughputBenchmark.run(benchmark)
    }

    Benchmark(
        "Gateway cluster: pushes/s accepted, three nodes over PostgreSQL",
        configuration: once(
            [
                Metrics.pushClusterRate, Metrics.pushClusterOneNodeRate, Metrics.pushClusterAsyncRate, Metrics.pushClusterBareRate,
                Metrics.pushClusterLatency, Metrics.pushClusterOneNodeLatency,
            ],
            seconds: 900)
    ) { benchmark in
        try PushClusterThroughputBenchmark.run(benchmark)
    }

    Benchmark(
        "Gateway cluster: stored pushes delivered after kill -9 of a node",
        configuration: once([Metrics.pushFailoverLost, Metrics.pushFailoverDelivery], seconds: 600)
    ) { benchmark in
        try PushClusterFailoverBenchmark.run(benchmark)
    }

    Benchmark(
        "Transfer: 1 GiB download on loopback, engine against curl",
        configuration: once(
            [Metrics.transferEngineRate, Metrics.transferEngineCompletedRate, Metrics.transferCurlFileRate, Metrics.transferCurlNullRate],
            seconds: 600)
    ) { benchmark in
        try TransferThroughputBenchmark.run(benchmark)
    }

    Benchmark(
        "Data controls: throughput, setting → rule, lifecycle with rules",
        configuration: once(
            [Metrics.dataControlsThroughput, Metrics.dataControlsBareThroughput, Metrics.settingToRule, Metrics.rawRule,
             Metrics.homeFrozenRuled, Metrics.openActiveRuled],
            seconds: 600)
    ) { benchmark in
        try DataControlsBenchmark.run(benchmark)
    }

    Benchmark(
        "Usage memory: 1,000 apps, 31 days",
        configuration: once([Metrics.usageRSS, Metrics.usageBareRSS], seconds: 600)
    ) { benchmark in
        try UsageMemoryBenchmark.run(benchmark)
    }

    Benchmark(
        "Transfer kill -9: bytes fetched again per kill",
        configuration: once([Metrics.transferKillWritten, Metrics.transferKillSent], seconds: 600)
    ) { benchmark in
        try TransferKillBenchmark.run(benchmark)
    }

    Benchmark(
        "Transfer scale: 1,000 transfers across 100 apps, daemon RSS and CPU",
        configuration: once(
            [
                Metrics.transferScaleRSS, Metrics.transferScaleHWM, Metrics.transferScaleIdleRSS, Metrics.transferScaleCPU,
                Metrics.transferScaleIdleCPU, Metrics.transferScaleCurlCPU,
            ],
            seconds: 900)
    ) { benchmark in
        try TransferScaleBenchmark.run(benchmark)
    }

    Benchmark(
        "Transfer wake: completed → events handler",
        configuration: once(
            [
                Metrics.transferWakeLaunched, Metrics.transferWakeRefreshLaunched, Metrics.transferWakeResumed,
                Metrics.transferWakeRefreshResumed,
            ],
            seconds: 600)
    ) { benchmark in
        try TransferWakeBenchmark.run(benchmark)
    }

    Benchmark(
        "Daemon memory, 100 apps",
        configuration: once([Metrics.rss, Metrics.hwm, Metrics.idleRSS, Metrics.idleHWM], seconds: 300)
    ) { benchmark in
        try FootprintBenchmarks.runMemory(benchmark)
    }

    Benchmark(
        "Scheduler: core input cost, 10 to 1,000 apps",
        configuration: once([Metrics.schedulerIncremental, Metrics.schedulerFull, Metrics.schedulerSmall], seconds: 300)
    ) { benchmark in
        SchedulerScaleBenchmark.run(benchmark)
    }

    Benchmark(
        "Scale: 1,000 apps, 10,000 requests, 100 running",
        configuration: once(
            [
                Metrics.scaleRSS, Metrics.scaleHWM, Metrics.scaleIdleRSS, Metrics.restartAnswered,
                Metrics.restartReattached, Metrics.restartBaseline, Metrics.listAppsScale, Metrics.listAppsSmall,
                Metrics.cliAppsScale, Metrics.cliAppsSmall, Metrics.concurrentCall, Metrics.aloneCall,
                Metrics.concurrentRate, Metrics.aloneRate,
            ],
            seconds: 600)
    ) { benchmark in
        try ScaleBenchmark.run(benchmark)
    }

    Benchmark(
        "Notifications: due → delivered lateness",
        configuration: once(
            [Metrics.notificationUserLateness, Metrics.notificationAppLateness, Metrics.notificationBareLateness],
            seconds: 300)
    ) { benchmark in
        try NotificationLatenessBenchmark.run(benchmark)
    }

    Benchmark(
        "Notifications: 64,000 pending across 1,000 apps",
        configuration: once(
            [
                Metrics.notificationScaleRSS, Metrics.notificationScaleReadBackRSS, Metrics.notificationEmptyRSS,
                Metrics.notificationEmptyReadBackRSS, Metrics.notificationRestartAnswered,
                Metrics.notificationRestartListed, Metrics.notificationRestartEmpty, Metrics.notificationAddScale,
                Metrics.notificationAddEmpty,
            ],
            seconds: 1_200)
    ) { benchmark in
        try NotificationScaleBenchmark.run(benchmark)
    }

    Benchmark(
        "Memory: pressure → first suspended app ended",
        configuration: once(
            [
                Metrics.pressureEnded, Metrics.pressureReading, Metrics.pressureEventfdWake, Metrics.pressureBareChain,
                Metrics.pressureFreedPerKill, Metrics.pressureRecordedPerKill, Metrics.pressureAppsEnded,
                Metrics.pressureAppsNeeded,
            ],
            seconds: 600)
    ) { benchmark in
        try MemoryPressureBenchmark.run(benchmark)
    }

    Benchmark(
        "Idle wake-ups, 60 s",
        configuration: once([Metrics.wakeups, Metrics.emptyWakeups, Metrics.tickWakeups], seconds: 300)
    ) { benchmark in
        try FootprintBenchmarks.runWakeups(benchmark)
    }
}
