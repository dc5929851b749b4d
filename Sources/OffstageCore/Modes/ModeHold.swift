/// What a background mode says about an app's process right now (SPEC LC-4, §7).
///
/// Suspension asks every mode component; an app in the background stays running while any component holds it.
/// A component that *would* hold the app but may not (the mode is not declared, SPEC MODE-6; background activity is
/// off, SPEC SET-2) says so, so `offstage apps` and `explain` can tell a developer why the app was suspended anyway.
public struct ModeHold: Hashable, Sendable, Codable, CustomStringConvertible {
    /// Whether the mode keeps the app running, or would but may not.
    public enum Verdict: String, Hashable, Sendable, Codable {
        /// The mode keeps the app running.
        case holds
        /// The app does what the mode is for, but the mode gives it no background time (the reason says why).
        case denied
    }

    /// The mode.
    public var mode: BackgroundMode
    /// Holds or denied.
    public var verdict: Verdict
    /// What the app is doing and, when denied, why that gives no background time and the fix.
    public var reason: String

    /// Creates a hold.
    public init(_ mode: BackgroundMode, _ verdict: Verdict, _ reason: String) {
        self.mode = mode
        self.verdict = verdict
        self.reason = reason
    }

    /// `audio: playing (playback)` or `audio (denied): playing, but …`.
    public var description: String {
        verdict == .holds ? "\(mode.rawValue): \(reason)" : "\(mode.rawValue) (no background time): \(reason)"
    }
}

/// What the core tells a mode component about an app when asking whether the mode holds it.
public struct ModeContext: Hashable, Sendable {
    /// The modes the manifest declares (SPEC MAN-1, MODE-6).
    public var declared: Set<BackgroundMode>
    /// The user's per-app "background activity" setting (SPEC SET-2).
    public var backgroundActivity: Bool
    /// Whether the app is in the foreground (inactive or active).
    public var inForeground: Bool
    /// The time of the question.
    public var now: Instant

    /// Creates a context.
    public init(declared: Set<BackgroundMode>, backgroundActivity: Bool, inForeground: Bool, now: Instant) {
        self.declared = declared
        self.backgroundActivity = backgroundActivity
        self.inForeground = inForeground
        self.now = now
    }

    /// The reason a mode that is not declared gives no background time (SPEC MODE-6).
    static func undeclared(_ mode: BackgroundMode) -> String {
        "'\(mode.rawValue)' is not in UIBackgroundModes, so it gives no background time; "
            + "add it to the app's Info.plist to keep running"
    }
}

/// What a mode component asks the core to do; the core turns these into lifecycle changes and shell actions.
public enum ModeAction: Hashable, Sendable {
    /// Queue a callback for the app: sent when it runs, kept in order while it is suspended (SPEC LC-4).
    case notify(AppID, CallbackKind)
    /// Thaw the app if it is suspended, so it hears what was queued for it; never launches it.
    case resume(AppID, because: String)
    /// Something the app's hold depends on changed: decide its suspension again.
    case reconsider(AppID)
    /// Append to the event log.
    case log(AppID?, String)
    /// An action for the shell as it is (watch or close a socket).
    case shell(CoreAction)
    /// Launch the app into the background for `reason` if it has no process (the component decided the system may).
    case launch(AppID, LaunchReason, because: String)
    /// What the app's durable state keeps of a mode changed: copy it there and save it (SPEC MODE-3's significant-change
    /// monitoring outlives the process and the daemon).
    case save(AppID)
}

/// What the core tells a mode component about an app when something happens that may wake or launch it.
public enum ModeRecipient: Hashable, Sendable {
    /// The app has a process; `frozen` when it is suspended, `mayWake` when the system may run it in the background
    /// (background activity on, SPEC SET-2).
    case running(frozen: Bool, mayWake: Bool)
    /// No process; `whyNot` says why the system may not launch it (nil: it may).
    case notRunning(whyNot: String?)
    /// The app is not installed any more.
    case gone
}
