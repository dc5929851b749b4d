import OffstageCore
import OffstageHost
import OffstageProtocol

/// `io.offstage.Notifications`: the calls an app's SDK makes for its local notifications (SPEC NT-1, NT-2). The app is
/// the one that owns the calling process (peer credentials), so it sees and changes only its own notifications.
struct NotificationsService: VarlinkInterface {
    let engine: DaemonEngine

    var interfaceDescription: VarlinkInterfaceDescription {
        VarlinkInterfaceDescription(NotificationsInterface.definition)
    }

    var methods: [String: VarlinkMethodHandler] {
        // Every call only asks or tells the core (OffstageHost).
        engine.hostMethods(NotificationCalls.methods, in: NotificationsInterface.name, answer: NotificationCalls.answer)
    }
}
