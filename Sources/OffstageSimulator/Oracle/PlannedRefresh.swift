import OffstageCore

/// One refresh an oracle plans: the app's refresh starts at `at` (and completes one refresh duration later).
public struct PlannedRefresh: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// When the refresh starts.
    public var at: Instant
    /// The app's label.
    public var app: String

    /// Creates a planned refresh.
    public init(at: Instant, app: String) {
        self.at = at
        self.app = app
    }

    /// Ordered by time, then app.
    public static func < (lhs: PlannedRefresh, rhs: PlannedRefresh) -> Bool { (lhs.at, lhs.app) < (rhs.at, rhs.app) }

    public var description: String { "\(app)@\(at)" }
}
