import OffstageCore

/// How fresh apps' content was when the user opened them.
public struct FreshnessReport: Hashable, Sendable {
    /// All opens measured.
    public var opens: Int
    /// Opens whose app had completed a refresh since its previous open.
    public var freshOpens: Int
    /// Opens whose app had never completed a refresh (their age runs from the start of the trace).
    public var neverRefreshedOpens: Int
    /// The age of the content at every open, sorted ascending.
    public var ages: [Duration]
    /// The same counts per app, by label.
    public var perApp: [String: AppFreshness]

    /// Opens and fresh opens of one app.
    public struct AppFreshness: Hashable, Sendable {
        /// The app's opens.
        public var opens: Int
        /// Its fresh opens.
        public var freshOpens: Int

        /// Creates the counts.
        public init(opens: Int, freshOpens: Int) {
            self.opens = opens
            self.freshOpens = freshOpens
        }
    }

    /// Creates a report.
    public init(
        opens: Int, freshOpens: Int, neverRefreshedOpens: Int, ages: [Duration], perApp: [String: AppFreshness]
    ) {
        self.opens = opens
        self.freshOpens = freshOpens
        self.neverRefreshedOpens = neverRefreshedOpens
        self.ages = ages
        self.perApp = perApp
    }

    /// The share of opens that were fresh, 0 … 1 (0 when there are no opens).
    public var freshShare: Double { opens == 0 ? 0 : Double(freshOpens) / Double(opens) }

    /// The median age at open (nil without opens), interpolated as ``Quantile`` describes.
    public var medianAge: Duration? { ages.isEmpty ? nil : Quantile.of(sorted: ages, 0.5) }

    /// The 90th percentile of the age at open (nil without opens).
    public var p90Age: Duration? { ages.isEmpty ? nil : Quantile.of(sorted: ages, 0.9) }
}
