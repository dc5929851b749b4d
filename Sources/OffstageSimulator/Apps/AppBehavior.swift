import OffstageCore

/// What a simulated app's code does, written as data so a test reads like the scenario it checks.
public struct AppBehavior: Sendable {
    /// One thing the app does when a callback arrives.
    public enum Step: Sendable, Hashable {
        /// Begins a background task; ends it after the given time of running, or never if nil.
        case beginTask(name: String, endAfter: Duration?)
        /// The handler runs this long before returning (instead of the default).
        case takes(Duration)
        /// The handler never returns.
        case hang
        /// The process exits with this code after the given time.
        case exit(code: Int32, after: Duration)
        /// Activates an audio session of this category and plays; stops after the given time of playing, or never.
        case playAudio(AudioSessionCategory, mixWithOthers: Bool, stopAfter: Duration?)
        /// Pauses every player (the session stays active).
        case stopAudio
        /// Sets the VoIP keep-alive timeout (SPEC MODE-2).
        case setKeepAlive(seconds: Double)
        /// Hands the system a (simulated) connected socket to watch while suspended (SPEC MODE-2).
        case handOffSocket
        /// Starts standard location updates (SPEC MODE-3).
        case startUpdatingLocation(LocationRequest)
        /// Stops standard location updates.
        case stopUpdatingLocation
        /// Starts significant-change monitoring (SPEC MODE-3).
        case startMonitoringSignificantChanges
        /// Stops significant-change monitoring.
        case stopMonitoringSignificantChanges
        /// Registers an accessory at a path of the virtual device (SPEC MODE-4).
        case registerAccessory(name: String, path: String, mode: BackgroundMode)
        /// Opens a session to a registered accessory and hands it to the system to watch while suspended.
        case openAccessorySession(name: String)
    }

    /// Steps per callback, keyed by the callback's wire name (`didEnterBackground` …).
    public var steps: [String: [Step]] = [:]
    /// How long a handler runs when no `.takes` step says otherwise.
    public var handlerDuration: Duration = .milliseconds(1)
    /// The expiration handler ends the tasks it is called for (the well-behaved pattern).
    public var endsTasksOnExpiration: Bool = true
    /// will-enter-foreground ends every open task (the cookbook's recipe, scenario S3).
    public var endsTasksOnWillEnterForeground: Bool = false
    /// The SDK exits the process when will-terminate returns.
    public var exitsAfterWillTerminate: Bool = true
    /// The process survives SIGTERM (only SIGKILL ends it).
    public var ignoresSIGTERM: Bool = false
    /// From spawn to the SDK attaching its callback stream.
    public var attachDelay: Duration = .milliseconds(10)
    /// What the app does with scheduled work.
    public var tasks: TaskBehavior = .init()
    /// When an audio interruption ends with "should resume", the app plays again (what a music player does).
    public var resumesAudioAfterInterruption: Bool = true
    /// Its will-present handler asks for notifications to be shown to the user too (`[.banner, .list]`), instead of
    /// handling them itself (SPEC NT-2).
    public var presentsNotificationsInForeground: Bool = false

    /// An app that does nothing special.
    /// How long its remote-notification handler runs before completing, and with what (SPEC NT-4); nil: it never
    /// completes.
    public var pushHandler: (runtime: Duration, result: TaskResult)? = (.milliseconds(100), .newData)
    /// How long its handler of a background session's events runs before calling its completion handler (SPEC TR-3);
    /// nil: it never calls it.
    public var transferEventsHandler: Duration? = .milliseconds(100)
    /// How it uses memory, where the simulation models the device's memory (``Simulation/enableMemory(_:)``).
    public var memory: MemoryBehavior = .init()

    public init() {}

    /// Adds steps for a callback.
    public func on(_ callback: String, _ steps: Step...) -> AppBehavior {
        var copy = self
        copy.steps[callback, default: []] += steps
        return copy
    }

    /// Sets a property fluently.
    public func with<Value>(_ keyPath: WritableKeyPath<AppBehavior, Value>, _ value: Value) -> AppBehavior {
        var copy = self
        copy[keyPath: keyPath] = value
        return copy
    }
}
