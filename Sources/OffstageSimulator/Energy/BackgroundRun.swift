import OffstageCore

/// One stretch of background work of one app, as the device ran it.
public struct BackgroundRun: Hashable, Sendable {
    /// The app's label.
    public var app: String
    /// When the work ran.
    public var span: Span
    /// Whether it used the network (the radio stays active for the whole run).
    public var usesNetwork: Bool
    /// Whether the app had to be launched from scratch rather than resumed from suspension.
    public var isColdLaunch: Bool

    /// Creates a run.
    public init(app: String, span: Span, usesNetwork: Bool = true, isColdLaunch: Bool = false) {
        self.app = app
        self.span = span
        self.usesNetwork = usesNetwork
        self.isColdLaunch = isColdLaunch
    }
}
