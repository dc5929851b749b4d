import OffstageCore
import OffstageSimulator
import Testing

/// Alert pushes are shown like local notifications (SPEC NT-4), with what the payload said kept in the record.
@Suite("Alert pushes (SPEC NT-4)")
struct PushAlertTests {
    @Test("NT-4, NT-2: an alert push for an app that is not running goes to the user with its payload, sound, badge and thread; the app is not launched")
    func alertToUser() throws {
        var sim = Simulation.withMessenger()
        let alert = push("a1", at: sim.now, alert: PushAlert(title: "Ada", body: "Lunch?"), badge: 4)
        sim.receivePush(alert)
        sim.run(for: .seconds(1))
        let shown = try #require(sim.shownNotifications.first)
        #expect(shown.app == messenger && shown.route == .user)
        #expect(shown.request.identifier == "a1")
        #expect(shown.request.content.title == "Ada" && shown.request.content.body == "Lunch?")
        #expect(shown.request.content.userInfo == alert.payload, "the whole payload is the user info")
        #expect(shown.request.content.sound == "default" && shown.request.content.badge == 4)
        #expect(shown.request.content.threadIdentifier == "chat-7")
        #expect(sim.core.notifications.badges[messenger] == 4)
        #expect(sim.pushOutcomes["a1"] == .shown)
        #expect(sim.trace(of: messenger).isEmpty, "an alert alone launches nothing")
    }

    @Test("NT-4, NT-2: an alert push while the app is active in front goes to its will-present handler, not the user")
    func alertToActiveApp() throws {
        var sim = Simulation.withMessenger()
        try sim.open(messenger)
        sim.run(for: .milliseconds(100))
        sim.receivePush(push("a1", at: sim.now, alert: PushAlert(title: "Ada", body: "Lunch?")))
        sim.run(for: .seconds(1))
        #expect(sim.willPresentNotifications[messenger]?.map(\.request.identifier) == ["a1"])
        #expect(sim.shownNotifications.isEmpty)
        #expect(sim.pushOutcomes["a1"] == .shown)
    }

    @Test("NT-4: an alert push handed in again (after a restart) is not shown twice")
    func alertNotShownTwice() {
        var sim = Simulation.withMessenger()
        let alert = push("a1", at: sim.now, alert: PushAlert(title: "Ada", body: "Lunch?"))
        sim.receivePush(alert)
        sim.run(for: .seconds(1))
        sim.receivePush(alert)
        sim.run(for: .seconds(1))
        #expect(sim.shownNotifications.map(\.request.identifier) == ["a1"])
        #expect(sim.core.notifications.delivered[messenger]?.count == 1)
    }

    @Test("NT-5: an alert push with the collapse id of one already delivered replaces it in the delivered list")
    func collapseReplacesDelivered() {
        var sim = Simulation.withMessenger()
        sim.receivePush(push("a1", at: sim.now, alert: PushAlert(body: "score 1-0"), collapseID: "match"))
        sim.run(for: .seconds(1))
        sim.receivePush(push("a2", at: sim.now, alert: PushAlert(body: "score 2-0"), collapseID: "match"))
        sim.run(for: .seconds(1))
        let delivered = sim.core.notifications.delivered[messenger] ?? []
        #expect(delivered.map(\.request.identifier) == ["match"])
        #expect(delivered.first?.request.content.body == "score 2-0")
    }

    @Test("NT-4: an alert push with content-available both shows the alert and wakes the app; its record is the handler's result")
    func alertAndWake() throws {
        var sim = Simulation.withMessenger()
        try sim.suspend(messenger)
        sim.receivePush(push("a1", at: sim.now, alert: PushAlert(body: "new mail"), contentAvailable: true))
        sim.run(for: .seconds(5))
        #expect(sim.shownNotifications.map(\.request.identifier) == ["a1"])
        #expect(sim.handledPushes[messenger] == ["a1"])
        #expect(sim.pushOutcomes["a1"] == .handled(.newData))
    }

    @Test("NT-4, SET-2: with the app's notifications off an alert push shows nothing and is recorded as not delivered")
    func notificationsOff() throws {
        var sim = Simulation.withMessenger()
        var settings = try #require(sim.core.apps[messenger]?.app.settings)
        settings.notifications = false
        try sim.setAppSettings(settings, for: messenger)
        sim.receivePush(push("a1", at: sim.now, alert: PushAlert(body: "hello")))
        sim.run(for: .seconds(1))
        #expect(sim.shownNotifications.isEmpty)
        #expect(sim.pushOutcomes["a1"]?.name == "not-delivered")
    }
}
