/// An installed app: its manifest, where the daemon keeps its bundle, and the user's settings for it.
public struct InstalledApp: Hashable, Sendable, Codable {
    /// The validated manifest.
    public var manifest: Manifest
    /// The bundle folder the daemon launches from (its own copy).
    public var bundlePath: String
    /// When this version was installed.
    public var installedAt: Instant
    /// The user's settings for the app.
    public var settings: AppSettings
    /// The executable the installed bundle was copied from (resolved), so a copy started by hand is recognised.
    public var sourceExecutable: String?

    /// Creates an installed app.
    public init(
        manifest: Manifest, bundlePath: String, installedAt: Instant, settings: AppSettings = .init(),
        sourceExecutable: String? = nil
    ) {
        self.manifest = manifest
        self.bundlePath = bundlePath
        self.installedAt = installedAt
        self.settings = settings
        self.sourceExecutable = sourceExecutable
    }

    /// The app's identifier.
    public var id: AppID { manifest.id }
}

/// What the daemon keeps about an app across restarts beyond its installation.
public struct AppDurableState: Hashable, Sendable, Codable {
    /// Force-quit by the user and not opened since: never launched in the background (SPEC LC-6).
    public var forceQuit: Bool = false
    /// The last termination.
    public var lastTermination: TerminationRecord?
    /// Crash-loop throttling (SPEC LC-9).
    public var crashLoop: CrashLoop = .init()
    /// Scheduled work, usage history and budgets (SPEC SCH-10).
    public var schedule: AppSchedule = .init()
    /// The user uninstalled the app while its process ran: it is forgotten once the process is gone, also after a
    /// daemon restart (an acknowledged uninstall is never undone by a crash).
    public var uninstallPending: Bool = false
    /// Significant-change location monitoring (SPEC MODE-3): it outlives the process, a force-quit and a restart.
    public var significantLocationChange: SignificantChangeRegistration?
    /// Registered accessories (SPEC MODE-4): watched while the app is not running, so a connection launches it.
    public var accessories: [AccessoryRegistration] = []

    /// The initial state.
    public init() {}

    // A state saved by an older version lacks newer keys: they keep their defaults.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        forceQuit = try container.decodeIfPresent(Bool.self, forKey: .forceQuit) ?? false
        lastTermination = try container.decodeIfPresent(TerminationRecord.self, forKey: .lastTermination)
        crashLoop = try container.decodeIfPresent(CrashLoop.self, forKey: .crashLoop) ?? .init()
        schedule = try container.decodeIfPresent(AppSchedule.self, forKey: .schedule) ?? .init()
        uninstallPending = try container.decodeIfPresent(Bool.self, forKey: .uninstallPending) ?? false
        significantLocationChange = try container.decodeIfPresent(
            SignificantChangeRegistration.self, forKey: .significantLocationChange)
        accessories = try container.decodeIfPresent([AccessoryRegistration].self, forKey: .accessories) ?? []
    }
}

/// Counts consecutive abnormal exits of background launches and holds the next one back (SPEC LC-9).
public struct CrashLoop: Hashable, Sendable, Codable {
    /// Consecutive abnormal exits of background launches.
    public var consecutiveCrashes: Int = 0
    /// No background launch before this instant.
    public var notBefore: Instant?

    /// No crashes.
    public init() {}

    /// Records a crash and computes the next allowed launch: the delay doubles from `initial` up to `maximum`.
    public mutating func recordCrash(at now: Instant, initial: Double, maximum: Double) {
        consecutiveCrashes += 1
        let exponent = min(consecutiveCrashes - 1, 30)
        let delay = min(initial * Double(1 << exponent), maximum)
        notBefore = now + .seconds(double: delay)
    }

    /// Clears the count after a healthy run.
    public mutating func reset() {
        consecutiveCrashes = 0
        notBefore = nil
    }
}
