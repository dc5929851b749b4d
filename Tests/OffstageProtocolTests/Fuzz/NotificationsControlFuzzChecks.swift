import Foundation
import OffstageCore

@testable import OffstageProtocol

/// The properties every input of the `notifications-control` fuzz target must keep (SPEC NT-2, CLI-2, §11). An input
/// is one Varlink message, as the CLI's `io.offstage.NotificationsControl` call would be (list, tap or clear the apps'
/// notifications); it goes the way `NotificationsControlService` takes it: the codec, the wire parameters, the app
/// named, the core — in each of ``InterfaceFuzz/cores``, where the app has one delivered and one pending notification.
///
/// A refusal is one of the errors NotificationsControl declares (the service answers the core's others as
/// InvalidArgument), with a message and a fix, and changes nothing; a listing shows only the app asked for and can be
/// sent; a tap takes the notification off the delivered list; a clear removes exactly what it says it removed.
enum NotificationsControlFuzzChecks {
    typealias Outcome = InterfaceFuzz.Outcome
    typealias Violation = InterfaceFuzz.Violation

    /// Any code: `notificationsControlCall` answers the ones NotificationsControl does not declare as InvalidArgument.
    static let declared: Set<CoreError.Code>? = nil

    @discardableResult
    static func check(_ bytes: [UInt8]) throws(Violation) -> Outcome {
        try InterfaceFuzz.check(bytes, of: NotificationsControlInterface.name) { call, core, now throws(Violation) in try check(call, in: core, at: now) }
    }

    private static func check(_ call: VarlinkReceivedCall, in start: OffstageCore, at now: Instant) throws(Violation) -> Outcome {
        let method = call.header.method
        func run(_ body: (inout OffstageCore) throws -> Void) throws(Violation) -> Outcome {
            try InterfaceFuzz.run(method, in: start, allowed: declared, body)
        }
        switch method {
        case NotificationsControlInterface.Method.notifications:
            guard let parameters = try InterfaceFuzz.parameters(call, as: NotificationsControlInterface.NotificationsParameters.self) else {
                return .refusedParameters
            }
            return try run { core in
                let id = try parameters.app.map { text throws(CoreError) in try InterfaceFuzz.installedApp(text, in: core) }
                let listing = NotificationsControlInterface.NotificationsListing(core.notifications, app: id)
                if let id, listing.pending.contains(where: { $0.app != id }) || listing.delivered.contains(where: { $0.app != id }) {
                    throw Violation("the listing of \(id) shows another app's notifications")
                }
                try InterfaceFuzz.reply(listing, of: method)
            }
        case NotificationsControlInterface.Method.tap:
            guard let parameters = try InterfaceFuzz.parameters(call, as: NotificationsControlInterface.TapParameters.self) else {
                return .refusedParameters
            }
            return try run { core in
                let id = try InterfaceFuzz.installedApp(parameters.app, in: core)
                let action = parameters.action ?? NotificationResponse.defaultAction
                _ = try core.respondToNotification(id, identifier: parameters.identifier, action: action, at: now)
                let delivered = core.notifications.delivered[id] ?? []
                guard !delivered.contains(where: { $0.request.identifier == parameters.identifier }) else {
                    throw Violation("a tapped notification is still delivered")
                }
            }
        case NotificationsControlInterface.Method.clear:
            guard let parameters = try InterfaceFuzz.parameters(call, as: NotificationsControlInterface.ClearParameters.self) else {
                return .refusedParameters
            }
            return try run { core in
                let id = try parameters.app.map { text throws(CoreError) in try InterfaceFuzz.installedApp(text, in: core) }
                let before = core.notifications.delivered.values.reduce(0) { $0 + $1.count }
                let (removed, _) = try core.clearDeliveredNotifications(id, identifiers: parameters.identifiers, at: now)
                let after = core.notifications.delivered.values.reduce(0) { $0 + $1.count }
                guard removed == before - after, removed >= 0 else {
                    throw Violation("clear said \(removed) went; the delivered list went from \(before) to \(after)")
                }
            }
        default:
            return .notACall
        }
    }
}
