/// What an app declares about itself in its bundle's `Info.plist` (SPEC MAN-1).
public struct Manifest: Hashable, Sendable, Codable {
    /// `CFBundleIdentifier`.
    public var id: AppID
    /// `CFBundleExecutable`: the executable's file name inside the bundle folder.
    public var executable: String
    /// `UIBackgroundModes`.
    public var backgroundModes: Set<BackgroundMode>
    /// `BGTaskSchedulerPermittedIdentifiers`.
    public var permittedTaskIdentifiers: [String]
    /// `UIApplicationExitsOnSuspend`: the app never enters the background (SPEC LC-7).
    public var exitsOnSuspend: Bool
    /// Settings that only make sense on Linux, under the `OffstageLinux` key.
    public var linux: LinuxSettings

    /// Creates a manifest.
    public init(
        id: AppID, executable: String, backgroundModes: Set<BackgroundMode> = [],
        permittedTaskIdentifiers: [String] = [], exitsOnSuspend: Bool = false, linux: LinuxSettings = .init()
    ) {
        self.id = id
        self.executable = executable
        self.backgroundModes = backgroundModes
        self.permittedTaskIdentifiers = permittedTaskIdentifiers
        self.exitsOnSuspend = exitsOnSuspend
        self.linux = linux
    }

    /// Whether a request with `identifier` of `kind` may be submitted: it is listed, or, for a continued-processing
    /// request, a listed pattern ending in `.*` covers it (`com.example.export.*` covers `com.example.export.42`; SPEC
    /// SCH-11), since each such task the user starts has an identifier of its own.
    public func permits(_ identifier: String, _ kind: TaskKind) -> Bool {
        if permittedTaskIdentifiers.contains(identifier) { return true }
        guard kind == .continued else { return false }
        return permittedTaskIdentifiers.contains { pattern in
            guard pattern.hasSuffix(".*") else { return false }
            let prefix = pattern.dropLast()
            return identifier.count > prefix.count && identifier.hasPrefix(prefix)
        }
    }

    /// Whether the manifest declares `mode` (SPEC MAN-4, MODE-6).
    public func declares(_ mode: BackgroundMode) -> Bool { backgroundModes.contains(mode) }

    /// The Linux-only part of the manifest: how to start the executable and what it may use.
    public struct LinuxSettings: Hashable, Sendable, Codable {
        /// Extra command-line arguments (`Arguments`).
        public var arguments: [String]
        /// Extra environment variables (`Environment`).
        public var environment: [String: String]
        /// Memory limit in MiB (`MemoryLimitMB`, SPEC MEM-2): the kernel's memory controller ends the app when it
        /// uses more; where no controller can be used, the daemon reads the app's memory and ends it over the limit.
        public var memoryLimitMB: Int?
        /// The largest limit a manifest may give: 1 TiB.
        public static let maximumMemoryLimitMB = 1_048_576

        /// The limit in bytes.
        public var memoryLimitBytes: Int64? { memoryLimitMB.map { Int64($0) * 1_048_576 } }

        /// Creates Linux settings.
        public init(arguments: [String] = [], environment: [String: String] = [:], memoryLimitMB: Int? = nil) {
            self.arguments = arguments
            self.environment = environment
            self.memoryLimitMB = memoryLimitMB
        }
    }
}
