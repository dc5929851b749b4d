/// One policy's results for a chart: a point per value of its knob.
public struct PolicySeries: Hashable, Sendable {
    /// The policy's name, shown in the legend.
    public var name: String
    /// The points, drawn and joined in this order (usually the knob's order).
    public var points: [Point]

    /// One result of the policy.
    public struct Point: Hashable, Sendable {
        /// Device wake-ups per day (x).
        public var wakeUpsPerDay: Double
        /// The share of fresh opens, 0 … 1 (y).
        public var freshShare: Double
        /// A short label drawn next to the marker (for example the knob value), if any.
        public var label: String?

        /// Creates a point.
        public init(wakeUpsPerDay: Double, freshShare: Double, label: String? = nil) {
            self.wakeUpsPerDay = wakeUpsPerDay
            self.freshShare = freshShare
            self.label = label
        }
    }

    /// Creates a series.
    public init(name: String, points: [Point]) {
        self.name = name
        self.points = points
    }
}
