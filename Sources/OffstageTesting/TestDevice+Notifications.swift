import Foundation
import OffstageCore
import OffstageSimulator

/// A notification as the user saw it, or as the app's delivered list keeps it (SPEC NT-1, NT-2).
public struct TestNotification: Sendable, Hashable, CustomStringConvertible {
    /// The app's identifier for the request.
    public var identifier: String
    /// The app it belongs to.
    public var app: String
    public var title: String
    public var body: String
    /// When it was due.
    public var due: Date
    /// When it was delivered; nil while pending.
    public var deliveredAt: Date?

    init(_ record: DeliveredNotification) {
        identifier = record.request.identifier
        app = record.app.rawValue
        title = record.request.content.title
        body = record.request.content.body
        due = Date(timeIntervalSince1970: record.due.secondsSinceEpoch)
        deliveredAt = Date(timeIntervalSince1970: record.deliveredAt.secondsSinceEpoch)
    }

    init(_ pending: PendingNotification, app: AppID) {
        identifier = pending.request.identifier
        self.app = app.rawValue
        title = pending.request.content.title
        body = pending.request.content.body
        due = Date(timeIntervalSince1970: pending.due.secondsSinceEpoch)
        deliveredAt = nil
    }

    public var description: String {
        "\(identifier) '\(title)' due \(due.formatted(.iso8601))" + (deliveredAt.map { ", delivered \($0.formatted(.iso8601))" } ?? "")
    }
}

extension TestDevice {
    /// Every notification shown to the user (a banner or the notification list), in order, each once.
    public var shownNotifications: [TestNotification] {
        host.with { $0.simulation.shownNotifications.map(TestNotification.init) }
    }

    /// The user taps the app's delivered notification `identifier`, or chooses its action `action`: the app's
    /// notification delegate hears the response (the app is launched for it if it does not run).
    public func tapNotification(_ identifier: String, of app: TestApp, action: String? = nil) async throws {
        try host.with { state in
            try refusing {
                try state.simulation.tapNotification(
                    app.appID, identifier: identifier, action: action ?? NotificationResponse.defaultAction)
            }
        }
        try await runUntilIdle()
    }

    /// The device's time zone changes (the user travels, or sets it): calendar notifications follow the wall clock.
    public func setTimeZone(_ zone: TimeZone) async throws {
        host.with { $0.simulation.setTimeZone(zone.identifier) }
        try await runUntilIdle()
    }
}

extension TestApp {
    /// The app's pending notification requests, soonest first.
    public var pendingNotifications: [TestNotification] {
        device.host.with { state in state.simulation.core.notifications.pending(of: appID).map { TestNotification($0, app: appID) } }
    }

    /// The number on the app's icon; nil when there is none.
    public var badge: Int? {
        device.host.with { state in state.simulation.core.notifications.badges[appID] }.flatMap { $0 == 0 ? nil : $0 }
    }

    /// The app's delivered notifications still in the list, as `getDeliveredNotifications` returns them.
    public var deliveredNotifications: [TestNotification] {
        device.host.with { state in (state.simulation.core.notifications.delivered[appID] ?? []).map(TestNotification.init) }
    }
}
