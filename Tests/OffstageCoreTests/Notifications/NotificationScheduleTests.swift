import OffstageCore
import Testing

/// App A active in front with its process attached, on a bench at `benchStart`.
func runningBench(configuration: CoreConfiguration = .init(), zone: String = "UTC") -> NotificationBench {
    var bench = NotificationBench(configuration: configuration, timeZone: zone)
    bench.install(appA)
    bench.install(appB)
    bench.open(appA)
    #expect(bench.state(appA) == .active)
    return bench
}

extension Result where Failure == CoreError {
    /// The refusal, if it is one.
    var error: CoreError? {
        if case .failure(let error) = self { error } else { nil }
    }
}

/// What an app may ask of its notifications, and what it may not (SPEC NT-1): the pending limit, replacing, removing,
/// the delivered list's bound, badges, categories, and every kind of bad request, each refused with the thing named
/// and nothing changed.
@Suite("Notification requests and limits (SPEC NT-1)")
struct NotificationScheduleTests {
    @Test("NT-1: at most 128 pending per app by default: a sooner 129th drops the latest, and the app is told")
    func soonerRequestDropsTheLatest() throws {
        #expect(CoreConfiguration().maximumPendingNotificationsPerApp == 128)
        var bench = runningBench()
        bench.open(appB)
        #expect(bench.add(appB, notification("other", .timeInterval(seconds: 5_000, repeats: false))) == .success([]))
        bench.open(appA)
        for index in 0..<128 {
            #expect(
                bench.add(
                    appA, notification("n\(index)", .timeInterval(seconds: Double(1_000 + index), repeats: false)))
                    == .success([]))
        }
        let mark = bench.actions.count
        #expect(bench.add(appA, notification("soon", .timeInterval(seconds: 10, repeats: false))) == .success(["n127"]))
        let pending = bench.core.notifications.pending(of: appA)
        #expect(pending.count == 128 && pending.first?.identifier == "soon" && pending.last?.identifier == "n126")
        #expect(bench.notificationActions(from: mark).first == .removePending(appA, identifiers: ["n127"]))
        #expect(
            bench.actions.dropFirst(mark).contains {
                if case .log(let entry) = $0.action {
                    entry.kind == .warning && entry.message.contains("n127")
                } else {
                    false
                }
            })
        #expect(bench.core.notifications.pending(of: appB).count == 1, "another app's requests are its own")
        #expect(bench.problems.isEmpty, "\(bench.problems)")
    }

    @Test("NT-1: a 129th later than all the others is refused (TooManyPendingRequests) and nothing changes")
    func laterRequestIsRefused() throws {
        var bench = runningBench()
        for index in 0..<128 {
            bench.add(appA, notification("n\(index)", .timeInterval(seconds: Double(1_000 + index), repeats: false)))
        }
        let before = bench.core.notifications
        let mark = bench.actions.count
        let error = try #require(
            bench.add(appA, notification("late", .timeInterval(seconds: 9_999, repeats: false))).error)
        #expect(error.code == .tooManyPendingRequests)
        #expect(error.message.contains("late") && error.message.contains("128"))
        #expect(bench.core.notifications == before)
        #expect(bench.notificationActions(from: mark).isEmpty)
        #expect(bench.problems.isEmpty, "\(bench.problems)")
    }

    @Test("NT-1: the pending limit is a setting")
    func pendingLimitIsASetting() {
        var configuration = CoreConfiguration()
        configuration.maximumPendingNotificationsPerApp = 3
        var bench = runningBench(configuration: configuration)
        for index in 0..<3 {
            bench.add(
                appA, notification("n\(index)", .timeInterval(seconds: Double(100 * (index + 1)), repeats: false)))
        }
        #expect(bench.add(appA, notification("first", .timeInterval(seconds: 50, repeats: false))) == .success(["n2"]))
        #expect(
            bench.add(appA, notification("last", .timeInterval(seconds: 500, repeats: false))).error?.code
                == .tooManyPendingRequests)
        // Replacing one at the limit is not one more.
        #expect(bench.add(appA, notification("n1", .timeInterval(seconds: 60, repeats: false))) == .success([]))
        #expect(bench.core.notifications.pending(of: appA).map(\.identifier) == ["first", "n1", "n0"])
        #expect(bench.problems.isEmpty, "\(bench.problems)")
    }

    @Test("NT-1: adding a request with an identifier in use replaces it: one pending, at the new time")
    func sameIdentifierReplaces() {
        var bench = runningBench()
        bench.add(appA, notification("x", .timeInterval(seconds: 100, repeats: false)))
        bench.home()
        bench.advance(by: .seconds(10))
        bench.open(appA)
        bench.add(appA, notification("x", .timeInterval(seconds: 200, repeats: false), badge: 3))
        #expect(bench.core.notifications.pending(of: appA).map(\.due) == [benchStart + .seconds(210)])
        bench.home()
        bench.advance(by: .seconds(400))
        #expect(bench.dueTimes(appA, "x") == [benchStart + .seconds(210)], "the replaced time does not fire")
        #expect(bench.shown(appA).map(\.request.content.badge) == [3])
        #expect(bench.problems.isEmpty, "\(bench.problems)")
    }

    @Test("NT-1: cancel one, cancel all; unknown identifiers are harmless; delivered ones are removed the same way")
    func cancelling() {
        var bench = runningBench()
        bench.open(appB)
        bench.add(appB, notification("a", .timeInterval(seconds: 60, repeats: false)))
        bench.open(appA)
        for name in ["a", "b", "c"] { bench.add(appA, notification(name, .timeInterval(seconds: 60, repeats: false))) }
        var mark = bench.actions.count
        #expect(
            bench.appInput(appA) { core, pid, now throws(CoreError) in
                try core.removePendingNotifications(appA, pid: pid, identifiers: ["a", "nope"], at: now)
            } == nil)
        #expect(bench.notificationActions(from: mark) == [.removePending(appA, identifiers: ["a"])])
        mark = bench.actions.count
        bench.appInput(appA) { core, pid, now throws(CoreError) in
            try core.removePendingNotifications(appA, pid: pid, identifiers: ["nope", "a"], at: now)
        }
        #expect(bench.notificationActions(from: mark).isEmpty, "nothing to remove, nothing done")
        bench.appInput(appA) { core, pid, now throws(CoreError) in
            try core.removePendingNotifications(appA, pid: pid, identifiers: nil, at: now)
        }
        #expect(bench.core.notifications.pending(of: appA).isEmpty)
        #expect(bench.core.notifications.pending(of: appB).map(\.identifier) == ["a"], "B's own 'a' stays")

        bench.add(appA, notification("d1", .timeInterval(seconds: 1, repeats: false)))
        bench.add(appA, notification("d2", .timeInterval(seconds: 2, repeats: false)))
        bench.home()
        bench.advance(by: .seconds(5))
        #expect(bench.core.notifications.delivered[appA]?.map(\.request.identifier) == ["d1", "d2"])
        bench.feed { core, now throws(CoreError) in
            try core.removeDeliveredNotifications(appA, pid: nil, identifiers: ["d1", "unknown"], at: now)
        }
        #expect(bench.core.notifications.delivered[appA]?.map(\.request.identifier) == ["d2"])
        bench.feed { core, now throws(CoreError) in
            try core.removeDeliveredNotifications(appA, pid: nil, identifiers: nil, at: now)
        }
        #expect(bench.core.notifications.delivered[appA] == nil)
        #expect(bench.problems.isEmpty, "\(bench.problems)")
    }

    @Test("NT-2: the delivered list is bounded per app: the oldest go")
    func deliveredListIsBounded() {
        var configuration = CoreConfiguration()
        configuration.maximumDeliveredNotificationsPerApp = 3
        var bench = runningBench(configuration: configuration)
        for index in 1...5 {
            bench.add(appA, notification("n\(index)", .timeInterval(seconds: Double(index), repeats: false)))
        }
        bench.home()
        bench.advance(by: .seconds(10))
        #expect(bench.core.notifications.delivered[appA]?.map(\.request.identifier) == ["n3", "n4", "n5"])
        #expect(bench.store.delivered.keys.map(\.identifier).sorted() == ["n3", "n4", "n5"])
        #expect(bench.shown(appA).count == 5, "each was shown when it fired")
        #expect(bench.problems.isEmpty, "\(bench.problems)")
    }

    @Test("NT-1: a delivered notification sets the badge its content names; 0 removes it; a negative one is refused")
    func badgeFromContent() {
        var bench = runningBench()
        bench.add(appA, notification("five", .timeInterval(seconds: 10, repeats: false), badge: 5))
        bench.add(appA, notification("none", .timeInterval(seconds: 20, repeats: false)))
        bench.add(appA, notification("zero", .timeInterval(seconds: 30, repeats: false), badge: 0))
        bench.home()
        bench.advance(by: .seconds(15))
        #expect(bench.core.notifications.badges[appA] == 5 && bench.store.badges[appA] == 5)
        bench.advance(by: .seconds(10))
        #expect(bench.core.notifications.badges[appA] == 5, "no badge in the content leaves it as it is")
        bench.advance(by: .seconds(10))
        #expect(bench.core.notifications.badges[appA] == nil && bench.store.badges[appA] == nil)
        bench.open(appA)
        let error = bench.appInput(appA) { core, pid, now throws(CoreError) in
            try core.setBadge(appA, pid: pid, -1, at: now)
        }
        #expect(error?.code == .invalidArgument && error?.message.contains("-1") == true)
        bench.appInput(appA) { core, pid, now throws(CoreError) in try core.setBadge(appA, pid: pid, 7, at: now) }
        #expect(bench.store.badges[appA] == 7)
        #expect(bench.problems.isEmpty, "\(bench.problems)")
    }

    @Test(
        "NT-1: categories are validated (reserved or repeated ids, too many); a bad list changes nothing"
    )
    func categoriesAreValidated() throws {
        var bench = runningBench()
        let good = NotificationCategory(
            identifier: "invite",
            actions: [
                NotificationActionButton(identifier: "accept", title: "Accept", foreground: true),
                NotificationActionButton(identifier: "decline", title: "Decline", destructive: true),
            ])
        let register = { (bench: inout NotificationBench, list: [NotificationCategory]) -> CoreError? in
            bench.appInput(appA) { core, pid, now throws(CoreError) in
                try core.setNotificationCategories(appA, pid: pid, list, at: now)
            }
        }
        #expect(register(&bench, [good]) == nil)
        #expect(bench.store.categories[appA] == [good])
        let before = bench.core.notifications
        let button = { (id: String) in NotificationActionButton(identifier: id, title: id) }
        let bad: [([NotificationCategory], String)] = [
            ([NotificationCategory(identifier: "c", actions: [button("default")])], "default"),
            ([NotificationCategory(identifier: "c", actions: [button("dismiss")])], "dismiss"),
            ([NotificationCategory(identifier: "c", actions: [button("a"), button("a")])], "'a'"),
            ([good, good], "invite"),
            ((0..<65).map { NotificationCategory(identifier: "c\($0)", actions: []) }, "65"),
            ([NotificationCategory(identifier: "c", actions: (0..<11).map { button("a\($0)") })], "'c'"),
            ([NotificationCategory(identifier: "", actions: [])], "identifier"),
        ]
        for (list, named) in bad {
            let error = register(&bench, list)
            #expect(error?.code == .invalidArgument, "\(list.map(\.identifier))")
            #expect(error?.message.contains(named) == true, "\(error?.message ?? "accepted") names \(named)")
            #expect(bench.core.notifications == before)
        }
        #expect(bench.store.categories[appA] == [good])
        #expect(bench.problems.isEmpty, "\(bench.problems)")
    }

    @Test(
        "NT-1: a bad request is refused with a CoreError that names what is wrong, and nothing changes",
        arguments: [
            (NotificationTrigger.timeInterval(seconds: 59, repeats: true), NotificationContent(title: "t"), "59"),
            (.timeInterval(seconds: 0, repeats: false), NotificationContent(title: "t"), "time interval 0"),
            (.timeInterval(seconds: -5, repeats: false), NotificationContent(title: "t"), "time interval -5"),
            (.timeInterval(seconds: .nan, repeats: false), NotificationContent(title: "t"), "nan"),
            (.timeInterval(seconds: .infinity, repeats: true), NotificationContent(title: "t"), "inf"),
            (.calendar(DateMatch(), repeats: true), NotificationContent(title: "t"), "no date components"),
            (.calendar(DateMatch(month: 13), repeats: true), NotificationContent(title: "t"), "month 13"),
            (.calendar(DateMatch(hour: 24), repeats: true), NotificationContent(title: "t"), "hour 24"),
            // Past what an instant holds (the year 2262): refused, where the fuzzer found it crashed the core.
            (.calendar(DateMatch(year: 4056, month: 2, day: 29), repeats: false), NotificationContent(title: "t"), "year 4056"),
            (.calendar(DateMatch(year: 2201, hour: 7), repeats: false), NotificationContent(title: "t"), "year 2201"),
            (
                .calendar(DateMatch(hour: 7, timeZone: "Mars/Olympus"), repeats: true), NotificationContent(title: "t"),
                "Mars/Olympus"
            ),
            (
                .calendar(DateMatch(year: 2025, month: 6, day: 1, hour: 7), repeats: false),
                NotificationContent(title: "t"), "never fires"
            ),
            (.calendar(DateMatch(month: 2, day: 30), repeats: true), NotificationContent(title: "t"), "never fires"),
            (
                .timeInterval(seconds: 60, repeats: false),
                NotificationContent(title: String(repeating: "x", count: 4_097)), "4099 bytes"
            ),
            (.timeInterval(seconds: 60, repeats: false), NotificationContent(title: "t", badge: -1), "badge -1"),
            // §11: what a desktop cannot show, or a sound that would leave the app's bundle, is refused when added.
            (.timeInterval(seconds: 60, repeats: false), NotificationContent(title: "t", badge: Int(Int32.max) + 1), "more than 2147483647"),
            (.timeInterval(seconds: 60, repeats: false), NotificationContent(title: "a\0b"), "title holds a NUL"),
            (.timeInterval(seconds: 60, repeats: false), NotificationContent(title: "t", body: "\0"), "body holds a NUL"),
            (.timeInterval(seconds: 60, repeats: false), NotificationContent(title: "t", sound: "../../../../etc/passwd"), "not the name of a file"),
            (.timeInterval(seconds: 60, repeats: false), NotificationContent(title: "t", sound: ".."), "not the name of a file"),
            (.timeInterval(seconds: 1e308, repeats: false), NotificationContent(title: "t"), "more than a century"),
            (.timeInterval(seconds: 60, repeats: false), NotificationContent(), "no title, body"),
            (
                .timeInterval(seconds: 60, repeats: false), NotificationContent(title: "t", userInfo: "[1]"),
                "JSON object"
            ),
        ])
    func badRequestsAreRefused(trigger: NotificationTrigger, content: NotificationContent, named: String) throws {
        var bench = runningBench()
        bench.add(appA, notification("kept", .timeInterval(seconds: 600, repeats: false)))
        let before = bench.core.notifications
        let mark = bench.actions.count
        let error = try #require(
            bench.add(appA, NotificationRequest(identifier: "bad", content: content, trigger: trigger)).error)
        #expect(error.code == .invalidArgument)
        #expect(error.message.contains(named), "\(error.message)")
        #expect(!error.fix.isEmpty)
        #expect(bench.core.notifications == before)
        #expect(bench.notificationActions(from: mark).isEmpty)
    }

    @Test("NT-1: an empty, overlong or control-character identifier is refused with the identifier named")
    func badIdentifiersAreRefused() throws {
        var bench = runningBench()
        let before = bench.core.notifications
        for identifier in ["", String(repeating: "i", count: 257), "line\nbreak"] {
            let error = try #require(
                bench.add(appA, notification(identifier, .timeInterval(seconds: 60, repeats: false))).error)
            #expect(error.code == .invalidArgument)
            #expect(error.message.contains("identifier"))
            #expect(bench.core.notifications == before)
        }
        // The longest identifier and the largest content are fine.
        let longest = String(repeating: "i", count: 256)
        #expect(bench.add(appA, notification(longest, .timeInterval(seconds: 60, repeats: false))) == .success([]))
        let full = NotificationRequest(
            identifier: "full", content: NotificationContent(title: String(repeating: "x", count: 4_094)),
            trigger: .timeInterval(seconds: 60, repeats: false))
        #expect(bench.add(appA, full) == .success([]), "4,094 bytes of title and the user info's 2 make 4,096")
        #expect(bench.problems.isEmpty, "\(bench.problems)")
    }

    @Test("NT-1: only the app's own running process may add, and an app never touches another app's requests")
    func onlyTheAppsOwnProcess() throws {
        var bench = runningBench()
        bench.add(appA, notification("mine", .timeInterval(seconds: 60, repeats: false)))
        let pidA = try #require(bench.pid(of: appA))
        // B is not running: a request "from B" with A's pid is refused.
        let error = bench.feed { core, now throws(CoreError) in
            try core.addNotification(
                appB, pid: pidA, notification("x", .timeInterval(seconds: 60, repeats: false)), at: now
            ).actions
        }
        #expect(error?.code == .appNotRunning)
        bench.open(appB)
        bench.appInput(appB) { core, pid, now throws(CoreError) in
            try core.removePendingNotifications(appB, pid: pid, identifiers: ["mine"], at: now)
        }
        #expect(bench.core.notifications.pending(of: appA).map(\.identifier) == ["mine"])
        #expect(bench.core.notifications.pending(of: appB).isEmpty)
        #expect(bench.problems.isEmpty, "\(bench.problems)")
    }
}
