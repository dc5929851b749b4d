/// What an app's SDK tells the daemon when it attaches: lets a restarted daemon re-adopt a live app, and lets a
/// process started by hand join (SPEC LC-8).
public struct AttachReport: Hashable, Sendable, Codable {
    /// did-finish-launching already ran in this process.
    public var launchCompleted: Bool
    /// The state the app believes it is in.
    public var state: ApplicationState
    /// Background tasks the app still has open.
    public var openTasks: [ReportedTask]
    /// Continued-processing tasks the app is still running (SPEC SCH-11), with their progress.
    public var continuedTasks: [ReportedContinuedTask] = []

    /// A continued-processing task the app reports as running.
    public struct ReportedContinuedTask: Hashable, Sendable, Codable {
        /// The run the daemon started it as.
        public var run: UInt64
        public var identifier: String
        public var progress: ContinuedProgress

        public init(run: UInt64, identifier: String, progress: ContinuedProgress) {
            self.run = run
            self.identifier = identifier
            self.progress = progress
        }
    }

    /// A background task the app reports as open.
    public struct ReportedTask: Hashable, Sendable, Codable {
        /// Its identifier.
        public var id: BackgroundTaskID
        /// Its name.
        public var name: String

        /// Creates a reported task.
        public init(id: BackgroundTaskID, name: String) {
            self.id = id
            self.name = name
        }
    }

    /// Creates a report.
    public init(
        launchCompleted: Bool, state: ApplicationState, openTasks: [ReportedTask] = [],
        continuedTasks: [ReportedContinuedTask] = []
    ) {
        self.launchCompleted = launchCompleted
        self.state = state
        self.openTasks = openTasks
        self.continuedTasks = continuedTasks
    }

    /// The report of a process that has just started and knows nothing yet.
    public static let fresh = AttachReport(launchCompleted: false, state: .notRunning)
}
