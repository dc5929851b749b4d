/// What an ``AccessoryManager`` tells the app about its registered accessories, in the shape of
/// `CBCentralManagerDelegate`'s connect and disconnect methods (and `EAAccessoryDidConnect`/`DidDisconnect`).
///
/// Called on the main actor. Each call may be why the app was woken, or launched into the background (launch reason
/// ``LaunchReason/accessory``): the app then stays running about 10 seconds from the event before it may be suspended
/// again. The method must return within that time (the system terminates an app whose method has not, as a hung
/// app); for more time, begin a background task (``Application/beginBackgroundTask(withName:expirationHandler:)``)
/// before returning and end it when done. Every method has an empty default implementation.
@MainActor
public protocol AccessoryManagerDelegate: AnyObject {
    /// The accessory's channel appeared: open an ``AccessorySession`` to it.
    func accessoryManager(_ manager: AccessoryManager, didConnect accessory: Accessory)

    /// The accessory's channel went away, or its session hung up. The system closed its copy of the session; close
    /// the app's (reading it throws `disconnected`).
    func accessoryManager(_ manager: AccessoryManager, didDisconnect accessory: Accessory)

    /// The accessory sent data while the app was suspended (the session the app handed off became readable): read
    /// it from the app's ``AccessorySession`` now.
    func accessoryManager(_ manager: AccessoryManager, didReceiveDataFrom accessory: Accessory)
}

extension AccessoryManagerDelegate {
    /// Does nothing.
    public func accessoryManager(_ manager: AccessoryManager, didConnect accessory: Accessory) {}
    /// Does nothing.
    public func accessoryManager(_ manager: AccessoryManager, didDisconnect accessory: Accessory) {}
    /// Does nothing.
    public func accessoryManager(_ manager: AccessoryManager, didReceiveDataFrom accessory: Accessory) {}
}
