import Foundation
import OffstageProtocol

/// The daemon's two notification callbacks (SPEC NT-2): a notification fired while the app is in front
/// (`notificationWillPresent`), and the user responded to one (`notificationResponse`). The delegate's methods are
/// async, so each callback is answered (`CallbackDone`) when its method has returned, not when the main loop hands it
/// over; the daemon sends the app nothing else meanwhile.
extension UserNotificationCenter {
    /// A notification callback, on the main thread: handled in a task on the main actor, which answers it. The task
    /// starts at once, here, rather than after a trip through the main queue: a delegate that does not suspend has
    /// seen the notification before this returns (the app in front hears it as soon as it can, SPEC NT-2).
    func handle(_ callback: AppInterface.CallbackMessage) {
        Task.immediate { await respond(to: callback) }
    }

    /// Runs the delegate for `callback`, tells the daemon what it chose, and answers the callback.
    func respond(to callback: AppInterface.CallbackMessage) async {
        switch (callback.kind, callback.notification) {
        case ("notificationWillPresent", let message?):
            await willPresent(message)
        case ("notificationResponse", let message?):
            let action = callback.actionIdentifier ?? NotificationResponse.defaultActionIdentifier
            await didReceive(NotificationResponse(notification: UserNotification(message), actionIdentifier: action))
        default:
            reportToDeveloper(
                "ignored a \(callback.kind) callback without its notification (a daemon of another version?)")
        }
        link.callbackDone(callback.id)
    }

    /// Asks the delegate how to present a notification that fired while the app is in front, and tells the daemon:
    /// shown to the user as well for a banner or the list, else kept with the app (also when there is no delegate).
    private func willPresent(_ message: NotificationsInterface.DeliveredMessage) async {
        var present = false
        if let delegate {
            present = await delegate.userNotificationCenter(self, willPresent: UserNotification(message)).presentsToUser
        }
        let answer = NotificationsInterface.AnswerWillPresentParameters(
            identifier: message.request.identifier, due: message.due, present: present)
        do throws(NotificationError) {
            _ = try call(NotificationsInterface.Method.answerWillPresent, answer, EmptyReply.self)
        } catch {
            // The daemon takes an unanswered will-present as "keep it with the app" once the callback is answered.
            reportToDeveloper("could not tell the system how to present '\(message.request.identifier)': \(error)")
        }
    }

    private func didReceive(_ response: NotificationResponse) async {
        guard let delegate else {
            kept = Array((kept + [response]).suffix(Self.keptLimit))
            return
        }
        await delegate.userNotificationCenter(self, didReceive: response)
    }

    /// Hands kept responses to a new delegate, after the call that set it returns (as a delivery would come).
    func deliverKept() {
        guard !kept.isEmpty, delegate != nil else { return }
        Task {
            while let delegate, !kept.isEmpty {
                let response = kept.removeFirst()
                await delegate.userNotificationCenter(self, didReceive: response)
            }
        }
    }
}
