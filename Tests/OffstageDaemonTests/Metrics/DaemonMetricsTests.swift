import CoreMetrics
import Foundation
import MetricsTestKit
import OffstageCore
import class Prometheus.PrometheusCollectorRegistry
import Testing

@testable import OffstageDaemon

@Suite("DaemonMetrics (SPEC §11 observability)")
struct DaemonMetricsTests {
    /// Metrics recorded into swift-metrics' test factory, so each sample can be read back.
    func testMetrics(tolerance: Duration = .milliseconds(1)) -> (DaemonMetrics, TestMetrics) {
        let factory = TestMetrics()
        return (DaemonMetrics(factory: factory, deadlineTolerance: tolerance, render: { "" }), factory)
    }

    @Test("§11 observability: a timer firing over the tolerance late is a missed deadline; on time or early is not")
    func missedDeadlines() throws {
        let (metrics, factory) = testMetrics()
        metrics.timerFired(latenessNanoseconds: -3_000)  // NIO's monotonic timer may beat the wall clock
        metrics.timerFired(latenessNanoseconds: 400_000)
        metrics.timerFired(latenessNanoseconds: 1_000_000)  // exactly 1 ms: still on time
        metrics.timerFired(latenessNanoseconds: 1_000_001)
        metrics.timerFired(latenessNanoseconds: 25_000_000)
        #expect(try factory.expectCounter(DaemonMetrics.Name.wakeups).totalValue == 5)
        #expect(try factory.expectCounter(DaemonMetrics.Name.deadlinesMissed).totalValue == 2)
        let lateness = try factory.expectTimer(DaemonMetrics.Name.timerLateness).values
        #expect(lateness == [0, 400_000, 1_000_000, 1_000_001, 25_000_000])
    }

    @Test("§11 observability: the deadline tolerance is a setting: 5 ms lets a 2 ms late timer count as on time")
    func toleranceIsASetting() throws {
        let (metrics, factory) = testMetrics(tolerance: .milliseconds(5))
        metrics.timerFired(latenessNanoseconds: 2_000_000)
        metrics.timerFired(latenessNanoseconds: 6_000_000)
        #expect(try factory.expectCounter(DaemonMetrics.Name.deadlinesMissed).totalValue == 1)
    }

    @Test("§11 observability: freezes, callbacks by name, signals and store writes land in their own labelled series")
    func labelledSeries() throws {
        let (metrics, factory) = testMetrics()
        metrics.frozen(nanoseconds: 120_000)
        metrics.callbackDelivered(.didEnterBackground)
        metrics.callbackAnswered(.didEnterBackground, nanoseconds: 900_000)
        metrics.callbackDelivered(.runTask)
        metrics.terminated(.sigkill)
        metrics.storeWrote(.log, nanoseconds: 300_000)
        #expect(try factory.expectCounter(DaemonMetrics.Name.freezes).totalValue == 1)
        #expect(try factory.expectTimer(DaemonMetrics.Name.freezeSeconds).values == [120_000])
        let background = [("callback", "didEnterBackground")]
        #expect(try factory.expectCounter(DaemonMetrics.Name.callbacks, background).totalValue == 1)
        #expect(try factory.expectTimer(DaemonMetrics.Name.callbackSeconds, background).values == [900_000])
        #expect(try factory.expectCounter(DaemonMetrics.Name.callbacks, [("callback", "runTask")]).totalValue == 1)
        #expect(try factory.expectTimer(DaemonMetrics.Name.callbackSeconds, [("callback", "runTask")]).values.isEmpty)
        #expect(try factory.expectCounter(DaemonMetrics.Name.terminations, [("signal", "SIGKILL")]).totalValue == 1)
        #expect(try factory.expectCounter(DaemonMetrics.Name.terminations, [("signal", "SIGTERM")]).totalValue == 0)
        #expect(try factory.expectTimer(DaemonMetrics.Name.storeWriteSeconds, [("write", "log")]).values == [300_000])
    }

    @Test("§11 observability: every series is made at start, so a scraper sees zeros before anything happened")
    func seriesExistFromTheStart() {
        let (_, factory) = testMetrics()
        #expect(factory.counters(label: DaemonMetrics.Name.callbacks).count == CallbackLabel.allCases.count)
        #expect(factory.timers(label: DaemonMetrics.Name.storeWriteSeconds).count == StoreWrite.allCases.count)
        let names = factory.counters.map(\.label) + factory.timers.map(\.label)
        #expect(names.allSatisfy { $0.hasPrefix("offstage_") }, "\(names)")
        #expect(factory.timers.allSatisfy { $0.label.hasSuffix("_seconds") })
        #expect(factory.counters.allSatisfy { $0.label.hasSuffix("_total") })
    }

    static let delivered = DeliveredNotification(
        app: "com.example.a",
        request: NotificationRequest(
            identifier: "n", content: NotificationContent(title: "t"), trigger: .timeInterval(seconds: 1, repeats: false)),
        due: .epoch, deliveredAt: .epoch, late: false, route: .app)

    @Test("§11 observability: each callback kind has its own label, the kind's wire name")
    func callbackLabels() {
        let kinds: [CallbackKind] = [
            .didFinishLaunching(.user), .willEnterForeground, .didBecomeActive, .willResignActive, .didEnterBackground,
            .willTerminate, .backgroundTasksExpiring([]), .runTask(run: 1, identifier: "x", kind: .appRefresh),
            .performFetch(run: 1), .taskExpiring(run: 1),
            .audioInterruption(AudioInterruption(began: true, reason: "a call")), .keepAlive, .voipSocket(closed: false),
            .systemEvent(.networkChange),
            .locations([]), .locationError("gone"), .accessory(name: "scanner", event: .data),
            .notificationWillPresent(Self.delivered),
            .notificationResponse(NotificationResponse(notification: Self.delivered, actionIdentifier: "default")),
            .remoteNotification(RemoteNotificationCall(run: 1, push: "p", payload: "{}")),
            .transferEvents(session: "s", run: 1), .memoryWarning,
        ]
        #expect(kinds.map { CallbackLabel($0).rawValue } == kinds.map(\.name))
        #expect(Set(kinds.map(CallbackLabel.init)).count == CallbackLabel.allCases.count)
    }

    @Test("§11 observability: IPC calls count by method; errors by name, past 32 names as 'other', never unbounded")
    func ipcErrorsAreBounded() throws {
        let (metrics, factory) = testMetrics()
        let open = metrics.ipcMethod(interface: "io.offstage.Control", method: "Open")
        open.called()
        open.called()
        open.failed("io.offstage.Control.AppNotInstalled")
        open.failed("io.offstage.Control.AppNotInstalled")
        for index in 0..<40 { open.failed("io.offstage.Control.Made\(index)") }
        let method = [("interface", "io.offstage.Control"), ("method", "Open")]
        #expect(try factory.expectCounter(DaemonMetrics.Name.ipcCalls, method).totalValue == 2)
        let notInstalled = method + [("error", "io.offstage.Control.AppNotInstalled")]
        #expect(try factory.expectCounter(DaemonMetrics.Name.ipcErrors, notInstalled).totalValue == 2)
        let errors = factory.counters(label: DaemonMetrics.Name.ipcErrors)
        #expect(errors.count == IPCMethodMetrics.maximumErrorNames + 1)
        #expect(try factory.expectCounter(DaemonMetrics.Name.ipcErrors, method + [("error", "other")]).totalValue == 9)
    }

    @Test("§11 observability: two daemons in one process keep separate counts (the factory is injected, not global)")
    func injectedNotGlobal() {
        let first = DaemonMetrics()
        let second = DaemonMetrics()
        first.thaws.increment()
        first.thaws.increment()
        #expect(first.exposition().contains("offstage_thaws_total 2"))
        #expect(second.exposition().contains("offstage_thaws_total 0"))
    }

    @Test("§11 observability: the Prometheus text has counters, and histograms in seconds with the §11 1 ms bucket")
    func prometheusText() throws {
        let registry = PrometheusCollectorRegistry()
        let metrics = DaemonMetrics(registry: registry)
        metrics.frozen(nanoseconds: 200_000)
        metrics.timerFired(latenessNanoseconds: 1_500_000)
        let text = metrics.exposition()
        #expect(text.contains("# TYPE offstage_freezes_total counter"))
        #expect(text.contains("offstage_freezes_total 1"))
        #expect(text.contains("# TYPE offstage_freeze_seconds histogram"))
        #expect(text.contains(#"offstage_freeze_seconds_bucket{le="0.00025"} 1"#), "\(text)")
        #expect(text.contains(#"offstage_freeze_seconds_bucket{le="0.0001"} 0"#), "\(text)")
        #expect(text.contains("offstage_freeze_seconds_count 1"))
        #expect(text.contains(#"offstage_timer_lateness_seconds_bucket{le="0.001"} 0"#), "\(text)")
        #expect(text.contains(#"offstage_timer_lateness_seconds_bucket{le="0.002"} 1"#), "\(text)")
        #expect(text.contains("offstage_deadlines_missed_total 1"))
        #expect(text.contains(#"offstage_callbacks_total{callback="didBecomeActive"} 0"#), "\(text)")
        #expect(metrics.registry === registry)
    }
}
