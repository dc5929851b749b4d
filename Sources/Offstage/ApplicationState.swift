extension Application {
    /// The app's state, as `UIApplication.State`.
    public enum State: String, Sendable, Hashable {
        /// In front and receiving events.
        case active
        /// In front, not receiving events (launching, or covered by an interruption).
        case inactive
        /// Running in the background.
        case background
    }

    /// One lifecycle event, as published by ``Application/lifecycleEvents``.
    public enum LifecycleEvent: Sendable, Hashable {
        /// did-finish-launching, with the reason.
        case didFinishLaunching(LaunchReason)
        /// did-become-active.
        case didBecomeActive
        /// will-resign-active.
        case willResignActive
        /// did-enter-background.
        case didEnterBackground
        /// will-enter-foreground.
        case willEnterForeground
        /// will-terminate.
        case willTerminate
        /// A memory warning (SPEC MEM-1).
        case didReceiveMemoryWarning
    }
}
