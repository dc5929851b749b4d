import Foundation
import Offstage
import OffstageBenchKit

/// What both notification probes do at launch: add their notifications through the SDK, counting those refused, and
/// once that is done and the app is active, hand a ``ScaleReady`` to `report` (once).
@MainActor
final class LaunchAdds {
    private var added = 0
    private var refused: [String] = []
    private var addsDone = false
    private var active = false
    private var reported = false
    private let report: (ScaleReady) -> Void

    init(report: @escaping (ScaleReady) -> Void) {
        self.report = report
    }

    /// Adds `requests` (each with the name a refusal is reported under), then reports if the app is active.
    func add(_ requests: [(name: String, request: NotificationRequest)]) async {
        let center = UserNotificationCenter.current()
        for (name, request) in requests {
            do {
                try await center.add(request)
                added += 1
            } catch {
                refused.append("\(name): \(error)")
            }
        }
        addsDone = true
        reportIfReady()
    }

    /// Nothing will be added: `reason` is reported as the one refusal.
    func cannotAdd(_ reason: String) {
        refused.append(reason)
        addsDone = true
        reportIfReady()
    }

    func becameActive() {
        active = true
        reportIfReady()
    }

    private func reportIfReady() {
        guard addsDone, active, !reported else { return }
        reported = true
        report(
            ScaleReady(
                app: ProcessInfo.processInfo.environment["OFFSTAGE_APP_ID"] ?? "?", pid: getpid(), submitted: added,
                refused: refused.count, firstError: (refused.first ?? "").replacingOccurrences(of: "\t", with: " ")))
    }
}

/// The probe's `--notify-late PLAN --report SOCKET [--exit]` mode, for the notification lateness benchmark: at launch
/// it reads PLAN (`START_MS STEP_MS COUNT PREFIX`, one line) and adds COUNT notifications through the SDK, `PREFIX-i`
/// due at START_MS + i·STEP_MS milliseconds since the epoch (a ``DateNotificationTrigger``); once they are added and
/// the app is active it sends `ready ADDED REFUSED FIRST_ERROR` (a ``ScaleReady``) to the report socket, and with
/// `--exit` exits, so its notifications go to the user. Without `--exit` it stays in front, and its will-present
/// handler sends, as its first act after reading the clock, `IDENTIFIER HANDLER_NS DUE_NS DELIVERED_NS`: when the
/// handler began (CLOCK_REALTIME), the due time and the delivery time the daemon gave (both whole milliseconds on
/// the wire, read back to the nanosecond) — then keeps the notification with the app.
@MainActor
final class LatenessProbe: UserNotificationCenterDelegate {
    let plan: String
    let report: String
    let exitWhenDone: Bool
    var reportSocket: Int32 = -1
    private var adds: LaunchAdds!

    init(plan: String, report: String, exit: Bool) {
        self.plan = plan
        self.report = report
        self.exitWhenDone = exit
        adds = LaunchAdds { [unowned self] ready in
            send(ready.encoded)
            // After this handler returns, so its CallbackDone goes out first.
            if exitWhenDone { DispatchQueue.main.async { Foundation.exit(0) } }
        }
    }

    func start() {
        UserNotificationCenter.current().delegate = self
        do {
            reportSocket = try UnixSocket.datagram()
        } catch {
            print("probe: no report socket: \(error)")
        }
        let words = ((try? String(contentsOfFile: plan, encoding: .utf8)) ?? "").split(whereSeparator: \.isWhitespace)
        guard words.count == 4, let start = Int64(words[0]), let step = Int64(words[1]), let count = Int(words[2]) else {
            adds.cannotAdd("unreadable plan \(plan)")
            return
        }
        let prefix = String(words[3])
        let requests = (0..<count).map { index in
            let due = Date(timeIntervalSince1970: Double(start + Int64(index) * step) / 1000)
            let content = NotificationContent(title: "Due \(index)", body: "Lateness probe notification \(index)")
            let identifier = "\(prefix)-\(index)"
            return (identifier, NotificationRequest(
                identifier: identifier, content: content, trigger: DateNotificationTrigger(date: due)))
        }
        Task { await adds.add(requests) }
    }

    func becameActive() {
        adds.becameActive()
    }

    func userNotificationCenter(
        _ center: UserNotificationCenter, willPresent notification: UserNotification
    ) async -> NotificationPresentationOptions {
        let now = WallClock.now()
        // The wire carries whole milliseconds as seconds in a double: rounding to the millisecond recovers them.
        let due = Int64((notification.dueDate.timeIntervalSince1970 * 1000).rounded()) * 1_000_000
        let delivered = Int64((notification.date.timeIntervalSince1970 * 1e6).rounded()) * 1_000
        send(Array("\(notification.request.identifier) \(now) \(due) \(delivered)".utf8))
        return []
    }

    private func send(_ bytes: [UInt8]) {
        do {
            try UnixSocket.send(reportSocket, datagram: bytes, to: report)
        } catch {
            print("probe: cannot report to \(report): \(error)")
        }
    }
}

/// The probe's `--notify-scale COUNT_FILE --report SOCKET [--listen SOCKET]` mode, for the notification scale
/// benchmark: at launch it reads a number N from COUNT_FILE (so one installed app can add none in one phase of the
/// benchmark and 64 in the next) and adds N notifications through the SDK as an app would — due days ahead, with
/// mixed triggers (time interval, some repeating weekly; calendar dates, some with a time zone; weekly calendar
/// repeats; absolute dates) and realistic content (a title of 10–20 characters, a body of 30–60, a sound or a badge
/// on some, a thread and a small user info). Once they are added and the app is active it sends a ``ScaleReady``
/// (submitted: how many were added) to the report socket; without `--listen` it then exits. With `--listen` it stays
/// and serves datagrams on its own thread: `time N FILE` times N `add` calls of one more notification through the
/// SDK (each removed again, untimed, so the count stays as it was) and writes their durations (ns) as a JSON array to
/// FILE; `exit` ends the process.
@MainActor
final class NotificationScaleProbe {
    let countFile: String
    let report: String
    let listen: String?
    private var adds: LaunchAdds!

    init(countFile: String, report: String, listen: String?) {
        self.countFile = countFile
        self.report = report
        self.listen = listen
        adds = LaunchAdds { [unowned self] ready in
            do {
                let socket = try UnixSocket.datagram()
                try UnixSocket.send(socket, datagram: ready.encoded, to: self.report)
                close(socket)
            } catch {
                print("probe: cannot report to \(self.report): \(error)")
            }
            if self.listen == nil { DispatchQueue.main.async { exit(0) } }
        }
    }

    nonisolated static var appID: String { ProcessInfo.processInfo.environment["OFFSTAGE_APP_ID"] ?? "?" }

    /// The app's own seed for its notifications' content and times: the same in every launch.
    nonisolated static var seed: UInt64 { UInt64(truncatingIfNeeded: appID.stableHash) }

    func start() {
        if let listen {
            do {
                let socket = try UnixSocket.bindDatagram(path: listen)
                Thread.detachNewThread { NotificationAddTimer(socket: socket).serve() }
            } catch {
                print("probe: cannot listen at \(listen): \(error)")
            }
        }
        let text = (try? String(contentsOfFile: countFile, encoding: .utf8)) ?? ""
        let count = Int(text.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        let (seed, now) = (Self.seed, Date())
        let requests = (0..<count).map { index in ("n\(index)", RealisticNotifications.request(index, seed: seed, now: now)) }
        Task { await adds.add(requests) }
    }

    func becameActive() {
        adds.becameActive()
    }
}

/// Times `add` of one more notification through the SDK, on command (see ``NotificationScaleProbe``).
struct NotificationAddTimer: Sendable {
    let socket: Int32

    func serve() {
        var round = 0
        while true {
            guard let bytes = try? UnixSocket.receiveDatagram(socket, timeoutMilliseconds: -1) else { continue }
            let words = String(decoding: bytes, as: UTF8.self).split(separator: " ")
            if words.first == "exit" { exit(0) }
            guard words.count == 3, words[0] == "time", let count = Int(words[1]) else { continue }
            let path = String(words[2])
            round += 1
            let base = round * 100_000
            // Off this thread: the SDK's add is async (it does not suspend: the call is made in place).
            let done = DispatchSemaphore(value: 0)
            Task.detached {
                let samples = await Self.time(count, base: base)
                do {
                    let data = try JSONEncoder().encode(samples)
                    try data.write(to: URL(fileURLWithPath: path + ".tmp"))
                    rename(path + ".tmp", path)
                } catch {
                    print("probe: cannot write \(path): \(error)")
                }
                done.signal()
            }
            done.wait()
        }
    }

    /// `count` timed adds of a new request each (removed again after the timing), due days ahead like the others.
    static func time(_ count: Int, base: Int) async -> [UInt64] {
        let center = UserNotificationCenter.current()
        let seed = NotificationScaleProbe.seed
        let now = Date()
        var samples: [UInt64] = []
        samples.reserveCapacity(count)
        for index in 0..<count {
            let template = RealisticNotifications.request(base + index, seed: seed, now: now)
            let request = NotificationRequest(
                identifier: "one-more-\(base + index)", content: template.content, trigger: template.trigger)
            let start = MonotonicClock.now()
            do {
                try await center.add(request)
            } catch {
                print("probe: add \(request.identifier) failed: \(error)")
                return samples
            }
            samples.append(MonotonicClock.now() - start)
            center.removePendingNotificationRequests(withIdentifiers: [request.identifier])
        }
        return samples
    }
}

extension String {
    /// FNV-1a of the UTF-8 bytes: the same in every process (Swift's `hashValue` is seeded per process).
    var stableHash: Int {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        return Int(truncatingIfNeeded: hash)
    }
}

/// Notifications as apps schedule them: reminders, events and messages due days ahead.
enum RealisticNotifications {
    static let titleWords = [
        "Dentist", "Team", "Standup", "Pay", "rent", "Call", "Mum", "Flight", "to", "Oslo", "Gym", "class", "Water",
        "plants", "Renew", "passport", "Book", "club", "Pick", "up", "parcel", "Invoice", "due", "Yoga", "Review",
    ]
    static let bodyWords = [
        "Don't", "forget", "the", "appointment", "at", "the", "clinic", "on", "Main", "Street", "bring", "your",
        "card", "and", "arrive", "ten", "minutes", "early", "tap", "to", "see", "details", "meeting", "room", "B",
        "is", "booked", "for", "an", "hour", "reply", "if", "you", "cannot", "make", "it",
    ]
    static let zones = ["Europe/Berlin", "America/New_York", "Asia/Tokyo", "UTC"]

    /// A small generator (SplitMix64), so every app's notifications differ but every run is the same.
    struct Generator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        mutating func int(_ range: ClosedRange<Int>) -> Int {
            range.lowerBound + Int(next() % UInt64(range.count))
        }
    }

    /// Words from `words` until `length` characters (cut there).
    static func text(_ words: [String], length: Int, _ generator: inout Generator) -> String {
        var text = ""
        while text.count < length {
            if !text.isEmpty { text += " " }
            text += words[generator.int(0...(words.count - 1))]
        }
        return String(text.prefix(length))
    }

    /// The `index`-th notification of an app whose generator starts at `seed`, scheduled at `now`.
    static func request(_ index: Int, seed: UInt64, now: Date) -> NotificationRequest {
        var generator = Generator(state: seed ^ (UInt64(index) &* 0x2545_F491_4F6C_DD1D))
        var content = NotificationContent(
            title: text(titleWords, length: generator.int(10...20), &generator),
            body: text(bodyWords, length: generator.int(30...60), &generator))
        if index % 3 == 0 { content.sound = .default }
        if index % 5 == 0 { content.badge = index % 9 + 1 }
        content.threadIdentifier = "thread-\(index % 4)"
        content.userInfo = ["id": index, "kind": ["reminder", "event", "message"][index % 3], "ref": "r\(generator.next() % 100_000)"]
        // 2 to 30 days ahead, at a minute of the day.
        let days = Double(generator.int(2...30))
        let seconds = Double(generator.int(0...86_399))
        let ahead = days * 86_400 + seconds
        let trigger: any NotificationTrigger
        switch index % 8 {
        case 0, 1:
            trigger = TimeIntervalNotificationTrigger(timeInterval: ahead, repeats: false)
        case 2:
            // Weekly, counted from when it is added: the first time a week ahead.
            trigger = TimeIntervalNotificationTrigger(timeInterval: 7 * 86_400, repeats: true)
        case 3, 4:
            var calendar = Calendar(identifier: .gregorian)
            let zone = index % 2 == 0 ? TimeZone(identifier: zones[index % zones.count]) : nil
            calendar.timeZone = zone ?? .current
            var components = calendar.dateComponents([.year, .month, .day, .hour, .minute], from: now.addingTimeInterval(ahead))
            components.timeZone = zone
            trigger = CalendarNotificationTrigger(dateMatching: components, repeats: false)
        case 5:
            // Every week on a day at least two days from today, at a time of day.
            let calendar = Calendar(identifier: .gregorian)
            let today = calendar.component(.weekday, from: now)
            let weekday = (today - 1 + generator.int(2...6)) % 7 + 1
            trigger = CalendarNotificationTrigger(
                dateMatching: DateComponents(hour: generator.int(6...22), minute: generator.int(0...59), weekday: weekday),
                repeats: true)
        default:
            trigger = DateNotificationTrigger(date: now.addingTimeInterval(ahead))
        }
        return NotificationRequest(identifier: "n\(index)", content: content, trigger: trigger)
    }
}
