import Benchmark
import Foundation
import OffstageBenchKit
import OffstageProtocol

/// Figure (SPEC §11 scale: 64,000 pending notifications across 1,000 apps, daemon memory ≤ 64 MB, restart recovery
/// ≤ 500 ms): one real daemon with 1,000 installed apps, measured twice in the same run — first with 0 notifications
/// (the baseline), then with each app's 64 added through the SDK:
///
/// 1. memory (VmRSS, VmHWM) of the daemon that built the state, and of a daemon that read it back after a kill -9;
/// 2. restart recovery: kill -9, start again on the same state, time from the spawn until `ListApps` answers with
///    every app, and until `io.offstage.NotificationsControl.Notifications` has listed every pending notification
///    (the reply read to its last byte);
/// 3. the time to schedule one more: the app in front adds one notification through the SDK
///    (`UserNotificationCenter.add`, a round trip to the daemon) with 64,000 pending in the daemon, against the same
///    with none.
///
/// The state is built as apps would build it: each of the 1,000 apps (the probe, `--notify-scale`) is opened once;
/// while launching it adds its notifications — due 2 to 30 days ahead, with mixed triggers and realistic content —
/// reports, and exits; the last one stays in front and does the timed adds. Between the phases that app exits, and
/// every app is opened again, this time adding 64.
///
/// `OFFSTAGE_NOTIFY_KEEP=DIR` copies the store with 64,000 pending (`offstage.sqlite` and its WAL, the daemon idle) to
/// DIR at the end, to start a daemon on it again by hand (`offstaged --state-dir DIR`) and look at its start-up.
enum NotificationScaleBenchmark {
    static let apps = 1_000
    static let perApp = 64
    static let restarts = 10
    static let addWarmup = 20
    static let addSamples = 500
    static let listSamples = 5
    static let oneAppSamples = 200

    static func appID(_ index: Int) -> String { "bench.notify" + String(format: "%04d", index) }
    static var front: Int { apps - 1 }

    struct RestartSample {
        /// From the spawn until `ListApps` answered with every app, ns.
        var answered: UInt64
        /// From the spawn until one app's notifications were listed, right after the answer, ns.
        var oneApp: UInt64
        /// From the spawn until every pending notification was listed, right after that, ns.
        var listed: UInt64
    }

    struct Phase {
        var notifications = 0
        var openSeconds = 0.0
        var rss = 0
        var hwm = 0
        var split = ""
        var threads = 0
        var pending = 0
        var pendingApps = 0
        var triggers: [String: Int] = [:]
        var add: [UInt64] = []
        var listAll: [UInt64] = []
        var listBytes = 0
        var listOne: [UInt64] = []
        var restarts: [RestartSample] = []
        var readBackAnswered: UInt64 = 0
        var readBackRSS = 0
        var readBackHWM = 0
        var readBackSplit = ""
        var storeBytes = 0
        var load = ""
        /// The restart with the daemon's info log: answered after (ns), and its own account of reading back.
        var loggedAnswered: UInt64 = 0
        var readBack = ""
    }

    static func run(_ benchmark: Benchmark) throws {
        Report.heading("Notifications at scale: \(apps) apps, \(apps * perApp) pending notifications")
        let daemon = try DaemonFixture()
        defer { daemon.tearDown() }
        try daemon.start()
        let readyPath = daemon.root + "/ready.sock"
        let ready = try UnixSocket.bindDatagram(path: readyPath)
        defer { close(ready) }
        let countFile = daemon.root + "/count"
        let listen = daemon.root + "/front.sock"
        var start = MonotonicClock.now()
        for index in 0..<apps {
            var arguments = ["--notify-scale", countFile, "--report", readyPath]
            if index == front { arguments += ["--listen", listen] }
            try daemon.install(try daemon.probeBundle(id: appID(index), arguments: arguments))
        }
        let installSeconds = Double(MonotonicClock.now() - start) / 1e9

        let empty = try phase(daemon, notifications: 0, ready: ready, countFile: countFile, listen: listen)
        // The app in front leaves, so that every app launches again for the next phase.
        let sender = try UnixSocket.datagram()
        defer { close(sender) }
        try UnixSocket.send(sender, datagram: Array("exit".utf8), to: listen)
        start = MonotonicClock.now()
        while try daemon.app(appID(front)).pid != nil {
            guard MonotonicClock.now() - start < 30_000_000_000 else { throw BenchError("\(appID(front)) did not exit") }
            MonotonicClock.sleep(milliseconds: 20)
        }
        let full = try phase(daemon, notifications: perApp, ready: ready, countFile: countFile, listen: listen)
        report(benchmark, installSeconds: installSeconds, empty: empty, full: full)
    }

    // MARK: One phase

    static func phase(
        _ daemon: DaemonFixture, notifications: Int, ready: Int32, countFile: String, listen: String
    ) throws -> Phase {
        var figures = Phase()
        figures.notifications = notifications
        figures.load = NotificationLatenessBenchmark.loadAverage()
        try "\(notifications)\n".write(toFile: countFile, atomically: true, encoding: .utf8)

        // Every app opened once; each adds its notifications while launching and says so once active.
        let start = MonotonicClock.now()
        for index in 0..<apps {
            try daemon.open(appID(index))
            guard let bytes = try UnixSocket.receiveDatagram(ready, timeoutMilliseconds: 60_000),
                let message = ScaleReady(decoding: bytes)
            else {
                throw BenchError("\(appID(index)) did not report within 60 s; see \(daemon.stateDirectory)/logs/\(appID(index)).log")
            }
            guard message.app == appID(index), message.submitted == notifications, message.refused == 0 else {
                throw BenchError("\(message.app) added \(message.submitted) of \(notifications) notifications: \(message.firstError)")
            }
        }
        figures.openSeconds = Double(MonotonicClock.now() - start) / 1e9
        try waitForSettled(daemon)
        MonotonicClock.sleep(milliseconds: 2_000)

        // 1. Memory of the daemon that built the state, before any listing (a large reply leaves its mark on the heap).
        (figures.rss, figures.hwm) = FootprintBenchmarks.memory(daemon.pid)
        figures.split = FootprintBenchmarks.split(daemon.pid)
        figures.threads = ProcReader.threads(daemon.pid).count

        // 3. One more, from the app in front: warm-up, then the timed adds.
        _ = try timeAdds(daemon, listen: listen, count: addWarmup, name: "warmup-\(notifications)")
        figures.add = try timeAdds(daemon, listen: listen, count: addSamples, name: "add-\(notifications)")

        // What the daemon holds: every pending notification listed, decoded once and checked.
        let connection = try RawVarlink(daemon.socket)
        let listAll = try VarlinkCodec.encodeCall(
            NotificationsControlInterface.Method.notifications, NotificationsControlInterface.NotificationsParameters(app: nil))
        var reply: [UInt8] = []
        for _ in 0..<listSamples {
            let begin = MonotonicClock.now()
            reply = try connection.call(listAll)
            figures.listAll.append(MonotonicClock.now() - begin)
        }
        figures.listBytes = reply.count
        let listed = try JSONDecoder().decode(Reply<NotificationsListing>.self, from: Data(reply)).parameters.pending
        figures.pending = listed.count
        figures.pendingApps = Set(listed.map(\.app)).count
        for entry in listed { figures.triggers[entry.request.trigger.kind + (entry.request.trigger.repeats == true ? " repeating" : ""), default: 0] += 1 }
        guard figures.pending == apps * notifications else {
            throw BenchError("the daemon lists \(figures.pending) pending notifications, not \(apps * notifications)")
        }
        let listOne = try VarlinkCodec.encodeCall(
            NotificationsControlInterface.Method.notifications,
            NotificationsControlInterface.NotificationsParameters(app: appID(front)))
        for _ in 0..<oneAppSamples {
            let begin = MonotonicClock.now()
            _ = try connection.call(listOne)
            figures.listOne.append(MonotonicClock.now() - begin)
        }

        // 2. Restarts.
        for _ in 0..<restarts {
            MonotonicClock.sleep(milliseconds: 1_000)
            figures.restarts.append(try restart(daemon, expected: apps * notifications))
        }
        // A last restart without listing anything: the memory of a daemon that read the state back from its store.
        MonotonicClock.sleep(milliseconds: 1_000)
        figures.readBackAnswered = try restart(daemon, expected: nil).answered
        try waitForSettled(daemon)
        MonotonicClock.sleep(milliseconds: 2_000)
        (figures.readBackRSS, figures.readBackHWM) = FootprintBenchmarks.memory(daemon.pid)
        figures.readBackSplit = FootprintBenchmarks.split(daemon.pid)
        // One more restart with the daemon's info log, which says how long reading the notifications back took.
        MonotonicClock.sleep(milliseconds: 1_000)
        daemon.extraArguments = ["--log-level", "info"]
        figures.loggedAnswered = try restart(daemon, expected: nil).answered
        daemon.extraArguments = []
        figures.readBack = readBackLine(daemon)
        try waitForSettled(daemon)
        if let keep = ProcessInfo.processInfo.environment["OFFSTAGE_NOTIFY_KEEP"], !keep.isEmpty, notifications > 0 {
            try FileManager.default.createDirectory(atPath: keep, withIntermediateDirectories: true)
            for suffix in ["", "-wal"] {
                let source = daemon.stateDirectory + "/offstage.sqlite" + suffix
                let target = keep + "/offstage.sqlite" + suffix
                try? FileManager.default.removeItem(atPath: target)
                if FileManager.default.fileExists(atPath: source) { try FileManager.default.copyItem(atPath: source, toPath: target) }
            }
            Report.line("   the store with \(apps * notifications) pending copied to \(keep)")
        }
        figures.storeBytes = ["", "-wal"].compactMap {
            (try? FileManager.default.attributesOfItem(atPath: daemon.stateDirectory + "/offstage.sqlite" + $0))?[.size] as? Int
        }.reduce(0, +)
        return figures
    }

    /// The last "notifications read back" line of the daemon's log: how many, and the milliseconds spent reading the
    /// store and restoring the core.
    static func readBackLine(_ daemon: DaemonFixture) -> String {
        let log = (try? String(contentsOfFile: daemon.root + "/daemon.log", encoding: .utf8)) ?? ""
        guard let line = log.split(separator: "\n").last(where: { $0.contains("notifications read back") }) else {
            return "(no \"notifications read back\" line in the daemon's log)"
        }
        let fields = ["pending", "delivered", "readMilliseconds", "scheduleMilliseconds", "waitedMilliseconds", "restoreMilliseconds"].map { key -> String in
            guard let range = line.range(of: "offstage.\(key)=") else { return "\(key) ?" }
            return "\(key) " + line[range.upperBound...].prefix { $0.isNumber }
        }
        return fields.joined(separator: ", ")
    }

    /// Waits until every app but the one in front has exited, and that one is active.
    static func waitForSettled(_ daemon: DaemonFixture) throws {
        let deadline = MonotonicClock.now() + 60_000_000_000
        var last = ""
        while MonotonicClock.now() < deadline {
            let listed = try daemon.apps()
            let running = listed.filter { $0.pid != nil }
            if listed.count == apps, running.count == 1, running[0].id == appID(front), running[0].state == "active" { return }
            last = "\(listed.count) installed, \(running.count) running"
            MonotonicClock.sleep(milliseconds: 100)
        }
        throw BenchError("the daemon did not settle with only \(appID(front)) running in front (\(last)); see \(daemon.root)")
    }

    /// Has the app in front time `count` adds through the SDK and returns their durations (ns).
    static func timeAdds(_ daemon: DaemonFixture, listen: String, count: Int, name: String) throws -> [UInt64] {
        let file = daemon.root + "/\(name).json"
        let sender = try UnixSocket.datagram()
        defer { close(sender) }
        try UnixSocket.send(sender, datagram: Array("time \(count) \(file)".utf8), to: listen)
        let deadline = MonotonicClock.now() + 180_000_000_000
        while MonotonicClock.now() < deadline {
            if let data = FileManager.default.contents(atPath: file) {
                let samples = try JSONDecoder().decode([UInt64].self, from: data)
                guard samples.count == count else {
                    throw BenchError("the app in front made \(samples.count) of \(count) adds; see \(daemon.stateDirectory)/logs/\(appID(front)).log")
                }
                return samples
            }
            MonotonicClock.sleep(milliseconds: 20)
        }
        throw BenchError("the app in front did not time its adds within 180 s")
    }

    /// kill -9 of the daemon, then a new one on the same state: from its spawn, how long until `ListApps` answers
    /// with every app, and (when `expected` is given) until `Notifications` has listed `expected` pending ones, read
    /// to the reply's last byte on the same connection right after.
    static func restart(_ daemon: DaemonFixture, expected: Int?) throws -> RestartSample {
        daemon.crash()
        let spawned = MonotonicClock.now()
        let process = try daemon.spawn()
        let listApps = try VarlinkCodec.encodeCall(ControlInterface.Method.listApps, NoParameters())
        let listAll = try VarlinkCodec.encodeCall(
            NotificationsControlInterface.Method.notifications, NotificationsControlInterface.NotificationsParameters(app: nil))
        let listOne = try VarlinkCodec.encodeCall(
            NotificationsControlInterface.Method.notifications,
            NotificationsControlInterface.NotificationsParameters(app: appID(front)))
        while true {
            guard MonotonicClock.now() - spawned < 30_000_000_000, process.isRunning else {
                throw BenchError("the restarted daemon did not answer within 30 s; see \(daemon.root)/daemon.log")
            }
            guard let connection = try? RawVarlink(daemon.socket), let apps = try? connection.call(listApps) else {
                MonotonicClock.sleep(milliseconds: 1)
                continue
            }
            let answered = MonotonicClock.now() - spawned
            guard let expected else { return RestartSample(answered: answered, oneApp: 0, listed: 0) }
            let mine = try connection.call(listOne)
            let oneApp = MonotonicClock.now() - spawned
            let listing = try connection.call(listAll)
            let listed = MonotonicClock.now() - spawned
            let count = try JSONDecoder().decode(Reply<ControlInterface.AppsReply>.self, from: Data(apps)).parameters.apps.count
            guard count == Self.apps else { throw BenchError("the restarted daemon lists \(count) apps, not \(Self.apps)") }
            let pending = occurrences(of: Array("\"addedAt\":".utf8), in: listing)
            guard pending == expected else {
                throw BenchError("the restarted daemon lists \(pending) pending notifications, not \(expected)")
            }
            let own = occurrences(of: Array("\"addedAt\":".utf8), in: mine)
            guard own == expected / Self.apps else {
                throw BenchError("the restarted daemon lists \(own) pending notifications for \(appID(front)), not \(expected / Self.apps)")
            }
            return RestartSample(answered: answered, oneApp: oneApp, listed: listed)
        }
    }

    /// How many times `pattern` occurs in `bytes` (a pending entry's `"addedAt":` key, which nothing else in the reply
    /// can contain: strings escape their quotes).
    static func occurrences(of pattern: [UInt8], in bytes: [UInt8]) -> Int {
        guard let first = pattern.first, bytes.count >= pattern.count else { return 0 }
        var count = 0
        var index = 0
        let last = bytes.count - pattern.count
        while index <= last {
            if bytes[index] == first, Array(bytes[index..<(index + pattern.count)]) == pattern {
                count += 1
                index += pattern.count
            } else {
                index += 1
            }
        }
        return count
    }

    /// The parts of a `Notifications` reply the benchmark checks.
    struct NotificationsListing: Decodable {
        struct Pending: Decodable {
            struct Request: Decodable {
                struct Trigger: Decodable {
                    var kind: String
                    var repeats: Bool?
                }
                var trigger: Trigger
            }
            var app: String
            var request: Request
        }
        var pending: [Pending]
    }

    // MARK: Report

    static func report(_ benchmark: Benchmark, installSeconds: Double, empty: Phase, full: Phase) {
        let mb = FootprintBenchmarks.megabytes
        func ms(_ nanoseconds: Double) -> String { String(format: "%.1f ms", nanoseconds / 1e6) }
        func percentiles(_ samples: [UInt64]) -> String {
            let d = Distribution(samples)
            return "p50 \(ms(d.p50))  p99 \(ms(d.p99))  max \(ms(d.maximum))  (n=\(d.count))"
        }

        Report.line("built: \(apps) installs in \(String(format: "%.1f", installSeconds)) s; \(apps) opens adding 0 in \(String(format: "%.1f", empty.openSeconds)) s (load \(empty.load)), adding \(perApp) each in \(String(format: "%.1f", full.openSeconds)) s (load \(full.load))")
        Report.line("pending listed: \(full.pending) across \(full.pendingApps) apps (\(full.triggers.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", "))); store \(mb(full.storeBytes / 1024)) (0 notifications: \(mb(empty.storeBytes / 1024)))")

        // 1. Memory.
        benchmark.measurement(Metrics.notificationScaleRSS, full.rss)
        benchmark.measurement(Metrics.notificationScaleReadBackRSS, full.readBackRSS)
        benchmark.measurement(Metrics.notificationEmptyRSS, empty.rss)
        benchmark.measurement(Metrics.notificationEmptyReadBackRSS, empty.readBackRSS)
        Report.line("")
        Report.line("1. daemon memory with \(full.pending) pending:")
        Report.line("   the daemon that built it: VmRSS \(mb(full.rss)), VmHWM \(mb(full.hwm)) (\(full.threads) threads; \(full.split))")
        Report.line("   a daemon that read it back after kill -9: VmRSS \(mb(full.readBackRSS)), VmHWM \(mb(full.readBackHWM)) (\(full.readBackSplit))")
        Report.line("   baseline, 0 notifications: built VmRSS \(mb(empty.rss)), VmHWM \(mb(empty.hwm)) (\(empty.split)); read back VmRSS \(mb(empty.readBackRSS)), VmHWM \(mb(empty.readBackHWM))")
        let perNotification = Double(full.readBackRSS - empty.readBackRSS) * 1024 / Double(max(full.pending, 1))
        Report.line("   ratio VmRSS built \(Report.ratio(Double(full.rss), Double(empty.rss))), read back \(Report.ratio(Double(full.readBackRSS), Double(empty.readBackRSS))); read back: \(mb(full.readBackRSS - empty.readBackRSS)) more, \(String(format: "%.0f", perNotification)) bytes per pending notification")
        let worst = max(full.rss, full.readBackRSS)
        Report.line("   target VmRSS ≤ 64 MB: \(Report.verdict(worst <= 64 * 1024)) (worst of the two: \(mb(worst)); VmHWM \(max(full.hwm, full.readBackHWM) <= 64 * 1024 ? "also" : "NOT") within)")

        // 2. Restart recovery.
        let answered = full.restarts.map(\.answered)
        let listed = full.restarts.map(\.listed)
        let emptyAnswered = empty.restarts.map(\.answered)
        let emptyListed = empty.restarts.map(\.listed)
        Report.record(benchmark, Metrics.notificationRestartAnswered, answered)
        Report.record(benchmark, Metrics.notificationRestartListed, listed)
        Report.record(benchmark, Metrics.notificationRestartEmpty, emptyAnswered)
        Report.line("")
        Report.line("2. restart recovery (kill -9, start; \(restarts) restarts, times from the spawn):")
        Report.line("   ListApps answers, \(full.pending) pending:      \(percentiles(answered))")
        Report.line("   then one app's 64 listed:            \(percentiles(full.restarts.map(\.oneApp)))")
        Report.line("   then every notification listed:      \(percentiles(listed))")
        Report.line("   the daemon's own account (a restart with its info log, answered at \(ms(Double(full.loggedAnswered)))): \(full.readBack); with 0 notifications: \(empty.readBack)")
        Report.line("   baseline, 0 notifications: answers   \(percentiles(emptyAnswered))")
        Report.line("   baseline, 0 notifications: listed    \(percentiles(emptyListed))")
        Report.line("   listing every notification on a warm daemon (\(full.listBytes / 1024) kB): \(percentiles(full.listAll)); one app's (64): \(percentiles(full.listOne)); 0 notifications: \(percentiles(empty.listAll))")
        Report.line("   ratio p50 answers \(Report.ratio(Distribution(answered).p50, Distribution(emptyAnswered).p50)), listed \(Report.ratio(Distribution(listed).p50, Distribution(emptyListed).p50))")
        let oneAppMax = Double(full.restarts.map(\.oneApp).max() ?? .max)
        Report.line("   target ≤ 500 ms (max): answering \(Report.verdict(Double(answered.max() ?? .max) <= 500e6)); an app's notifications listed \(Report.verdict(oneAppMax <= 500e6)); every notification listed \(Report.verdict(Double(listed.max() ?? .max) <= 500e6))")

        // 3. One more.
        Report.record(benchmark, Metrics.notificationAddScale, full.add)
        Report.record(benchmark, Metrics.notificationAddEmpty, empty.add)
        let add = Distribution(full.add)
        let addEmpty = Distribution(empty.add)
        Report.line("")
        Report.line("3. scheduling one more (UserNotificationCenter.add from the app in front, \(addSamples) after \(addWarmup) warm-up):")
        Report.latency("with \(full.pending) pending", add)
        Report.latency("baseline: with 0 pending", addEmpty)
        Report.line("   ratio p50 \(Report.ratio(add.p50, addEmpty.p50)), p99 \(Report.ratio(add.p99, addEmpty.p99))")
    }
}
