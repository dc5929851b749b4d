import OffstageProtocol

/// The app's accessories, as `EAAccessoryManager` (SPEC MODE-4): register the ones the app works with, and hear when
/// each connects, disconnects or sends data — even while the app is suspended or not running.
///
/// A registration outlives the app's process and restarts of the system, until ``unregister(name:)``. When a
/// registered accessory connects, a suspended app is woken, and an app that is not running is launched into the
/// background (launch reason ``LaunchReason/accessory``) unless the user force-quit it; a disconnection, or data on a
/// session the app handed off (``AccessorySession``), wakes it. Each time the ``delegate`` (and the handler set for
/// that accessory) is called on the main actor, and the app has about 10 seconds to handle it; for more, begin a
/// background task. The app's `Info.plist` must declare the accessory's mode in `UIBackgroundModes`.
///
/// ```swift
/// AccessoryManager.shared.delegate = self
/// let scanner = try AccessoryManager.shared.register(name: "scanner", path: "/dev/ttyACM0")
/// if scanner.isConnected { session = try AccessorySession(accessory: scanner) }
/// ```
///
/// An app launched for an accessory sets its delegate in did-finish-launching: events that come before there is a
/// delegate or handler are kept and given to the first one set.
@MainActor
public final class AccessoryManager {
    /// The app's accessory manager.
    public static let shared = AccessoryManager(link: DaemonLink.shared, registry: AccessoryRegistry.shared)

    /// Receives connections, disconnections and data of every registered accessory. Held weakly, as on iOS.
    public weak var delegate: (any AccessoryManagerDelegate)? {
        didSet { deliverKept() }
    }

    let link: DaemonLink
    let registry: AccessoryRegistry
    private var handlers: [String: @MainActor (Accessory.Event, Accessory) -> Void] = [:]
    /// What the manager last knew of each accessory, to describe one an event names.
    private var known: [String: Accessory] = [:]
    /// Events that came while nothing listened, oldest first.
    private var kept: [(event: Accessory.Event, accessory: Accessory)] = []

    /// Forgets the delegate, handlers and kept events: a new process of the app starts (the test kit).
    func forgetProcess() {
        delegate = nil
        handlers = [:]
        known = [:]
        kept = []
        registry.forgetProcess()
    }

    /// How many events wait for a delegate at most: the latest are what matter.
    static let keptLimit = 16

    init(link: DaemonLink, registry: AccessoryRegistry) {
        self.link = link
        self.registry = registry
    }

    // MARK: Registrations

    /// Registers an accessory: from now on the system watches `path` for the app, across the app's process ending
    /// and system restarts, until ``unregister(name:)``. Registering the same accessory again changes nothing; a new
    /// path or mode for a name replaces the registration (and closes the system's copy of its session).
    ///
    /// - Parameters:
    ///   - name: the app's name for it: 1 to 64 letters, digits, `.`, `_` or `-`.
    ///   - path: the absolute path of its channel: a character device (`/dev/ttyACM0`, `/dev/rfcomm0`), a link to
    ///     one (`/dev/serial/by-id/…`) or a Unix socket. It need not exist yet.
    ///   - mode: the background mode it belongs to, which the app's `Info.plist` must declare.
    /// - Returns: the accessory, with whether it is connected now.
    /// - Throws: ``AccessoryError`` with code `notPermitted` when the manifest does not declare `mode`,
    ///   `invalidArgument` for a bad name or path (or too many accessories), `unavailable` without the daemon.
    @discardableResult
    public func register(
        name: String, path: String, mode: Accessory.Mode = .externalAccessory
    ) throws(AccessoryError) -> Accessory {
        let accessory = try registry.register(
            ModesInterface.RegisterAccessoryParameters(name: name, path: path, mode: mode.rawValue), link: link)
        known[name] = accessory
        return accessory
    }

    /// Unregisters an accessory: the system stops watching it and closes its copy of the accessory's session. The
    /// app's own ``AccessorySession`` stays open until the app closes it.
    ///
    /// - Throws: ``AccessoryError`` with code `invalidArgument` when no accessory of that name is registered.
    public func unregister(name: String) throws(AccessoryError) {
        try registry.unregister(name, link: link)
        known[name] = nil
        handlers[name] = nil
    }

    /// Every accessory the app registered, with whether each is connected, as the system sees them now.
    public var registeredAccessories: [Accessory] {
        get throws(AccessoryError) {
            let accessories = try registry.accessories(link: link)
            for accessory in accessories { known[accessory.name] = accessory }
            return accessories
        }
    }

    /// The registered accessories that are connected now (`EAAccessoryManager.connectedAccessories`).
    public var connectedAccessories: [Accessory] {
        get throws(AccessoryError) { try registeredAccessories.filter(\.isConnected) }
    }

    // MARK: Events

    /// Calls `handler` on the main actor for every event of the accessory `name`, besides the ``delegate``; nil
    /// removes it. The same rules apply: about 10 seconds to handle each, more with a background task.
    public func setEventHandler(
        forAccessoryNamed name: String, _ handler: (@MainActor (Accessory.Event, Accessory) -> Void)?
    ) {
        handlers[name] = handler
        if handler != nil { deliverKept() }
    }

    /// An `accessory` callback, on the main thread; the caller answers it when this returns.
    func handle(_ callback: AppInterface.CallbackMessage) {
        guard let name = callback.accessory, let event = callback.accessoryEvent.flatMap(Accessory.Event.init) else {
            return
        }
        if known[name] == nil { _ = try? registeredAccessories }
        var accessory = known[name] ?? Accessory(name: name, path: "", mode: .externalAccessory, isConnected: false)
        switch event {
        case .connected, .data:
            accessory.isConnected = true
        case .disconnected:
            accessory.isConnected = false
            accessory.hasSession = false
            registry.disconnected(name)
        }
        known[name] = accessory
        guard delegate != nil || handlers[name] != nil else {
            kept = Array((kept + [(event, accessory)]).suffix(Self.keptLimit))
            return
        }
        deliver(event, accessory)
    }

    private func deliver(_ event: Accessory.Event, _ accessory: Accessory) {
        switch event {
        case .connected: delegate?.accessoryManager(self, didConnect: accessory)
        case .disconnected: delegate?.accessoryManager(self, didDisconnect: accessory)
        case .data: delegate?.accessoryManager(self, didReceiveDataFrom: accessory)
        }
        handlers[accessory.name]?(event, accessory)
    }

    /// Hands kept events over, after the call that set the listener returns (as a delivery would come).
    private func deliverKept() {
        guard !kept.isEmpty else { return }
        Task { @MainActor in
            let waiting = kept.filter { delegate != nil || handlers[$0.accessory.name] != nil }
            kept.removeAll { delegate != nil || handlers[$0.accessory.name] != nil }
            for (event, accessory) in waiting { deliver(event, accessory) }
        }
    }
}
