import OffstageCore
import Testing

/// SplitMix64: a small seeded generator, so a seed printed by a failure replays the same session anywhere.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// A random session of three apps and their notifications on a ``NotificationBench``: requests of every kind of
/// trigger added, replaced and removed, the user opening, leaving, locking, tapping and dismissing, apps answering
/// will-present in every way or crashing, settings and time zones changing, time passing, and the daemon restarting
/// after being down for up to two hours. The bench checks after every input; the session adds what it did.
struct NotificationSession {
    private var rng: SplitMix64
    private(set) var bench: NotificationBench
    private(set) var restarts = 0
    private(set) var log: [String] = []
    static let apps = [appA, appB, appC]
    static let zones = ["UTC", "Europe/Berlin", "America/New_York", "Asia/Kolkata", "Australia/Lord_Howe"]

    init(seed: UInt64) {
        rng = SplitMix64(state: seed)
        var configuration = CoreConfiguration()
        // Small limits, so dropping the latest and trimming the delivered list happen often.
        configuration.maximumPendingNotificationsPerApp = 5
        configuration.maximumDeliveredNotificationsPerApp = 4
        bench = NotificationBench(configuration: configuration, timeZone: "Europe/Berlin")
        for id in Self.apps {
            bench.install(id)
            bench.open(id)
            bench.appInput(id) { core, pid, now throws(CoreError) in
                try core.setNotificationCategories(id, pid: pid, [replyCategory], at: now)
            }
        }
        bench.home()
    }

    private mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &rng) }
    private mutating func double(_ range: ClosedRange<Double>) -> Double { Double.random(in: range, using: &rng) }
    private mutating func app() -> AppID { Self.apps[int(0...2)] }
    private mutating func zone() -> String { Self.zones[int(0...(Self.zones.count - 1))] }

    private mutating func trigger() -> NotificationTrigger {
        switch int(0...6) {
        case 0: .timeInterval(seconds: double(0.001...7_200), repeats: false)
        case 1: .timeInterval(seconds: double(60...7_200), repeats: true)
        case 2: .calendar(DateMatch(hour: int(0...23), minute: int(0...59)), repeats: int(0...1) == 0)
        case 3: .calendar(DateMatch(hour: int(0...23), minute: int(0...59), timeZone: zone()), repeats: int(0...1) == 0)
        case 4: .calendar(DateMatch(minute: int(0...59), second: int(0...59)), repeats: true)
        case 5: .calendar(DateMatch(hour: int(0...23), minute: 0, weekday: int(1...7)), repeats: true)
        default: .date(bench.now + .seconds(double: double(-600...20_000)))
        }
    }

    /// Time passes until every request that does not repeat must have fired: a week and a day.
    mutating func finish() { bench.advance(by: .seconds(8 * 86_400)) }

    /// One random step.
    mutating func step() {
        let pick = int(0...99)
        switch pick {
        case 0..<8:
            let id = app()
            log.append("open \(id)")
            bench.open(id)
        case 8..<12:
            log.append("home")
            bench.home()
        case 12..<14:
            log.append("lock")
            bench.lock()
        case 14..<16:
            log.append("unlock")
            bench.unlock()
        case 16..<34:
            let id = app()
            guard bench.pid(of: id) != nil else { return }
            let badge = int(0...3) == 0 ? int(0...9) : nil
            let request = notification(
                "n\(int(0...6))", trigger(), badge: badge, category: int(0...1) == 0 ? "reply" : "")
            log.append("add \(id) \(request.identifier) \(request.trigger.summary)")
            bench.add(id, request)
        case 34..<37:
            let id = app()
            let identifiers = int(0...2) == 0 ? nil : ["n\(int(0...6))"]
            log.append("remove pending \(id) \(identifiers ?? ["all"])")
            bench.appInput(id) { core, pid, now throws(CoreError) in
                try core.removePendingNotifications(id, pid: pid, identifiers: identifiers, at: now)
            }
        case 37..<38:
            let id = app()
            log.append("clear delivered \(id)")
            bench.feed { core, now throws(CoreError) in
                try core.removeDeliveredNotifications(id, pid: nil, identifiers: nil, at: now)
            }
        case 38..<46:
            let id = app()
            guard let delivered = bench.core.notifications.delivered[id], !delivered.isEmpty else { return }
            let identifier = delivered[int(0...(delivered.count - 1))].request.identifier
            let action = ["default", "default", "dismiss", "later", "show"][int(0...4)]
            log.append("tap \(id) \(identifier) \(action)")
            bench.tap(id, identifier, action: action)
        case 46..<48:
            let id = app()
            log.append("categories \(id)")
            bench.appInput(id) { core, pid, now throws(CoreError) in
                try core.setNotificationCategories(id, pid: pid, [replyCategory], at: now)
            }
        case 48..<50:
            let zone = zone()
            log.append("time zone \(zone)")
            bench.setTimeZone(zone)
        case 50..<52:
            let id = app()
            let allowed = int(0...4) != 0
            log.append("notifications \(id) \(allowed)")
            bench.allowNotifications(id, allowed)
        case 52..<55:
            let id = app()
            let answer = [WillPresentAnswer.present, .handle, .returnOnly, .ignore][int(0...3)]
            log.append("will-present \(id) \(answer)")
            bench.willPresent[id] = answer
        case 55..<57:
            let id = app()
            log.append("crash \(id)")
            bench.crash(id)
        case 57..<58:
            let id = app()
            log.append("force-quit \(id)")
            bench.forceQuit(id)
        case 58..<59:
            let id = app()
            log.append("uninstall and install \(id)")
            bench.uninstall(id)
            bench.advance(by: .seconds(15))
            bench.install(id)
        case 59..<61:
            let downtime = Duration.seconds(double: double(0...7_200))
            log.append("restart after \(downtime)")
            restarts += 1
            bench.restart(after: downtime)
        default:
            let range: ClosedRange<Double> = [0.001...5, 5...600, 600...14_400][int(0...2)]
            let duration = Duration.seconds(double: double(range))
            log.append("advance \(duration)")
            bench.advance(by: duration)
        }
    }
}

/// Exactly once, also across restarts (SPEC NT-2, §11 "a crash or kill -9 of the daemon at any point … delivers no
/// notification twice"), checked over long random sessions.
@Suite("Notification delivery exactly once (SPEC NT-2)")
struct NotificationExactlyOnceTests {
    @Test(
        "NT-2: random sessions with restarts: no key fires twice, every due one fires, missed ones fire late once"
    )
    func exactlyOnceAcrossRestarts() {
        var (fires, late, restarts, suppressed, willPresent, shown) = (0, 0, 0, 0, 0, 0)
        var reasons: [LaunchReason: Int] = [:]
        var responses: [String: Int] = [:]
        for seed in UInt64(1)...40 {
            var session = NotificationSession(seed: seed)
            for _ in 0..<300 {
                session.step()
                if !session.bench.problems.isEmpty { break }
            }
            // A week later every request that does not repeat has fired.
            session.finish()
            let leftOver = session.bench.core.notifications.pending.values.flatMap(\.values).filter {
                !$0.request.trigger.repeats
            }
            let bench = session.bench
            let report =
                "\(bench.problems.prefix(5)) \(leftOver.map(\.identifier)); last steps: \(session.log.suffix(12))"
            #expect(bench.problems.isEmpty && leftOver.isEmpty, "seed \(seed): \(report)")
            guard bench.problems.isEmpty else { break }
            // Late exactly when delivered more than notificationLateAfter after due (the bench checks each), and only
            // after a restart: the timer fires every notification at its due time.
            let lateAfter = Duration.seconds(double: bench.core.configuration.notificationLateAfter)
            #expect(
                bench.fires.allSatisfy {
                    ($0.at - $0.key.due > lateAfter) == ($0.delivery?.late ?? ($0.at - $0.key.due > lateAfter))
                })
            fires += bench.fires.count
            late += bench.fires.filter { $0.at - $0.key.due > lateAfter }.count
            suppressed += bench.fires.filter { $0.delivery == nil }.count
            willPresent += bench.fires.filter { $0.delivery?.route == .app }.count
            shown += bench.shown.count
            restarts += session.restarts
            for launch in bench.launches { reasons[launch.reason, default: 0] += 1 }
            for id in NotificationSession.apps {
                for response in bench.responses(id) { responses[response.actionIdentifier, default: 0] += 1 }
            }
        }
        print(
            "notification sessions: \(fires) firings, \(late) late, \(suppressed) suppressed, \(willPresent) to apps, "
                + "\(shown) shown, \(restarts) restarts, launches \(reasons), responses \(responses)")
        // The sessions reach what the checks are about.
        #expect(fires > 2_000 && late > 50 && restarts > 30 && suppressed > 20 && willPresent > 20 && shown > 1_000)
        #expect(reasons[.notification, default: 0] > 10 && reasons[.notificationAction, default: 0] >= 5)
        #expect(["default", "dismiss", "later", "show"].allSatisfy { responses[$0, default: 0] >= 5 }, "\(responses)")
    }
}
