import Foundation
import OffstageDaemon
import OffstageProtocol
import OffstageSimulator

/// Local notifications under kill -9 (SPEC NT-1, NT-2, §11: "delivers no notification twice", "loses no pending
/// notification"). The harness schedules notifications with unique identifiers from inside a real app — a small
/// client placed in the app's cgroup, so the daemon sees the app as the caller, as it sees the SDK — due a fraction of
/// a second to a few seconds ahead, and kills the daemon in the middle of the `Add` calls, a few milliseconds either
/// side of a due time, and during a burst of notifications due at the same instant. ``NotificationLedger`` is what it
/// knows of each request; `checkNotifications` compares it with the daemon's delivered and pending lists.
extension HarnessApp {
    /// The app whose notifications the harness schedules: the Alarm example, which answers a will-present with a
    /// banner (so a notification that fires with it in front reaches the user's list too). Its own `alarm` is a day
    /// ahead and never fires in a run. The random operations never touch it (no uninstall, no settings, no force-quit),
    /// so every notification acknowledged must fire.
    static var alarm: HarnessApp {
        HarnessApp(
            id: "com.crash.alarm", example: "Alarm", manifest: ["OffstageLinux": ["Arguments": ["--in-seconds", "86400"]]])
    }
}

/// What the harness knows of every notification it asked for.
struct NotificationLedger {
    /// What came of an `Add`.
    enum Outcome: Equatable {
        /// The reply came back: it must fire (once, for a non-repeating one).
        case acknowledged
        /// Sent, and the daemon was killed before the reply: it may fire once or never, never twice.
        case uncertain
        /// Never written to the socket (the kill came first): it must never fire.
        case neverSent
        /// Refused with this error: it must never fire.
        case refused(String)
    }

    struct Tracked {
        var identifier: String
        /// The repeat interval of a repeating time-interval trigger, in seconds; nil for one that fires once.
        var step: Double?
        var outcome: Outcome
        /// The due time the `Add` reply gave (seconds since the epoch).
        var due: Double?
        /// When the harness meant it to fire.
        var aimed: Double
        /// The first due time of a repeating one: the reply's, or learned from its pending entry.
        var firstDue: Double?
    }

    var tracked: [String: Tracked] = [:]
    /// Identifiers in the order they were asked for.
    var order: [String] = []
    var counter = 0
    /// Problems already reported, so a lasting one is printed once, not after every restart.
    var reported: Set<String> = []
    /// Identifiers found lost, duplicated, overdue (pending well after their due time after a restart), or with a
    /// wrong late flag or due time.
    var lost: Set<String> = []
    var duplicated: Set<String> = []
    var overdue: Set<String> = []
    var wrongLate: Set<String> = []
    var wrongDue: Set<String> = []

    mutating func newIdentifier(cycle: Int) -> String {
        counter += 1
        return "n\(cycle)-\(counter)"
    }

    /// The repeating requests that may be pending (acknowledged or cut off by a kill).
    var liveRepeating: [Tracked] {
        order.compactMap { tracked[$0] }.filter { $0.step != nil && ($0.outcome == .acknowledged || $0.outcome == .uncertain) }
    }

    /// Due times ahead of `now` the harness may aim a kill at: acknowledged one-shot ones and the next time of each
    /// repeating one.
    func dueTimes(after now: Double) -> [Double] {
        var times: [Double] = []
        for identifier in order {
            guard let entry = tracked[identifier], entry.outcome == .acknowledged else { continue }
            if let step = entry.step, let first = entry.firstDue {
                let slot = max(0, ((now - first) / step).rounded(.down) + 1)
                times.append(first + slot * step)
            } else if let due = entry.due, due > now {
                times.append(due)
            }
        }
        return times.filter { $0 > now }.sorted()
    }
}

/// The notification figures of a run.
struct NotificationFigures {
    var batches = 0
    var skippedBatches = 0
    var requested = 0
    var acknowledged = 0
    var uncertain = 0
    var neverSent = 0
    var refused: [String: Int] = [:]
    var repeating = 0
    /// Kills the harness aimed: in the middle of an Add batch (with a call unanswered), a few ms either side of a due
    /// time, a few ms after the due time of a burst.
    var killsMidAdd = 0
    var killsAimedAtDue = 0
    var killsAimedAtBurst = 0
    /// Kills 0–150 ms after spawning the daemon, in the middle of its start-up.
    var killsDuringStart = 0
    /// From the final lists.
    var fired = 0
    var firedOneShot = 0
    var firedRepeating = 0
    var uncertainFired = 0
    var late = 0
    /// Deliveries whose wait crossed a time the daemon was down (from a kill to the next start's first answer): due
    /// while it was down, or due just before a kill that came before the firing; and how many of those came late.
    var acrossRestart = 0
    var lateAcrossRestart = 0
    var coalesced = 0
    var awaitingApp = 0
    var killsWithin5ms = 0
    var killsWithin50ms = 0
    var killsInBurst = 0
    var burstDues = 0
    var delaysWhileUp: [Double] = []
    /// The one of those that came last after its due time.
    var slowest: (identifier: String, due: Double, delay: Double)?
    var lost = 0
    var duplicated = 0
    var overdue = 0
    var wrongLate = 0
    var wrongDue = 0

    var summary: String {
        let sorted = delaysWhileUp.sorted()
        func quantile(_ q: Double) -> Double { sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int(Double(sorted.count) * q))] }
        let ms = { (value: Double) in String(format: "%.1f", value * 1000) }
        let refusals = refused.isEmpty ? "" : " (" + refused.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ") + ")"
        return """
            notifications: \(requested) asked for in \(batches) batches (\(skippedBatches) skipped): \(acknowledged) acknowledged \
            (\(repeating) repeating), \(uncertain) cut off by a kill (\(uncertainFired) of them fired), \(neverSent) never sent, \
            \(refused.values.reduce(0, +)) refused\(refusals)
            notifications fired: \(fired) (\(firedOneShot) one-shot, \(firedRepeating) repeats), \(late) late, \(coalesced) \
            repeats coalesced after a late firing, \(awaitingApp) awaiting the app at the end; \(acrossRestart) fired after a restart \
            (\(lateAcrossRestart) of them late); the others' delay p50 \(ms(quantile(0.5))) ms, p99 \(ms(quantile(0.99))) ms, \
            max \(ms(sorted.last ?? 0)) ms\(slowest.map { " (\($0.identifier), due \(instant($0.due)))" } ?? "")
            notification kills: \(killsMidAdd) in the middle of Add calls, \(killsAimedAtDue) aimed at a due time, \
            \(killsAimedAtBurst) at a burst, \(killsDuringStart) during start-up; \(killsWithin5ms) within 5 ms of a due time, \(killsWithin50ms) within 50 ms, \
            \(killsInBurst) during a burst (\(burstDues) bursts of 3 or more)
            notifications lost: \(lost), duplicated: \(duplicated), overdue after a restart: \(overdue), wrong late flag: \
            \(wrongLate), wrong due time: \(wrongDue)
            """
    }
}

/// How a cycle's end is aimed, when it schedules notifications.
enum NotificationKill {
    /// As without notifications: after the operations, or in the middle of the last one.
    case ordinary
    /// In the middle of the batch of `Add` calls.
    case midAdd
    /// A few milliseconds either side of a due time.
    case atDue
    /// A few milliseconds after the due time of a burst of notifications due at the same instant.
    case burst
}

/// The client that runs inside the app's cgroup: `CrashHarness --add-client SOCKET REQUESTS_JSON`. It prints
/// `connected`, then for each request `sent ID` before writing it and `ok ID DUE`, `refused ID ERROR` or `cut ID` (the
/// connection closed: the daemon was killed) after.
enum AddClient {
    static func run(socket: String, requests json: String) -> Never {
        // Unbuffered: the harness acts on each line as it comes.
        func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }
        guard let requests = try? JSONDecoder().decode([NotificationsInterface.RequestMessage].self, from: Data(json.utf8)) else {
            say("bad requests")
            exit(2)
        }
        guard let connection = try? VarlinkConnection(path: socket) else {
            say("no connection")
            exit(1)
        }
        say("connected")
        for request in requests {
            say("sent \(request.identifier)")
            do {
                let reply = try connection.call(
                    NotificationsInterface.Method.add, NotificationsInterface.AddParameters(request: request),
                    as: NotificationsInterface.AddReply.self, timeout: .seconds(30))
                say("ok \(request.identifier) \(reply.due)")
            } catch let error as VarlinkError {
                say("refused \(request.identifier) \(error.name)")
            } catch {
                say("cut \(request.identifier)")
                exit(0)
            }
        }
        exit(0)
    }
}

extension CrashRun {
    /// Installs the notification app (at the first start; it stays installed for the whole run).
    func installNotificationApp() throws {
        let output = try daemon.cli(["install", bundlePath(HarnessApp.alarm)])
        guard output.status == 0 else { throw HarnessFailure("install \(HarnessApp.alarm.id) failed: \(output.stderr)") }
    }

    /// Whether this cycle schedules notifications, and how its kill is aimed.
    func notificationPlan() -> NotificationKill? {
        switch notificationRandom.index(below: 100) {
        case 0..<35: nil
        case 35..<50: .ordinary
        case 50..<70: .midAdd
        case 70..<90: .atDue
        default: .burst
        }
    }

    /// The notification app's process, opened in front (unlocking if need be), or nil with the reason.
    func alarmInFront() throws -> (pid: Int32?, problem: String?) {
        let id = HarnessApp.alarm.id
        var output = try daemon.cli(["open", id])
        if output.status != 0, output.stderr.lowercased().contains("lock") {
            _ = try daemon.cli(["unlock"])
            output = try daemon.cli(["open", id])
        }
        guard output.status == 0 else { return (nil, "open \(id): \(output.stderr.split(separator: "\n").first ?? "")") }
        let deadline = Date().addingTimeInterval(5)
        repeat {
            if let app = try daemon.apps().first(where: { $0.id == id }), let pid = app.pid, app.state != "suspended" {
                seenPids.insert(pid)
                return (pid, nil)
            }
            usleep(20_000)
        } while Date() < deadline
        return (nil, "\(id) has no running process after open")
    }

    /// The `cgroup.procs` file of the cgroup that names the app of process `pid` to the daemon.
    func cgroupProcs(of pid: Int32) -> String? {
        let mounts = CgroupMounts.current()
        let lines = ((try? String(contentsOfFile: "/proc/\(pid)/cgroup", encoding: .utf8)) ?? "").split(separator: "\n")
        var candidates: [String] = []
        for line in lines {
            let parts = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
            guard parts.count == 3, parts[2].contains("offstage.") else { continue }
            let mount = parts[0] == "0" ? mounts.unified : parts[1].split(separator: ",").contains("freezer") ? mounts.freezer : nil
            guard let mount else { continue }
            let relative = mount.root == "/" ? parts[2] : String(parts[2].dropFirst(mount.root.count))
            let file = mount.mountPoint + relative + "/cgroup.procs"
            if parts[0] == "0" { candidates.insert(file, at: 0) } else { candidates.append(file) }
        }
        return candidates.first { FileManager.default.fileExists(atPath: $0) }
    }

    /// A batch of requests: one-shot time-interval and date triggers due 0.2–3 s ahead, for `.burst` several date
    /// triggers due at the same instant, and now and then a repeating time interval.
    func makeBatch(burst: Bool) -> (requests: [NotificationsInterface.RequestMessage], burst: Set<String>) {
        var requests: [NotificationsInterface.RequestMessage] = []
        var burstIdentifiers: Set<String> = []
        let now = Date().timeIntervalSince1970
        func request(_ trigger: NotificationsInterface.TriggerMessage, aimed: Double, step: Double? = nil) {
            let identifier = notifications.newIdentifier(cycle: cycle)
            notifications.tracked[identifier] = NotificationLedger.Tracked(
                identifier: identifier, step: step, outcome: .neverSent, due: nil, aimed: aimed, firstDue: nil)
            notifications.order.append(identifier)
            requests.append(
                NotificationsInterface.RequestMessage(
                    identifier: identifier, content: NotificationsInterface.ContentMessage(title: "crash", body: identifier),
                    trigger: trigger))
        }
        let count = 1 + notificationRandom.index(below: 8)
        for _ in 0..<count {
            let ahead = (notificationRandom.uniform(0.2, 3.0) * 1000).rounded() / 1000
            if notificationRandom.chance(0.5) {
                request(.init(kind: "timeInterval", repeats: false, seconds: ahead), aimed: now + ahead)
            } else {
                let date = ((now + ahead) * 1000).rounded() / 1000
                request(.init(kind: "date", date: date), aimed: date)
            }
        }
        if burst {
            let date = ((now + notificationRandom.uniform(0.5, 2.5)) * 1000).rounded() / 1000
            for _ in 0..<(4 + notificationRandom.index(below: 9)) {
                request(.init(kind: "date", date: date), aimed: date)
                burstIdentifiers.insert(requests[requests.count - 1].identifier)
            }
        }
        // A few repeating ones over a run, every 2 to 4 s (the harness lowers the 60 s minimum, a daemon setting).
        if notifications.liveRepeating.count < 3, notificationRandom.chance(0.2) {
            let step = Double(2 + notificationRandom.index(below: 3))
            request(.init(kind: "timeInterval", repeats: true, seconds: step), aimed: now + step, step: step)
        }
        // The order of the calls is shuffled, so a kill in the middle cuts a mix.
        for index in requests.indices.reversed() where index > 0 {
            requests.swapAt(index, notificationRandom.index(below: index + 1))
        }
        return (requests, burstIdentifiers)
    }

    /// Opens the notification app and adds a batch of requests from inside it; with `killing`, kills the daemon a
    /// moment around one of the calls (in the middle of the calls, mostly). Returns whether it killed, and
    /// the due time of the burst if one was asked for and acknowledged.
    func scheduleNotifications(burst: Bool, killing: Bool) throws -> (killed: Bool, burstDue: Double?) {
        let (pid, problem) = try alarmInFront()
        guard let pid, let procs = cgroupProcs(of: pid) else {
            report.notifications.skippedBatches += 1
            FileHandle.standardError.write(Data("cycle \(cycle): no notification batch: \(problem ?? "no cgroup for the app")\n".utf8))
            return (false, nil)
        }
        let (requests, burstIdentifiers) = makeBatch(burst: burst)
        report.notifications.batches += 1
        report.notifications.requested += requests.count
        let payload = String(decoding: try JSONEncoder().encode(requests), as: UTF8.self)
        let client = Process()
        client.executableURL = URL(fileURLWithPath: "/bin/sh")
        client.arguments = [
            "-c", "echo $$ > \"$0\" && exec \"$1\" --add-client \"$2\" \"$3\"", procs,
            HarnessDaemon.products.appendingPathComponent("CrashHarness").path, daemon.socket, payload,
        ]
        let out = Pipe()
        client.standardOutput = out
        try client.run()
        clientPids.insert(client.processIdentifier)
        defer { clientPids.remove(client.processIdentifier) }
        let reader = LineReader(fd: out.fileHandleForReading.fileDescriptor)
        var killed = false
        // Aimed at one of the calls: as the client says it sends it, or up to a millisecond later (each Add is a
        // write to the store, a millisecond or so).
        let aim = requests[notificationRandom.index(below: requests.count)].identifier
        if killing, reader.waitFor(line: "sent \(aim)", seconds: 20) {
            usleep(UInt32(notificationRandom.index(below: 1_001)))
            daemon.crash()
            killed = true
        }
        if !reader.readToEnd(seconds: 60) {
            kill(client.processIdentifier, SIGKILL)
            violation("the Add client in the notification app did not finish within 60 s")
        }
        client.waitUntilExit()
        var sent: Set<String> = []
        var unanswered = false
        for line in reader.lines {
            let words = line.split(separator: " ").map(String.init)
            guard words.count >= 2 else { continue }
            let identifier = words[1]
            switch words[0] {
            case "sent": sent.insert(identifier)
            case "ok":
                guard words.count == 3, let due = Double(words[2]) else { continue }
                notifications.tracked[identifier]?.outcome = .acknowledged
                notifications.tracked[identifier]?.due = due
                if notifications.tracked[identifier]?.step != nil { notifications.tracked[identifier]?.firstDue = due }
            case "refused":
                let name = words.count > 2 ? words[2] : "?"
                notifications.tracked[identifier]?.outcome = .refused(name)
                report.notifications.refused[String(name.split(separator: ".").last ?? "?"), default: 0] += 1
            default: break
            }
        }
        for request in requests {
            guard let entry = notifications.tracked[request.identifier] else { continue }
            switch entry.outcome {
            case .acknowledged:
                report.notifications.acknowledged += 1
                if entry.step != nil { report.notifications.repeating += 1 }
            case .neverSent where sent.contains(request.identifier):
                notifications.tracked[request.identifier]?.outcome = .uncertain
                report.notifications.uncertain += 1
                unanswered = true
                if !killed { violation("Add \(request.identifier) got no reply, and the daemon was not killed") }
            case .neverSent:
                report.notifications.neverSent += 1
                unanswered = true
            case .uncertain, .refused: break
            }
        }
        if killed && unanswered { report.notifications.killsMidAdd += 1 }
        if !killed, !reader.lines.contains("connected") {
            violation("the Add client could not connect: \(reader.lines.joined(separator: " | "))")
        }
        let burstDue = burstIdentifiers.compactMap { notifications.tracked[$0]?.due }.first
        return (killed, burstDue)
    }

    /// Kills the daemon a few milliseconds either side of a due time ahead (or after a burst's due time); without one
    /// ahead, at once. Returns at what the kill was aimed (`.burst` or `.atDue`), nil if at nothing.
    func killAroundDue(burstDue: Double?) -> NotificationKill? {
        let now = Date().timeIntervalSince1970
        var target: Double?
        var aim: NotificationKill?
        if let burstDue, burstDue > now + 0.005 {
            target = burstDue + notificationRandom.uniform(0, 0.004)
            aim = .burst
        } else {
            // The nearest (the run's time goes mostly into waiting for it).
            if let due = notifications.dueTimes(after: now + 0.010).first {
                // Half of them within 2 ms of the due time, the rest within 8 ms.
                let reach = notificationRandom.chance(0.5) ? 0.002 : 0.008
                target = due + notificationRandom.uniform(-reach, reach)
                aim = .atDue
            }
        }
        if let target {
            // Sleep to just before, then spin: usleep alone overshoots by up to a millisecond on a busy machine.
            let sleep = target - Date().timeIntervalSince1970 - 0.002
            if sleep > 0 { usleep(UInt32(sleep * 1_000_000)) }
            while Date().timeIntervalSince1970 < target {}
        }
        daemon.crash()
        return aim
    }
}

/// Reads a pipe line by line with deadlines, so the harness can act on a line while the writer runs on.
final class LineReader {
    let fd: Int32
    private var buffer: [UInt8] = []
    private(set) var lines: [String] = []
    private var ended = false

    init(fd: Int32) { self.fd = fd }

    /// Reads what is there within `timeout` ms; false at the end of the stream.
    private func readSome(timeout: Int32) -> Bool {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, timeout) > 0 else { return true }
        var chunk = [UInt8](repeating: 0, count: 4096)
        let count = read(fd, &chunk, chunk.count)
        guard count > 0 else {
            ended = true
            return false
        }
        buffer += chunk[0..<count]
        while let newline = buffer.firstIndex(of: 10) {
            lines.append(String(decoding: buffer[0..<newline], as: UTF8.self))
            buffer.removeFirst(newline + 1)
        }
        return true
    }

    /// Waits until `line` was read; false at the end of the stream or after `seconds`.
    func waitFor(line: String, seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while !lines.contains(line) {
            if ended || Date() > deadline { return false }
            _ = readSome(timeout: 50)
        }
        return true
    }

    /// Reads to the end of the stream; false if it did not end within `seconds`.
    func readToEnd(seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while !ended {
            if Date() > deadline { return false }
            _ = readSome(timeout: 50)
        }
        return true
    }
}
