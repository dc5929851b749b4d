import Benchmark
import Foundation
import NIOCore
import NIOPosix
import OffstageBenchKit
import OffstageProtocol

/// Figure (SPEC NT-2, §11 timers: due work starts ≤ 1 ms late; the notifications issue's goal: at most 1 ms more at
/// p99 than a bare timer): how late a local notification is delivered after its due time, on the real daemon, against
/// a bare timer of the kind the daemon arms, in the same run and the same time window.
///
/// Three series share one time line, in slots 100 ms apart, a third of a slot from each other so that none disturbs
/// the next:
///
/// - **to the user** (slot + 0 ms): an app that is not running (it added its notifications through the SDK at launch
///   and exited) has one notification due per slot; the daemon's own record of each delivery, `deliveredAt − due`
///   (`io.offstage.NotificationsControl.Notifications`; both on the daemon's wall clock, `deliveredAt` read when its
///   timer fired);
/// - **to the app in front** (slot + 33 ms): the app that stays active has one due per slot; its will-present delegate
///   reads CLOCK_REALTIME first and reports it in a datagram: handler entered − due. Its datagram also carries the
///   daemon's `deliveredAt`, which splits the figure into the daemon's timer and the trip to the handler;
/// - **baseline** (slot + 66 ms): in the benchmark process, `scheduleTask(in:)` on a NIO event loop of one thread,
///   the daemon's one timer: each firing reads the wall clock, subtracts its due time and arms the next, the delay
///   computed from the wall clock as the daemon computes it (`DaemonEngine.rearm`).
///
/// Due times are whole milliseconds since the epoch. The daemon rounds a due time up to a whole millisecond, and a
/// date sent as seconds in a double can land a few hundred nanoseconds past the millisecond meant: each delivery is
/// measured against the due time the daemon reports, and the benchmark counts those that moved.
///
/// `OFFSTAGE_NOTIFY_SAMPLES=FILE` writes every recorded slot's samples (ns) to FILE as CSV, in time order.
///
/// The daemon keeps up to 1,000 pending and delivered notifications per app for this run (its defaults are 128 and
/// 64), so that one app per series covers the whole window; the limits change nothing on the timer's path.
enum NotificationLatenessBenchmark {
    /// Milliseconds between slots.
    static let period: Int64 = 100
    /// Slots not recorded at the start.
    static let warmup = 10
    /// Slots recorded.
    static let recorded = 600
    static var slots: Int { warmup + recorded }
    /// Milliseconds from choosing the time line to its first slot: time for the two apps to launch and add theirs.
    static let lead: Int64 = 10_000
    static let userOffset: Int64 = 0
    static let appOffset: Int64 = 33
    static let bareOffset: Int64 = 66
    static let settings: [String: Int] = [
        "maximumPendingNotificationsPerApp": 1_000, "maximumDeliveredNotificationsPerApp": 1_000,
    ]
    static let userApp = "bench.notify.user"
    static let frontApp = "bench.notify.front"

    struct Figures {
        /// deliveredAt − due, to the user (ns).
        var user: [Int64] = []
        /// Handler entered − due, in the app in front (ns).
        var app: [Int64] = []
        /// The daemon's deliveredAt − due for the app in front (ns).
        var appDaemon: [Int64] = []
        /// Handler entered − the daemon's deliveredAt (ns).
        var appTrip: [Int64] = []
        /// The bare timer's firing − due (ns).
        var bare: [Int64] = []
        /// Deliveries whose reported due time differs from the one requested, and by how much (ms).
        var moved: [Int64: Int] = [:]
        var late = 0
        var routes: [String: Int] = [:]
        var loadAtStart = ""
        var loadAtEnd = ""
        var daemonCPU: UInt64 = 0
        var windowSeconds = 0.0
    }

    static func run(_ benchmark: Benchmark) throws {
        Report.heading(
            "Notifications: due → delivered lateness, \(recorded) per series after \(warmup) warm-up, one every \(period) ms")
        let figures = try measure()
        report(benchmark, figures)
        if let path = ProcessInfo.processInfo.environment["OFFSTAGE_NOTIFY_SAMPLES"], !path.isEmpty {
            // Every recorded slot's samples (ns), to look at the tail in time order.
            var csv = "slot,user,app,app_daemon,app_trip,bare\n"
            for index in 0..<recorded {
                csv += "\(warmup + index),\(figures.user[index]),\(figures.app[index]),\(figures.appDaemon[index]),\(figures.appTrip[index]),\(figures.bare[index])\n"
            }
            try csv.write(toFile: path, atomically: true, encoding: .utf8)
            Report.line("samples written to \(path)")
        }
    }

    static func measure() throws -> Figures {
        var figures = Figures()
        figures.loadAtStart = loadAverage()
        let daemon = try DaemonFixture(settings: settings)
        defer { daemon.tearDown() }
        try daemon.start()
        let reportPath = daemon.root + "/late.sock"
        let reports = try UnixSocket.bindDatagram(path: reportPath)
        defer { close(reports) }
        try daemon.install(
            try daemon.probeBundle(
                id: userApp, arguments: ["--notify-late", daemon.root + "/user.plan", "--report", reportPath, "--exit"]))
        try daemon.install(
            try daemon.probeBundle(
                id: frontApp, arguments: ["--notify-late", daemon.root + "/front.plan", "--report", reportPath]))

        // The time line: slot k of series s at start + k·period + offset(s), whole milliseconds since the epoch.
        let start = (WallClock.now() / 1_000_000 + lead) / period * period
        func due(_ slot: Int, _ offset: Int64) -> Int64 { start + Int64(slot) * period + offset }
        try "\(start + userOffset) \(period) \(slots) user".write(
            toFile: daemon.root + "/user.plan", atomically: true, encoding: .utf8)
        try "\(start + appOffset) \(period) \(slots) front".write(
            toFile: daemon.root + "/front.plan", atomically: true, encoding: .utf8)
        for id in [userApp, frontApp] {
            try daemon.open(id)
            guard let bytes = try UnixSocket.receiveDatagram(reports, timeoutMilliseconds: 60_000),
                let ready = ScaleReady(decoding: bytes)
            else { throw BenchError("\(id) did not report within 60 s; see \(daemon.stateDirectory)/logs/\(id).log") }
            guard ready.app == id, ready.submitted == slots else {
                throw BenchError("\(ready.app) added \(ready.submitted) of \(slots) notifications: \(ready.firstError)")
            }
        }
        try waitUntilExited(daemon, userApp)
        try daemon.waitFor(frontApp, "active")
        let setUp = WallClock.now()
        guard setUp < (start - 1_000) * 1_000_000 else {
            throw BenchError(
                "the apps took until \(Double(setUp / 1_000_000 - start) / 1000) s after the first due time to add their "
                    + "notifications; the machine is too busy for this run (or raise `lead`)")
        }

        // The baseline's timer, armed now for its first slot; the will-present reports come in meanwhile.
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        let bare = BareTimer(loop: group.next(), dues: (0..<slots).map { due($0, bareOffset) * 1_000_000 })
        bare.start()
        let cpuBefore = MonotonicClock.processCPU(daemon.pid) ?? 0
        let windowStart = MonotonicClock.now()
        let last = due(slots - 1, bareOffset) * 1_000_000 + 3_000_000_000
        var stamps: [Int: (handler: Int64, due: Int64, delivered: Int64)] = [:]
        while WallClock.now() < last, stamps.count < slots || !bare.finished {
            guard let bytes = try UnixSocket.receiveDatagram(reports, timeoutMilliseconds: 200) else { continue }
            let words = String(decoding: bytes, as: UTF8.self).split(separator: " ")
            guard words.count == 4, words[0].hasPrefix("front-"), let slot = Int(words[0].dropFirst(6)),
                let handler = Int64(words[1]), let due = Int64(words[2]), let delivered = Int64(words[3])
            else { continue }
            stamps[slot] = (handler, due, delivered)
        }
        figures.windowSeconds = Double(MonotonicClock.now() - windowStart) / 1e9
        figures.daemonCPU = (MonotonicClock.processCPU(daemon.pid) ?? cpuBefore) - cpuBefore
        figures.loadAtEnd = loadAverage()
        guard bare.finished else { throw BenchError("the bare timer fired \(bare.fired) of \(slots) times") }
        guard stamps.count == slots else {
            throw BenchError("the app in front heard \(stamps.count) of \(slots) notifications; see \(daemon.stateDirectory)/logs/\(frontApp).log")
        }
        figures.bare = Array(bare.lateness.dropFirst(warmup))

        // To the app in front.
        for slot in warmup..<slots {
            let stamp = stamps[slot]!
            figures.app.append(stamp.handler - stamp.due)
            figures.appDaemon.append(stamp.delivered - stamp.due)
            figures.appTrip.append(stamp.handler - stamp.delivered)
            if stamp.due != due(slot, appOffset) * 1_000_000 {
                figures.moved[stamp.due / 1_000_000 - due(slot, appOffset), default: 0] += 1
            }
        }

        // To the user: the daemon's record.
        let listing = try daemon.call(
            NotificationsControlInterface.Method.notifications,
            NotificationsControlInterface.NotificationsParameters(app: userApp),
            as: NotificationsControlInterface.NotificationsReply.self)
        var delivered: [Int: NotificationsControlInterface.AppDeliveredMessage] = [:]
        for record in listing.delivered where record.request.identifier.hasPrefix("user-") {
            if let slot = Int(record.request.identifier.dropFirst(5)) { delivered[slot] = record }
        }
        guard delivered.count == slots, listing.pending.isEmpty else {
            throw BenchError("the daemon lists \(delivered.count) of \(slots) delivered and \(listing.pending.count) pending for \(userApp)")
        }
        for slot in warmup..<slots {
            let record = delivered[slot]!
            let dueMilliseconds = Int64((record.due * 1000).rounded())
            // Both are the daemon's instants; the difference of the doubles is exact to well under a microsecond.
            figures.user.append(Int64(((record.deliveredAt - record.due) * 1e9).rounded()))
            if dueMilliseconds != due(slot, userOffset) { figures.moved[dueMilliseconds - due(slot, userOffset), default: 0] += 1 }
            if record.late { figures.late += 1 }
            figures.routes[record.route, default: 0] += 1
        }
        return figures
    }

    /// Waits until the app has no process (it exits by itself once its notifications are added).
    static func waitUntilExited(_ daemon: DaemonFixture, _ id: String) throws {
        let deadline = MonotonicClock.now() + 30_000_000_000
        while MonotonicClock.now() < deadline {
            if try daemon.app(id).pid == nil { return }
            MonotonicClock.sleep(milliseconds: 20)
        }
        throw BenchError("\(id) did not exit within 30 s of adding its notifications")
    }

    static func loadAverage() -> String {
        (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8))?.split(separator: " ").prefix(3)
            .joined(separator: " ") ?? "?"
    }

    // MARK: Report

    static func report(_ benchmark: Benchmark, _ figures: Figures) {
        record(benchmark, Metrics.notificationUserLateness, figures.user)
        record(benchmark, Metrics.notificationAppLateness, figures.app)
        record(benchmark, Metrics.notificationBareLateness, figures.bare)
        let user = Distribution(figures.user.map { Double($0) })
        let app = Distribution(figures.app.map { Double($0) })
        let appDaemon = Distribution(figures.appDaemon.map { Double($0) })
        let appTrip = Distribution(figures.appTrip.map { Double($0) })
        let bare = Distribution(figures.bare.map { Double($0) })
        Report.line("load average \(figures.loadAtStart) at the start, \(figures.loadAtEnd) at the end of the \(String(format: "%.1f", figures.windowSeconds)) s window")
        Report.latency("to the user: deliveredAt − due (daemon)", user)
        Report.latency("to the app in front: handler entered − due", app)
        Report.latency("   of which the daemon's timer (deliveredAt − due)", appDaemon)
        Report.latency("   of which deliveredAt → handler entered", appTrip)
        Report.latency("baseline: bare NIO scheduleTask, fired − due", bare)
        let movedText = figures.moved.isEmpty
            ? "none" : figures.moved.sorted { $0.key < $1.key }.map { "\($0.value) by \($0.key) ms" }.joined(separator: ", ")
        Report.line("due times reported differently from those requested: \(movedText); late (daemon down) flags: \(figures.late); routes: \(figures.routes.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", "))")
        Report.line(String(format: "daemon CPU during the window: %.1f ms for %d deliveries (%.0f µs each)", Double(figures.daemonCPU) / 1e6, 2 * slots, Double(figures.daemonCPU) / 1e3 / Double(2 * slots)))
        Report.line("ratio to the bare timer: to the user p50 \(Report.ratio(user.p50, bare.p50)), p99 \(Report.ratio(user.p99, bare.p99)); to the app p50 \(Report.ratio(app.p50, bare.p50)), p99 \(Report.ratio(app.p99, bare.p99))")
        let userExtra = user.p99 - bare.p99
        let appExtra = app.p99 - bare.p99
        func signed(_ nanoseconds: Double) -> String { String(format: "%+.1f", nanoseconds / 1000) + " µs" }
        Report.line("goal p99 ≤ bare p99 + 1 ms: to the user \(signed(userExtra)) \(Report.verdict(userExtra <= 1e6)); to the app \(signed(appExtra)) \(Report.verdict(appExtra <= 1e6))")
        Report.line("§11 due work starts ≤ 1 ms late (p99): to the user \(Report.verdict(user.p99 <= 1e6)); to the app's handler \(Report.verdict(app.p99 <= 1e6)); bare timer \(Report.verdict(bare.p99 <= 1e6))")
    }

    static func record(_ benchmark: Benchmark, _ metric: BenchmarkMetric, _ samples: [Int64]) {
        for sample in samples { benchmark.measurement(metric, Int(max(0, sample))) }
    }
}

/// The daemon's timer without the daemon: one `scheduleTask(in:)` at a time on a NIO event loop of one thread, for
/// a wall-clock instant, the delay computed from CLOCK_REALTIME when it is armed; on firing it reads the wall clock,
/// records how late it is and arms the next (as `DaemonEngine.rearm` arms the next deadline after each firing).
final class BareTimer: @unchecked Sendable {
    let loop: any EventLoop
    let dues: [Int64]
    private let lock = NSLock()
    private var samples: [Int64] = []

    init(loop: any EventLoop, dues: [Int64]) {
        self.loop = loop
        self.dues = dues
        samples.reserveCapacity(dues.count)
    }

    func start() { loop.execute { self.arm(0) } }

    private func arm(_ index: Int) {
        let due = dues[index]
        let delay = due - WallClock.now()
        loop.scheduleTask(in: .nanoseconds(max(0, delay))) { [self] in
            let firedAt = WallClock.now()
            lock.withLock { samples.append(firedAt - due) }
            if index + 1 < dues.count { arm(index + 1) }
        }
    }

    var fired: Int { lock.withLock { samples.count } }
    var finished: Bool { fired == dues.count }
    var lateness: [Int64] { lock.withLock { samples } }
}
