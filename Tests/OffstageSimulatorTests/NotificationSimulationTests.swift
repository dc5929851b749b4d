import OffstageCore
import OffstageSimulator
import Testing

/// The alarm of the platform guide on virtual time (SPEC NT-1, NT-2): an app schedules a local notification a
/// minute ahead and leaves; at exactly its due time the user is shown it, once, and the app is not woken for it.
@Suite("Local notifications on the simulator (SPEC NT-1, NT-2)")
struct NotificationSimulationTests {
    static let alarmApp: AppID = "com.example.alarm"

    /// How the app is gone when the alarm is due.
    enum Gone: String, CaseIterable, Sendable {
        /// The user went home: the app is suspended.
        case suspended
        /// The user force-quit it.
        case forceQuit
        /// It exited by itself in did-enter-background.
        case exited
    }

    /// The alarm app launched and active, with its alarm added a minute ahead; returns the simulation and the due time.
    static func alarmScheduled(behavior: AppBehavior = .init()) throws -> (Simulation, Instant) {
        var sim = Simulation()
        sim.install(Manifest(id: alarmApp, executable: "alarm"), behavior: behavior)
        try sim.open(alarmApp)
        sim.run(for: .milliseconds(100))
        #expect(sim.state(of: alarmApp) == .active)
        let alarm = NotificationRequest(
            identifier: "wake-up", content: NotificationContent(title: "Wake up", sound: "default", badge: 1),
            trigger: .timeInterval(seconds: 60, repeats: false))
        try sim.addNotification(alarmApp, alarm)
        let due = sim.now + .seconds(60)
        #expect(sim.core.notifications.pending(of: alarmApp).map(\.due) == [due])
        return (sim, due)
    }

    @Test(
        "NT-2: the alarm is shown at exactly its due time, once, and the app that left is not woken",
        arguments: Gone.allCases)
    func alarmFiresOnTime(gone: Gone) throws {
        let exits = AppBehavior().on("didEnterBackground", .exit(code: 0, after: .milliseconds(10)))
        var (sim, due) = try Self.alarmScheduled(behavior: gone == .exited ? exits : AppBehavior())
        switch gone {
        case .suspended: sim.home()
        case .forceQuit: try sim.forceQuit(Self.alarmApp)
        case .exited: sim.home()
        }
        sim.run(for: .seconds(5))
        #expect(sim.state(of: Self.alarmApp) == (gone == .suspended ? .suspended : .notRunning))
        let before = sim.trace(of: Self.alarmApp).count

        sim.run(until: due - .milliseconds(1))
        #expect(sim.shownNotifications.isEmpty, "not a millisecond early")
        sim.run(until: due)
        #expect(sim.shownNotifications.map(\.request.identifier) == ["wake-up"])
        let shown = try #require(sim.shownNotifications.first)
        #expect(shown.due == due && shown.deliveredAt == due && !shown.late && shown.route == .user)
        #expect(
            sim.log.contains {
                $0.at == due && $0.app == Self.alarmApp && $0.message.contains("delivered 'wake-up' to the user")
            })

        sim.run(for: .seconds(3_600))
        #expect(sim.shownNotifications.count == 1, "once")
        #expect(sim.core.notifications.pending(of: Self.alarmApp).isEmpty)
        #expect(sim.core.notifications.delivered[Self.alarmApp]?.map(\.request.identifier) == ["wake-up"])
        #expect(sim.core.notifications.badges[Self.alarmApp] == 1)
        // Not launched, thawed or called for it: nothing at all happened to the app.
        #expect(sim.trace(of: Self.alarmApp).count == before)
        #expect(sim.state(of: Self.alarmApp) == (gone == .suspended ? .suspended : .notRunning))
        #expect(sim.willPresentNotifications.isEmpty && sim.errors.isEmpty)
    }

    @Test("NT-2: in front, the alarm goes to the app's will-present handler; the user sees it only if the app asks")
    func alarmInTheForeground() throws {
        for presents in [false, true] {
            var (sim, due) = try Self.alarmScheduled(
                behavior: AppBehavior().with(\.presentsNotificationsInForeground, presents))
            sim.run(until: due)
            #expect(sim.willPresentNotifications[Self.alarmApp]?.map(\.due) == [due])
            #expect(sim.callbacks(of: Self.alarmApp).last == "notificationWillPresent")
            sim.run(for: .seconds(1))
            #expect(sim.shownNotifications.map(\.request.identifier) == (presents ? ["wake-up"] : []))
            #expect(sim.state(of: Self.alarmApp) == .active && sim.errors.isEmpty)
        }
    }

    @Test(
        "NT-2: tapping the shown alarm opens the app from not running: launched for the notification, then the response"
    )
    func tapOpensTheApp() throws {
        var (sim, due) = try Self.alarmScheduled()
        try sim.forceQuit(Self.alarmApp)
        sim.run(until: due + .seconds(1))
        let before = sim.callbacks(of: Self.alarmApp).count
        try sim.tapNotification(Self.alarmApp, identifier: "wake-up")
        sim.run(for: .seconds(1))
        #expect(sim.trace(of: Self.alarmApp).contains { $0.event == .launched(.notification) })
        #expect(
            Array(sim.callbacks(of: Self.alarmApp).dropFirst(before)) == [
                "didFinishLaunching", "didBecomeActive", "notificationResponse",
            ])
        #expect(sim.notificationResponses[Self.alarmApp]?.map(\.actionIdentifier) == ["default"])
        #expect(sim.state(of: Self.alarmApp) == .active)
        #expect(sim.core.notifications.delivered[Self.alarmApp] == nil)
    }
}
