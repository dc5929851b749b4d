/// What the core asks its shell to do. The shell performs actions in order and decides nothing.
public enum CoreAction: Hashable, Sendable {
    /// Start the app's process; report `processStarted` or `launchFailed` with the same launch number.
    case launch(AppID, LaunchPlan)
    /// Send a callback to the app's process (it is attached and not frozen).
    case deliver(AppID, pid: Int32, Callback)
    /// Freeze the app's whole process tree.
    case freeze(AppID, pid: Int32)
    /// Thaw the app's whole process tree.
    case thaw(AppID, pid: Int32)
    /// SIGTERM to the app's whole process tree.
    case terminate(AppID, pid: Int32)
    /// SIGKILL to the app's whole process tree, frozen or not.
    case kill(AppID, pid: Int32)
    /// Append to the event log.
    case log(LogEntry)
    /// Persist the app's durable state (``OffstageCore/durableState(of:)``) and settings.
    case saveApp(AppID)
    /// Persist the device state.
    case saveDevice
    /// The app is uninstalled and its process gone: remove everything kept for it, including the bundle folder of
    /// the installed version (and only that one).
    case forget(AppID, bundlePath: String)
    /// Watch (armed) or stop watching the socket the app handed off, known by `token`; report data or a hang-up with
    /// ``OffstageCore/socketEvent(_:token:closed:at:)``. Never read it: the data is the app's (SPEC MODE-2).
    case watchSocket(AppID, token: UInt64, armed: Bool)
    /// Close the socket the app handed off and forget it.
    case closeSocket(AppID, token: UInt64)
    /// Watch whether `path`, the channel of the app's accessory `name`, exists; report it at once and on every change
    /// with ``OffstageCore/accessoryPresence(_:name:connected:at:)`` (SPEC MODE-4). Replaces a watch of that name.
    case watchAccessory(AppID, name: String, path: String)
    /// Stop watching the app's accessory `name`.
    case unwatchAccessory(AppID, name: String)
    /// Persist or show local notifications (SPEC NT-1, NT-2).
    case notification(NotificationAction)
    /// Persist what became of pushes (SPEC NT-4, NT-5).
    case push(PushAction)
    /// Journal, start, stop or hand over background transfers (SPEC §5). Indirect: a task is large, and every action
    /// would otherwise take its size (a burst of 64,000 notifications is that many actions).
    indirect case transfer(TransferAction)
    /// Show the user where a continued-processing run stands (its title, progress, whether it is ending), or, with
    /// nil, that it is over: the desktop's progress notification (SPEC SCH-11).
    indirect case continuedProgress(AppID, run: UInt64, ContinuedTaskView?)
    /// Store a record of the history of scheduled work: a stretch of waiting, or a run (SPEC SCH-8). Records come
    /// open (no end) and again when they close; the shell keeps the latest of each. Indirect, as a transfer action.
    indirect case recordHistory(HistoryRecord)
    /// Block or allow the traffic of the apps listed, as the user's data controls say (SPEC SET-2). One action per
    /// input, with every app whose restriction changed; the shell applies it as one batch, off the transition's path.
    case network(NetworkRulesChange)
    /// Read the counters of the apps whose usage context changed and count what they moved to the context that ended
    /// (SPEC SET-3); add the bytes the daemon moved for apps' transfers. One action per input, off the transition's path.
    case usage(UsageChange)
}

/// How to launch an app.
public struct LaunchPlan: Hashable, Sendable {
    /// Identifies this launch until the process has a pid.
    public var launch: UInt64
    /// Why it is launched; the process learns it from did-finish-launching.
    public var reason: LaunchReason

    /// Creates a plan.
    public init(launch: UInt64, reason: LaunchReason) {
        self.launch = launch
        self.reason = reason
    }
}
