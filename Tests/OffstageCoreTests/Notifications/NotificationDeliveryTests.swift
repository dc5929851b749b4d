import OffstageCore
import Testing

/// A third app for the randomized runs.
let appC: AppID = "com.example.c"

/// A category with an action the app handles in the background and one that opens it.
let replyCategory = NotificationCategory(
    identifier: "reply",
    actions: [
        NotificationActionButton(identifier: "later", title: "Remind me later"),
        NotificationActionButton(identifier: "show", title: "Show", foreground: true),
    ])

extension NotificationBench {
    /// App A's request `identifier`, due in `seconds`, fired and shown to the user while A is not running; app A
    /// registered ``replyCategory`` first.
    static func deliveredWhileNotRunning(
        _ identifier: String = "n", seconds: Double = 60, configuration: CoreConfiguration = .init(),
        modes: Set<BackgroundMode> = [], exitsOnSuspend: Bool = false
    ) -> NotificationBench {
        var bench = NotificationBench(configuration: configuration)
        bench.install(appA, modes: modes, exitsOnSuspend: exitsOnSuspend)
        bench.install(appB)
        bench.open(appA)
        bench.registerReplyCategory(appA)
        bench.add(appA, notification(identifier, .timeInterval(seconds: seconds, repeats: false), category: "reply"))
        bench.exit(appA)
        bench.advance(by: .seconds(double: seconds))
        #expect(bench.state(appA) == .notRunning)
        #expect(bench.shown(appA).map(\.request.identifier) == [identifier])
        return bench
    }

    /// The app's running process registers ``replyCategory``.
    mutating func registerReplyCategory(_ id: AppID) {
        let error = appInput(id) { core, pid, now throws(CoreError) in
            try core.setNotificationCategories(id, pid: pid, [replyCategory], at: now)
        }
        #expect(error == nil)
    }

    /// Whether any action since `mark` thawed the app.
    func thawed(_ id: AppID, since mark: Int) -> Bool {
        actions.dropFirst(mark).contains { if case .thaw(id, _) = $0.action { true } else { false } }
    }

    /// The responses the app's process was sent, in order.
    func responses(_ id: AppID) -> [NotificationResponse] {
        (callbacks[id] ?? []).compactMap { if case .notificationResponse(let response) = $0 { response } else { nil } }
    }
}

/// Where a notification goes when it fires, what the user's taps and actions do, and that each firing happens
/// exactly once, also across daemon restarts (SPEC NT-2).
@Suite("Notification delivery (SPEC NT-2)")
struct NotificationDeliveryTests {
    @Test("NT-2: an app active in front of an unlocked screen gets will-present, and the user is not shown it")
    func activeAppGetsWillPresent() {
        var bench = runningBench()
        bench.add(appA, notification("n", .timeInterval(seconds: 60, repeats: false)))
        let from = bench.callbacks[appA]?.count ?? 0
        bench.advance(by: .seconds(60))
        #expect(bench.callbackNames(appA, from: from) == ["notificationWillPresent"])
        #expect(bench.shown.isEmpty)
        #expect(bench.fires.map { $0.delivery?.route } == [.app])
        // It handled it itself: the record is gone and nothing waits for it.
        #expect(bench.core.notifications.awaitingApp.isEmpty && bench.store.delivered.isEmpty)
        #expect(bench.problems.isEmpty, "\(bench.problems)")
    }

    /// Where app A is when its notification fires.
    enum Situation: String, CaseIterable, Sendable {
        case background, suspended, notRunning, locked, interrupted, otherAppInFront
    }

    @Test(
        "NT-2: an app not active in front is left alone: the user is shown the notification; nothing launches or thaws",
        arguments: Situation.allCases)
    func shownToTheUser(situation: Situation) {
        var bench = runningBench()
        // In the background it fires before the app is suspended (1 s after it went idle).
        let delay: Duration = situation == .background ? .milliseconds(500) : .seconds(60)
        bench.add(appA, notification("n", .timeInterval(seconds: delay.inSeconds, repeats: false)))
        let expected: ApplicationState
        switch situation {
        case .background:
            bench.home()
            expected = .background
        case .suspended:
            bench.home()
            expected = .suspended
        case .notRunning:
            bench.exit(appA)
            expected = .notRunning
        case .locked:
            bench.lock()
            expected = .suspended
        case .interrupted:
            bench.feed { core, now throws(CoreError) in try core.interrupt(nil, at: now) }
            expected = .inactive
        case .otherAppInFront:
            bench.open(appB)
            expected = .suspended
        }
        let (launches, mark, from) = (bench.launches.count, bench.actions.count, bench.callbacks[appA]?.count ?? 0)
        bench.advance(by: delay)
        #expect(bench.state(appA) == expected)
        #expect(bench.shown(appA).map(\.request.identifier) == ["n"])
        #expect(bench.fires.map { $0.delivery?.route } == [.user])
        #expect(bench.core.notifications.delivered[appA]?.map(\.request.identifier) == ["n"])
        #expect(bench.launches.count == launches && !bench.thawed(appA, since: mark), "the app is not woken")
        #expect(!bench.callbackNames(appA, from: from).contains("notificationWillPresent"))
        #expect(bench.problems.isEmpty, "\(bench.problems)")
    }

    @Test(
        "NT-2, SET-2: with the app's notifications off a firing reaches neither the app nor the user, once",
        arguments: [true, false])
    func notificationsOff(active: Bool) {
        var bench = runningBench()
        bench.add(appA, notification("n", .timeInterval(seconds: 60, repeats: false), badge: 4))
        bench.allowNotifications(appA, false)
        if !active { bench.home() }
        let from = bench.callbacks[appA]?.count ?? 0
        bench.advance(by: .seconds(120))
        #expect(bench.fires.count == 1 && bench.fires.first?.delivery == nil)
        #expect(bench.shown.isEmpty && !bench.callbackNames(appA, from: from).contains("notificationWillPresent"))
        #expect(bench.core.notifications.pending(of: appA).isEmpty && bench.core.notifications.delivered[appA] == nil)
        #expect(bench.core.notifications.badges[appA] == nil, "nothing shown, no badge")
        #expect(bench.problems.isEmpty, "\(bench.problems)")
    }

    @Test("NT-2: will-present answered 'present' shows it to the user; returning without choosing does not")
    func willPresentAnswers() throws {
        for (answer, shown) in [(WillPresentAnswer.present, true), (.returnOnly, false), (.handle, false)] {
            var bench = runningBench()
            bench.willPresent[appA] = answer
            bench.add(appA, notification("n", .timeInterval(seconds: 60, repeats: false), badge: 2))
            bench.advance(by: .seconds(60))
            #expect(bench.callbackNames(appA).contains("notificationWillPresent"))
            #expect(bench.shown(appA).map(\.route) == (shown ? [.user] : []), "\(answer)")
            #expect(bench.core.notifications.delivered[appA]?.count == (shown ? 1 : nil))
            #expect(bench.core.notifications.badges[appA] == (shown ? 2 : nil))
            #expect(bench.core.notifications.awaitingApp.isEmpty)
            #expect(bench.problems.isEmpty, "\(answer): \(bench.problems)")
        }
    }

    @Test("NT-2: a process that ends before answering will-present loses nothing: the user is shown the notification")
    func unansweredGoesToTheUser() throws {
        var bench = runningBench()
        bench.willPresent[appA] = .ignore
        bench.add(appA, notification("n", .timeInterval(seconds: 60, repeats: false)))
        bench.advance(by: .seconds(60))
        #expect(bench.unanswered.count == 1 && bench.shown.isEmpty)
        #expect(bench.store.delivered.values.map(\.route) == [.app], "stored before the app was told")
        bench.crash(appA)
        #expect(bench.shown(appA).map(\.request.identifier) == ["n"])
        #expect(bench.store.delivered.values.map(\.route) == [.user])

        // The same when the daemon stops before the app answered: the restarted one hands it to the user.
        var restarted = runningBench()
        restarted.willPresent[appA] = .ignore
        restarted.add(appA, notification("m", .timeInterval(seconds: 60, repeats: false)))
        restarted.advance(by: .seconds(60))
        #expect(restarted.shown.isEmpty)
        restarted.restart(after: .seconds(5))
        #expect(restarted.shown(appA).map(\.request.identifier) == ["m"])
        #expect(restarted.core.notifications.delivered[appA]?.map(\.route) == [.user])
        #expect(bench.problems.isEmpty && restarted.problems.isEmpty, "\(bench.problems) \(restarted.problems)")
    }

    @Test(
        "NT-2, LC-2: a tap on a not-running app's notification launches it in front, then the response follows"
    )
    func tapLaunchesInTheForeground() throws {
        var bench = NotificationBench.deliveredWhileNotRunning()
        let from = bench.callbacks[appA]?.count ?? 0
        let mark = bench.actions.count
        #expect(bench.tap(appA, "n") == nil)
        #expect(bench.launches.last?.app == appA && bench.launches.last?.reason == .notification)
        #expect(
            bench.callbackNames(appA, from: from) == ["didFinishLaunching", "didBecomeActive", "notificationResponse"])
        #expect(bench.callbacks[appA]?[from] == .didFinishLaunching(.notification))
        let response = try #require(bench.responses(appA).last)
        #expect(response.actionIdentifier == NotificationResponse.defaultAction)
        #expect(response.notification.request.identifier == "n")
        #expect(bench.state(appA) == .active && bench.core.device.foregroundApp == appA)
        #expect(bench.core.notifications.delivered[appA] == nil, "answered: it leaves the list")
        #expect(
            bench.notificationActions(from: mark).contains(.removeDelivered(appA, keys: [response.notification.key])))
        #expect(bench.problems.isEmpty, "\(bench.problems)")
    }

    @Test("NT-2: a tap on a suspended app's notification thaws it into the foreground and delivers the response")
    func tapResumesSuspendedApp() throws {
        var bench = runningBench()
        bench.add(appA, notification("n", .timeInterval(seconds: 60, repeats: false)))
        bench.home()
        bench.advance(by: .seconds(60))
        #expect(bench.state(appA) == .suspended && bench.shown(appA).count == 1)
        let (launches, mark, from) = (bench.launches.count, bench.actions.count, bench.callbacks[appA]?.count ?? 0)
        #expect(bench.tap(appA, "n") == nil)
        #expect(bench.launches.count == launches && bench.thawed(appA, since: mark))
        #expect(
            bench.callbackNames(appA, from: from) == ["willEnterForeground", "didBecomeActive", "notificationResponse"])
        #expect(bench.state(appA) == .active)
        #expect(bench.problems.isEmpty, "\(bench.problems)")
    }

    @Test(
        "NT-2: a background action launches a not-running app into the background; it is suspended after"
    )
    func backgroundActionLaunchesInTheBackground() throws {
        var bench = NotificationBench.deliveredWhileNotRunning()
        let from = bench.callbacks[appA]?.count ?? 0
        #expect(bench.tap(appA, "n", action: "later") == nil)
        #expect(bench.launches.last?.app == appA && bench.launches.last?.reason == .notificationAction)
        #expect(bench.callbackNames(appA, from: from) == ["didFinishLaunching", "notificationResponse"])
        #expect(bench.callbacks[appA]?[from] == .didFinishLaunching(.notificationAction))
        #expect(bench.responses(appA).last?.actionIdentifier == "later")
        #expect(bench.core.device.foregroundApp == nil)
        bench.advance(by: .seconds(2))
        #expect(bench.state(appA) == .suspended)
        #expect(bench.problems.isEmpty, "\(bench.problems)")
    }

    @Test("NT-2: a background action wakes a suspended app in the background, which is suspended again after")
    func backgroundActionWakesSuspendedApp() {
        var bench = runningBench()
        bench.registerReplyCategory(appA)
        bench.add(appA, notification("n", .timeInterval(seconds: 60, repeats: false), category: "reply"))
        bench.home()
        bench.advance(by: .seconds(60))
        let mark = bench.actions.count
        #expect(bench.tap(appA, "n", action: "later") == nil)
        #expect(bench.thawed(appA, since: mark) && bench.responses(appA).last?.actionIdentifier == "later")
        #expect(bench.state(appA) == .background)
        bench.advance(by: .seconds(2))
        #expect(bench.state(appA) == .suspended)
        #expect(bench.problems.isEmpty, "\(bench.problems)")
    }

    @Test("NT-2: an action that opens the app brings it to the foreground as a tap does")
    func foregroundActionOpens() {
        var bench = NotificationBench.deliveredWhileNotRunning()
        let from = bench.callbacks[appA]?.count ?? 0
        #expect(bench.tap(appA, "n", action: "show") == nil)
        #expect(bench.launches.last?.reason == .notification)
        #expect(
            bench.callbackNames(appA, from: from) == ["didFinishLaunching", "didBecomeActive", "notificationResponse"])
        #expect(bench.responses(appA).last?.actionIdentifier == "show")
        #expect(bench.problems.isEmpty, "\(bench.problems)")
    }

    @Test("NT-2: dismissing launches nothing; only a running app hears of it")
    func dismissDoesNotLaunch() {
        var bench = NotificationBench.deliveredWhileNotRunning()
        let launches = bench.launches.count
        #expect(bench.tap(appA, "n", action: NotificationResponse.dismissAction) == nil)
        #expect(bench.launches.count == launches && bench.state(appA) == .notRunning)
        #expect(bench.core.notifications.delivered[appA] == nil)
        bench.open(appA)
        #expect(bench.responses(appA).isEmpty, "a dismissal is not kept for the next launch")

        var running = runningBench()
        running.add(appA, notification("n", .timeInterval(seconds: 1, repeats: false)))
        running.open(appB)
        running.advance(by: .seconds(1))
        running.open(appA)
        #expect(running.tap(appA, "n", action: NotificationResponse.dismissAction) == nil)
        #expect(running.responses(appA).map(\.actionIdentifier) == [NotificationResponse.dismissAction])
        #expect(bench.problems.isEmpty && running.problems.isEmpty, "\(bench.problems) \(running.problems)")
    }

    @Test("NT-2: a tap while the device is locked is refused (DeviceLocked) and changes nothing")
    func tapWhileLockedIsRefused() {
        var bench = NotificationBench.deliveredWhileNotRunning()
        bench.lock()
        let before = bench.core.notifications
        let launches = bench.launches.count
        let error = bench.tap(appA, "n")
        #expect(error?.code == .deviceLocked)
        #expect(error?.fix.contains("unlock") == true)
        #expect(bench.tap(appA, "n", action: "show")?.code == .deviceLocked, "an action that opens the app too")
        #expect(bench.core.notifications == before && bench.launches.count == launches)
        bench.unlock()
        #expect(bench.tap(appA, "n") == nil)
        #expect(bench.problems.isEmpty, "\(bench.problems)")
    }

    @Test(
        "NT-2: a tap on an unknown notification is refused (NoSuchNotification); an action it does not offer is named")
    func unknownNotification() {
        var bench = NotificationBench.deliveredWhileNotRunning()
        let before = bench.core.notifications
        let unknown = bench.tap(appA, "nope")
        #expect(unknown?.code == .noSuchNotification && unknown?.message.contains("nope") == true)
        let action = bench.tap(appA, "n", action: "explode")
        #expect(action?.code == .invalidArgument && action?.message.contains("explode") == true)
        #expect(action?.fix.contains("later") == true, "the fix lists the actions on offer")
        #expect(bench.tap(appC, "n")?.code == .appNotInstalled)
        #expect(bench.core.notifications == before && bench.state(appA) == .notRunning)
        #expect(bench.problems.isEmpty, "\(bench.problems)")
    }

    @Test("NT-2, §11: an app cannot answer or tap another app's notification")
    func anotherAppsNotification() throws {
        var bench = runningBench()
        bench.willPresent[appA] = .ignore
        bench.add(appA, notification("n", .timeInterval(seconds: 60, repeats: false)))
        bench.advance(by: .seconds(60))
        let key = try #require(bench.core.notifications.awaitingApp.keys.first)
        bench.open(appB)
        let error = bench.appInput(appB) { core, pid, now throws(CoreError) in
            try core.answerWillPresent(appB, pid: pid, key: key, presentToUser: false, at: now)
        }
        #expect(error?.code == .noSuchNotification)
        #expect(bench.tap(appB, "n")?.code == .noSuchNotification)
        #expect(bench.core.notifications.awaitingApp.keys.map { $0 } == [key], "still A's to answer")
        // A's handler hangs, so the watchdog ends it: the notification goes to the user, untouched by B.
        bench.advance(by: .seconds(10))
        #expect(bench.state(appA) == .notRunning)
        #expect(bench.core.notifications.delivered[appA]?.map(\.key) == [key])
        #expect(bench.problems.isEmpty, "\(bench.problems)")
    }

    @Test("MAN-3, NT-2: uninstalling an app forgets every notification row it had and fires nothing more for it")
    func uninstallLeavesNothing() {
        var bench = runningBench()
        bench.registerReplyCategory(appA)
        bench.willPresent[appA] = .ignore
        bench.add(appA, notification("now", .timeInterval(seconds: 1, repeats: false), badge: 1))
        bench.add(appA, notification("shown", .timeInterval(seconds: 3, repeats: false), badge: 2))
        bench.add(appA, notification("later", .timeInterval(seconds: 3_600, repeats: true)))
        bench.advance(by: .seconds(1))
        bench.open(appB)
        bench.add(appB, notification("b", .timeInterval(seconds: 600, repeats: false)))
        bench.advance(by: .seconds(2))
        #expect(bench.core.notifications.awaitingApp.count == 1, "A has not answered 'now'")
        #expect(
            bench.store.delivered.count == 2 && bench.store.badges[appA] == 2 && bench.store.categories[appA] != nil)
        let mark = bench.actions.count
        bench.uninstall(appA)
        bench.advance(by: .seconds(30))
        #expect(bench.core.apps[appA] == nil)
        #expect(bench.notificationActions(from: mark).filter { $0 == .forgetApp(appA) }.count == 1)
        let notifications = bench.core.notifications
        #expect(notifications.pending(of: appA).isEmpty && notifications.delivered[appA] == nil)
        #expect(notifications.badges[appA] == nil && notifications.categories[appA] == nil)
        #expect(!notifications.awaitingApp.keys.contains { $0.app == appA })
        #expect(bench.store.rows.allSatisfy { $0.0 != appA } && bench.store.records.allSatisfy { $0.app != appA })
        #expect(bench.store.badges[appA] == nil && bench.store.categories[appA] == nil)
        let fired = bench.fires.count
        bench.advance(by: .seconds(7_200))
        #expect(bench.fires.count == fired + 1 && bench.fires.last?.key.app == appB, "only B's still fires")
        bench.install(appA)
        #expect(bench.core.notifications.pending(of: appA).isEmpty, "installed again, it starts with nothing")
        #expect(bench.problems.isEmpty, "\(bench.problems)")
    }

    @Test(
        "LC-6, NT-2: a background action does not launch a force-quit app; it hears the response when the user opens it"
    )
    func backgroundActionOnForceQuitApp() {
        var bench = NotificationBench.deliveredWhileNotRunning()
        bench.forceQuit(appA)
        let launches = bench.launches.count
        #expect(bench.tap(appA, "n", action: "later") == nil)
        #expect(bench.launches.count == launches, "not launched into the background after a force-quit")
        #expect(bench.core.notifications.delivered[appA] == nil, "the user answered it")
        bench.open(appA)
        #expect(bench.responses(appA).map(\.actionIdentifier) == ["later"])
        #expect(bench.problems.isEmpty, "\(bench.problems)")
    }

    @Test(
        "LC-7, NT-2: a background action does not launch an app that exits on suspend; it hears it next time"
    )
    func backgroundActionOnExitsOnSuspendApp() {
        var bench = NotificationBench.deliveredWhileNotRunning(exitsOnSuspend: true)
        let launches = bench.launches.count
        #expect(bench.tap(appA, "n", action: "later") == nil)
        #expect(bench.launches.count == launches)
        bench.open(appA)
        #expect(bench.responses(appA).map(\.actionIdentifier) == ["later"])
        #expect(bench.problems.isEmpty, "\(bench.problems)")
    }

    @Test(
        "SET-2, NT-2: with background activity off an action neither launches nor thaws the app; it hears it next time")
    func backgroundActionWithBackgroundActivityOff() throws {
        var bench = NotificationBench.deliveredWhileNotRunning()
        var settings = try #require(bench.core.apps[appA]?.app.settings)
        settings.backgroundActivity = false
        bench.feed { core, now throws(CoreError) in try core.setAppSettings(settings, for: appA, at: now) }
        let launches = bench.launches.count
        #expect(bench.tap(appA, "n", action: "later") == nil)
        #expect(bench.launches.count == launches)
        bench.open(appA)
        #expect(bench.responses(appA).map(\.actionIdentifier) == ["later"])
        #expect(bench.problems.isEmpty, "\(bench.problems)")
    }
}
