import Foundation
import Offstage
import OffstageBenchKit
import OffstageProtocol

/// The app the benchmarks install: a real app on the SDK, launched by the real daemon, so that the daemon knows it
/// by its peer credentials as it knows any app. Its arguments (the manifest's `OffstageLinux.Arguments`) choose
/// what it does:
///
/// - `--calls --count N --warmup W --echo SOCKET --out FILE`: once active, measures N
///   `beginBackgroundTask`/`endBackgroundTask` pairs through the SDK and N bare round trips of the same message
///   sizes to the echo server at SOCKET, in alternating blocks, and writes a ``CallsReport`` to FILE.
/// - `--lifecycle --report SOCKET`: records when its handlers run and sends a ``LifecycleStamp`` datagram to
///   SOCKET from each did-become-active.
/// - `--scale --report SOCKET [--submit N] [--exit] [--hold-task] [--listen SOCKET]`: the scale benchmark's app.
///   While launching it submits N task requests through ``TaskScheduler`` (one refresh and N − 1 processing
///   requests, due hours ahead so none runs); once active it sends a ``ScaleReady`` datagram to SOCKET, then with
///   `--exit` exits. With `--hold-task` it begins a background task each time it enters the background and never
///   ends it, so it keeps running there instead of being suspended. With `--listen` it serves rounds of
///   concurrent calls: each datagram `go COUNT FILE` on its socket makes it time COUNT
///   `beginBackgroundTask`/`endBackgroundTask` pairs and write a ``ConcurrentCallsReport`` to FILE.
/// - `--voip --connect SOCKET --report SOCKET`: hands its connection to SOCKET to the daemon and reports when each
///   wake-up handler begins (see ``VoIPProbe``).
/// - `--accessory PATH --report SOCKET`: registers accessory `bench` at PATH (external-accessory), opens a session to
///   it once it is connected, which hands the session to the daemon, and reports when each data handler begins
///   (see ``AccessoryProbe``).
/// - `--notify-late PLAN --report SOCKET [--exit]`: adds the notifications PLAN lists and reports when each reaches
///   its will-present handler (see ``LatenessProbe``).
/// - `--notify-scale COUNT_FILE --report SOCKET [--listen SOCKET]`: adds as many realistic notifications as COUNT_FILE
///   says, and times adding one more on command (see ``NotificationScaleProbe``).
/// - `--push --report SOCKET [--exit]`: registers for remote notifications, reports its token, and reports when each
///   remote-notification handler begins (see ``PushProbe``); with `--exit` it exits once registered.
/// - `--transfers PLAN --report SOCKET [--refresh-task ID]`: downloads in a background session as PLAN says, and
///   reports when the system wakes it for the session's events (see ``TransferProbe``).
/// - no arguments: an idle app (the daemon-memory benchmark installs a hundred of them).
///
/// With any of them, `--hold-memory MIB` makes it map MIB MiB of anonymous memory while launching and write every
/// page, and hold it until it exits: an app of a known size for the memory-pressure benchmark.
@MainActor
final class ProbeDelegate: ApplicationDelegate {
    struct ScaleOptions {
        var report: String
        var submit: Int
        var exit: Bool
        var holdTask: Bool
        var listen: String?
    }

    enum Mode {
        case calls(count: Int, warmup: Int, echo: String, out: String)
        case lifecycle(report: String)
        case scale(ScaleOptions)
        case voip(connect: String, report: String)
        case accessory(path: String, report: String)
        case notifyLate(plan: String, report: String, exit: Bool)
        case notifyScale(countFile: String, report: String, listen: String?)
        case push(report: String, exit: Bool)
        case transfers(plan: String, report: String, refreshTask: String?)
        case idle
    }

    let mode: Mode
    /// MiB to hold from launch (`--hold-memory`), and where they are.
    let holdMiB: Int
    var held: UnsafeMutableRawPointer?
    var voip: VoIPProbe?
    var accessory: AccessoryProbe?
    var lateness: LatenessProbe?
    var notificationScale: NotificationScaleProbe?
    var push: PushProbe?
    var transfers: TransferProbe?
    var callsStarted = false
    var scaleSubmitted = 0
    var scaleRefused: [String] = []
    var scaleReported = false
    var heldTask = BackgroundTaskIdentifier.invalid
    var reportSocket: Int32 = -1
    var willEnterForeground: (UInt64, UInt64) = (0, 0)
    var willResignActive: (UInt64, UInt64) = (0, 0)
    var didEnterBackground: (UInt64, UInt64) = (0, 0)

    init(arguments: [String]) {
        func value(_ flag: String) -> String? {
            guard let index = arguments.firstIndex(of: flag), arguments.indices.contains(index + 1) else { return nil }
            return arguments[index + 1]
        }
        holdMiB = value("--hold-memory").flatMap(Int.init) ?? 0
        if arguments.contains("--calls"), let echo = value("--echo"), let out = value("--out") {
            mode = .calls(
                count: value("--count").flatMap(Int.init) ?? 10_000, warmup: value("--warmup").flatMap(Int.init) ?? 500,
                echo: echo, out: out)
        } else if arguments.contains("--lifecycle"), let report = value("--report") {
            mode = .lifecycle(report: report)
        } else if arguments.contains("--voip"), let connect = value("--connect"), let report = value("--report") {
            mode = .voip(connect: connect, report: report)
        } else if let path = value("--accessory"), let report = value("--report") {
            mode = .accessory(path: path, report: report)
        } else if let plan = value("--notify-late"), let report = value("--report") {
            mode = .notifyLate(plan: plan, report: report, exit: arguments.contains("--exit"))
        } else if let countFile = value("--notify-scale"), let report = value("--report") {
            mode = .notifyScale(countFile: countFile, report: report, listen: value("--listen"))
        } else if arguments.contains("--push"), let report = value("--report") {
            mode = .push(report: report, exit: arguments.contains("--exit"))
        } else if let plan = value("--transfers"), let report = value("--report") {
            mode = .transfers(plan: plan, report: report, refreshTask: value("--refresh-task"))
        } else if arguments.contains("--scale"), let report = value("--report") {
            mode = .scale(
                ScaleOptions(
                    report: report, submit: value("--submit").flatMap(Int.init) ?? 0, exit: arguments.contains("--exit"),
                    holdTask: arguments.contains("--hold-task"), listen: value("--listen")))
        } else {
            mode = .idle
        }
    }

    func application(_ application: Application, didFinishLaunchingWithOptions options: LaunchOptions) -> Bool {
        if holdMiB > 0 { holdMemory() }
        if case .voip(let connect, let report) = mode {
            voip = VoIPProbe(report: report)
            voip?.start(connect: connect)
        }
        if case .accessory(let path, let report) = mode {
            accessory = AccessoryProbe(path: path, report: report)
            accessory?.start()
        }
        if case .notifyLate(let plan, let report, let exit) = mode {
            lateness = LatenessProbe(plan: plan, report: report, exit: exit)
            lateness?.start()
        }
        if case .notifyScale(let countFile, let report, let listen) = mode {
            notificationScale = NotificationScaleProbe(countFile: countFile, report: report, listen: listen)
            notificationScale?.start()
        }
        if case .push(let report, let exit) = mode {
            push = PushProbe(report: report, exit: exit)
            push?.start()
        }
        if case .transfers(let plan, let report, let refreshTask) = mode {
            transfers = TransferProbe(plan: plan, report: report, refreshTask: refreshTask)
            transfers?.launched()
        }
        guard case .scale(let options) = mode else { return true }
        if let listen = options.listen {
            // Bound before launching finishes, so the benchmark can send to it as soon as the app is active.
            do {
                let socket = try UnixSocket.bindDatagram(path: listen)
                Thread.detachNewThread { ConcurrentCalls(socket: socket).serve() }
            } catch {
                print("probe: cannot listen at \(listen): \(error)")
            }
        }
        // Requests due two hours ahead and later: the scheduler keeps them pending, as most requests of a phone are.
        for index in 0..<options.submit {
            let identifier = ScaleManifest.identifier(index)
            let request: TaskRequest
            if index == 0 {
                request = AppRefreshTaskRequest(identifier: identifier)
            } else {
                let processing = ProcessingTaskRequest(identifier: identifier)
                processing.requiresExternalPower = index % 2 == 0
                processing.requiresNetworkConnectivity = index % 3 == 0
                request = processing
            }
            request.earliestBeginDate = Date(timeIntervalSinceNow: 7_200 + Double(index) * 600)
            do {
                try TaskScheduler.shared.submit(request)
                scaleSubmitted += 1
            } catch {
                scaleRefused.append("\(identifier): \(error)")
            }
        }
        return true
    }

    /// Maps `holdMiB` MiB and writes every page, so all of it is the app's (charged to its memory group) before it
    /// becomes active; kept until the process ends.
    func holdMemory() {
        let length = holdMiB << 20
        guard let memory = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
            memory != UnsafeMutableRawPointer(bitPattern: -1)
        else {
            print("probe: cannot map \(holdMiB) MiB: errno \(errno)")
            return
        }
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let bytes = memory.assumingMemoryBound(to: UInt8.self)
        for offset in stride(from: 0, to: length, by: page) { bytes[offset] = 0x5A }
        held = memory
    }

    // The handlers take their timestamps first and last, so what they report is the app's own time and the rest
    // of a measured interval is the system's.

    func applicationDidBecomeActive(_ application: Application) {
        let now = MonotonicClock.now()
        switch mode {
        case .scale(let options):
            guard !scaleReported else { return }
            scaleReported = true
            let ready = ScaleReady(
                app: ProcessInfo.processInfo.environment["OFFSTAGE_APP_ID"] ?? "?", pid: getpid(),
                submitted: scaleSubmitted, refused: scaleRefused.count,
                firstError: (scaleRefused.first ?? "").replacingOccurrences(of: "\t", with: " "))
            do {
                let socket = try UnixSocket.datagram()
                try UnixSocket.send(socket, datagram: ready.encoded, to: options.report)
                close(socket)
            } catch {
                print("probe: cannot report to \(options.report): \(error)")
            }
            // After this handler returns, so its CallbackDone goes out first.
            if options.exit { DispatchQueue.main.async { exit(0) } }
        case .calls(let count, let warmup, let echo, let out):
            guard !callsStarted else { return }
            callsStarted = true
            // Off the main actor: the calls are synchronous, and the main queue must stay free for callbacks.
            Thread.detachNewThread {
                CallsMeasurement(count: count, warmup: warmup, echoPath: echo, outPath: out).run()
            }
        case .lifecycle(let report):
            let stamp = LifecycleStamp(
                didBecomeActive: now, willEnterForeground: willEnterForeground, willResignActive: willResignActive,
                didEnterBackground: didEnterBackground)
            willEnterForeground = (0, 0)
            do {
                if reportSocket < 0 { reportSocket = try UnixSocket.datagram() }
                try UnixSocket.send(reportSocket, datagram: stamp.encoded, to: report)
            } catch {
                print("probe: cannot report to \(report): \(error)")
            }
        case .notifyLate:
            lateness?.becameActive()
        case .notifyScale:
            notificationScale?.becameActive()
        case .transfers:
            transfers?.becameActive()
        case .idle, .voip, .accessory, .push:
            break
        }
    }

    func applicationWillEnterForeground(_ application: Application) {
        let start = MonotonicClock.now()
        willEnterForeground = (start, MonotonicClock.now())
    }

    func applicationWillResignActive(_ application: Application) {
        let start = MonotonicClock.now()
        willResignActive = (start, MonotonicClock.now())
    }

    func applicationDidEnterBackground(_ application: Application) {
        let start = MonotonicClock.now()
        didEnterBackground = (start, MonotonicClock.now())
        if case .scale(let options) = mode, options.holdTask, heldTask == .invalid {
            // Held until the budget runs out (the scale benchmark's daemon gives hours): the app keeps running.
            heldTask = application.beginBackgroundTask(withName: "hold") { [self] in
                application.endBackgroundTask(heldTask)
                heldTask = .invalid
            }
        }
    }
}

/// The identifiers the scale benchmark's apps list in their manifest and submit requests for.
enum ScaleManifest {
    static func identifier(_ index: Int) -> String { "bench.task\(index)" }
}

/// Rounds of concurrent SDK calls for the scale benchmark: waits for `go COUNT FILE` datagrams on its own thread and
/// answers each with COUNT timed `beginBackgroundTask`/`endBackgroundTask` pairs, reported in FILE.
struct ConcurrentCalls {
    let socket: Int32

    func serve() {
        while true {
            guard let bytes = try? UnixSocket.receiveDatagram(socket, timeoutMilliseconds: -1) else { continue }
            let words = String(decoding: bytes, as: UTF8.self).split(separator: " ")
            guard words.count == 3, words[0] == "go", let count = Int(words[1]) else { continue }
            let report = round(count)
            let path = String(words[2])
            do {
                let data = try JSONEncoder().encode(report)
                try data.write(to: URL(fileURLWithPath: path + ".tmp"))
                rename(path + ".tmp", path)
            } catch {
                print("probe: cannot write \(path): \(error)")
            }
        }
    }

    func round(_ count: Int) -> ConcurrentCallsReport {
        let application = Application.shared
        var report = ConcurrentCallsReport()
        report.app = ProcessInfo.processInfo.environment["OFFSTAGE_APP_ID"] ?? "?"
        report.begin.reserveCapacity(count)
        report.end.reserveCapacity(count)
        report.start = MonotonicClock.now()
        for _ in 0..<count {
            let t0 = MonotonicClock.now()
            let task = application.beginBackgroundTask(withName: "load")
            let t1 = MonotonicClock.now()
            application.endBackgroundTask(task)
            let t2 = MonotonicClock.now()
            if task == .invalid { report.invalidTasks += 1 }
            report.begin.append(t1 - t0)
            report.end.append(t2 - t1)
        }
        report.finish = MonotonicClock.now()
        return report
    }
}

/// The SDK-call measurement: real SDK calls on one thread, and bare round trips of the same sizes on the same
/// thread, in alternating blocks so that both see the same background noise.
struct CallsMeasurement {
    let count: Int
    let warmup: Int
    let echoPath: String
    let outPath: String
    static let blocks = 10

    func run() {
        do {
            let report = try measure()
            let data = try JSONEncoder().encode(report)
            // Written under another name, then renamed: the benchmark never reads half a report.
            let temporary = outPath + ".tmp"
            try data.write(to: URL(fileURLWithPath: temporary))
            rename(temporary, outPath)
        } catch {
            print("probe: calls measurement failed: \(error)")
            try? Data("error: \(error)".utf8).write(to: URL(fileURLWithPath: outPath))
        }
    }

    func measure() throws -> CallsReport {
        let application = Application.shared
        var report = CallsReport()

        // The exact bytes the SDK puts on the wire, from the protocol's own encoder and a real reply's values.
        let probe = application.beginBackgroundTask(withName: "bench")
        let remaining = application.backgroundTimeRemaining
        application.endBackgroundTask(probe)
        let beginRequest = try VarlinkCodec.encodeCall(
            AppInterface.Method.beginBackgroundTask, AppInterface.BeginParameters(name: "bench")).count + 1
        let beginReply = try VarlinkCodec.encodeReply(
            AppInterface.BeginReply(id: probe.rawValue, timeRemaining: remaining)).count + 1
        let endRequest = try VarlinkCodec.encodeCall(
            AppInterface.Method.endBackgroundTask, AppInterface.EndParameters(id: probe.rawValue)).count + 1
        let endReply = try VarlinkCodec.encodeReply(AppInterface.EndReply(ended: true)).count + 1
        report.sizes = [beginRequest, beginReply, endRequest, endReply]

        let echo = try UnixSocket.connect(path: echoPath)
        defer { close(echo) }
        let beginBytes = EchoWire.request(size: beginRequest, replySize: beginReply)
        let endBytes = EchoWire.request(size: endRequest, replySize: endReply)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 65536, alignment: 8)
        defer { buffer.deallocate() }

        func bareRoundTrip(_ request: [UInt8]) throws {
            try request.withUnsafeBytes { try UnixSocket.writeAll(echo, $0) }
            guard try UnixSocket.readMessage(echo, into: buffer) > 0 else {
                throw SystemCallError("the echo server closed the connection", code: EPIPE)
            }
        }

        func sdkPairs(_ n: Int, record: Bool) {
            for _ in 0..<n {
                let t0 = MonotonicClock.now()
                let task = application.beginBackgroundTask(withName: "bench")
                let t1 = MonotonicClock.now()
                application.endBackgroundTask(task)
                let t2 = MonotonicClock.now()
                if task == .invalid { report.invalidTasks += 1 }
                if record {
                    report.begin.append(t1 - t0)
                    report.end.append(t2 - t1)
                    report.pair.append(t2 - t0)
                }
            }
        }

        func barePairs(_ n: Int, record: Bool) throws {
            for _ in 0..<n {
                let t0 = MonotonicClock.now()
                try bareRoundTrip(beginBytes)
                let t1 = MonotonicClock.now()
                try bareRoundTrip(endBytes)
                let t2 = MonotonicClock.now()
                if record {
                    report.bareBegin.append(t1 - t0)
                    report.bareEnd.append(t2 - t1)
                    report.barePair.append(t2 - t0)
                }
            }
        }

        sdkPairs(warmup, record: false)
        try barePairs(warmup, record: false)
        let perBlock = max(count / Self.blocks, 1)
        // The daemon launched this process, so it is the parent.
        let daemon = getppid()
        let daemonStart = MonotonicClock.processCPU(daemon) ?? 0
        for _ in 0..<Self.blocks {
            var cpu = MonotonicClock.threadCPU()
            sdkPairs(perBlock, record: true)
            report.sdkClientCPU += MonotonicClock.threadCPU() - cpu
            cpu = MonotonicClock.threadCPU()
            try barePairs(perBlock, record: true)
            report.bareClientCPU += MonotonicClock.threadCPU() - cpu
        }
        report.daemonCPU = (MonotonicClock.processCPU(daemon) ?? daemonStart) - daemonStart
        return report
    }
}

@main
struct OffstageBenchProbe {
    @MainActor static func main() {
        Application.main(delegate: ProbeDelegate(arguments: CommandLine.arguments))
    }
}
