import OffstageCore

/// `io.offstage.Control`: what the user (through the `offstage` CLI, or any Varlink client) may do.
/// Processes that belong to an app are refused: an app cannot act as the user.
public enum ControlInterface {
    /// The interface name.
    public static let name = "io.offstage.Control"

    /// The Varlink interface definition, served by `GetInterfaceDescription`.
    public static let definition = """
        # What the user may do: install apps, act on them, change settings, inspect.
        # Processes that belong to an installed app are refused (PermissionDenied).
        interface io.offstage.Control

        # One app as the user sees it.
        type App (
          id: string,
          # notRunning, inactive, active, background or suspended
          state: string,
          pid: ?int,
          # background tasks open
          backgroundTasks: int,
          # seconds of background time left; null in the foreground or when not running
          backgroundTimeRemaining: ?float,
          launchReason: ?string,
          terminating: ?string,
          forceQuit: bool,
          lastTermination: ?string,
          lastTerminationAt: ?float,
          backgroundModes: []string,
          exitsOnSuspend: bool,
          # the modes keeping the app running now (SPEC §7)
          activeModes: []string,
          # every mode's verdict, for people: what keeps the app running, or why a mode gives it no background time
          modeHolds: []string,
          # while suspended: why
          suspendedBecause: ?string,
          # work the user started that continues in the background, running then queued (SPEC SCH-11)
          continuedTasks: []ContinuedTask,
          # the memory of its processes in bytes (their proportional set size) at the latest reading: a little after
          # it was last suspended, or a usage query; null when not running, and in Open's reply (SET-3)
          memoryBytes: ?int,
          # while it runs, its band for memory (MEM-1): foreground, background-user, background-work or suspended
          memoryBand: ?string,
          # while it runs, its place in the order apps are ended when memory stays short: 1 is ended first
          memoryEndingRank: ?int,
          # the user's "kept in memory" setting (SET-2): ended only after every other app out of the foreground
          keptInMemory: bool
        )

        # A continued-processing task: queued, running or ending (its expiration handler was called).
        type ContinuedTask (
          identifier: string,
          state: string,
          title: string,
          subtitle: string,
          completed: int,
          total: int,
          endedBecause: ?string
        )

        # One line of the event log.
        type LogEntry (
          id: int,
          # seconds since the Unix epoch
          at: float,
          app: ?string,
          kind: string,
          message: string,
          state: ?string
        )

        # One setting and its value.
        type Setting (
          name: string,
          value: bool,
          summary: string
        )

        # Installs the bundle folder at `path` (absolute), or upgrades the app in place if its id is installed.
        method Install(path: string) -> (id: string, outcome: string)

        # Uninstalls an app and removes everything the daemon kept for it. Replies once the app's process has ended
        # (will-terminate, then signals) and everything is removed.
        method Uninstall(id: string) -> ()

        # Every installed app.
        method ListApps() -> (apps: []App)

        # The user opens an app.
        method Open(id: string) -> (app: App)

        # The user goes to the home screen.
        method Home() -> ()

        # The user locks the screen.
        method Lock() -> ()

        # The user unlocks the screen.
        method Unlock() -> ()

        # An interruption: without a resolution it begins; "accept" or "dismiss" ends it.
        method Interrupt(resolution: ?string) -> ()

        # The user force-quits an app.
        method ForceQuit(id: string) -> ()

        # Settings: device-wide, or one app's when `app` is given.
        method GetSettings(app: ?string) -> (settings: []Setting)

        # Changes settings by name (`on`/`off`); all or nothing.
        method SetSettings(app: ?string, changes: [string]string) -> (settings: []Setting)

        # The event log, oldest first; with "more" and follow, new entries stream as they happen.
        method Log(app: ?string, limit: ?int, follow: ?bool) -> (entries: []LogEntry)

        # The daemon and the device.
        method Status() -> (
          version: string,
          pid: int,
          freezer: string,
          freezerReason: string,
          dataControls: string,
          dataControlsDetail: string,
          # where the network's kind (metered or not) comes from: NetworkManager's Metered property, or the interfaces
          # and why (SET-1)
          networkSource: string,
          # whether the apps' memory limits are enforced by the kernel's memory controller or watched by the daemon,
          # and where or why (MEM-2)
          memoryLimits: ?string,
          memoryLimitsDetail: ?string,
          # the memory pressure now, where it comes from (PSI, available memory, the app memory budget) and what wakes
          # the daemon to read it (MEM-1)
          memoryPressure: ?string,
          stateDirectory: string,
          socket: string,
          foregroundApp: ?string,
          locked: bool,
          interruption: bool,
          apps: int
        )

        # What the daemon counts (wake-ups, freezes, callbacks, calls, store writes), in the Prometheus text format.
        method Metrics() -> (text: string)

        # Power, network, memory pressure and temperature as the scheduler sees them.
        type Conditions (
          batteryLevel: int,
          charging: bool,
          # none, unmetered or metered
          network: string,
          idle: bool,
          lowPowerMode: bool,
          # normal, warning or critical
          memoryPressure: string,
          # nominal, fair, serious or critical
          thermalState: string
        )

        # Power, network, memory pressure and temperature as the machine reports them; null where it cannot tell.
        type MachineReading (
          batteryLevel: ?int,
          charging: ?bool,
          network: ?string,
          memoryPressure: ?string,
          thermalState: ?string
        )

        # Conditions set by hand; null leaves the machine's reading in charge.
        type Overrides (
          batteryLevel: ?int,
          charging: ?bool,
          network: ?string,
          idle: ?bool,
          memoryPressure: ?string,
          thermalState: ?string
        )

        # A condition that holds a request back, named after the controller that checks it.
        type Hold (
          controller: string,
          reason: string,
          # seconds since the Unix epoch when time alone lifts it
          until: ?float
        )

        # One request for scheduled work and why it runs when it does.
        type Task (
          app: string,
          identifier: string,
          # refresh, processing or fetch
          kind: string,
          # pending or running
          state: string,
          earliestBegin: ?float,
          requiresNetwork: bool,
          requiresExternalPower: bool,
          submittedAt: float,
          plannedAt: ?float,
          plannedReason: ?string,
          holds: []Hold,
          startedAt: ?float,
          expiresAt: ?float,
          forced: ?bool,
          summary: string,
          # continued only (SPEC SCH-11): what the user sees, units done and in all, and why it is ending
          title: ?string,
          subtitle: ?string,
          completed: ?int,
          total: ?int,
          endedBecause: ?string
        )

        # The device's conditions, the machine's reading, the overrides, and the device's time zone (an IANA name,
        # which calendar notifications without a zone of their own follow).
        method GetDevice() -> (conditions: Conditions, machine: MachineReading, overrides: Overrides, timeZone: string)

        # Sets conditions by hand (fields given), returns the names in `clear` to the machine's reading
        # (batteryLevel, charging, network, idle, memoryPressure, thermalState), turns low power mode on or off, and
        # sets the device's time zone (an IANA name such as Europe/Berlin; it follows the machine's again when that
        # changes). All or nothing.
        method SetDevice(
          batteryLevel: ?int, charging: ?bool, network: ?string, idle: ?bool, lowPowerMode: ?bool, clear: ?[]string,
          timeZone: ?string, memoryPressure: ?string, thermalState: ?string
        ) -> (conditions: Conditions, machine: MachineReading, overrides: Overrides, timeZone: string)

        # Pending and running requests of one app, or of every app.
        method Tasks(app: ?string) -> (tasks: []Task)

        # A background transfer of an app: where it stands and, while it waits, why.
        type Transfer (
          id: int,
          session: string,
          # download or upload
          kind: string,
          url: string,
          # waiting, running, paused, completed or failed
          state: string,
          bytesDone: int,
          bytesExpected: ?int,
          holds: []Hold,
          summary: string
        )

        # Why one app's requests (or one of them) run when they do.
        # With the tasks, the app's background transfers (when no identifier is given), what keeps the app running
        # now (modeHolds) or, while it is suspended, why (suspendedBecause).
        method Explain(app: string, identifier: ?string) -> (
          tasks: []Task, transfers: []Transfer, conditions: Conditions, modeHolds: []string, suspendedBecause: ?string
        )

        # How long one reason held a request back within the window of a history.
        type HeldTotal (
          # a stable name: a hold's case (no-network, external-power …), planned-time or continued-slot
          reason: string,
          # the controller that checks it, as in Hold
          controller: string,
          # a few words for people
          label: string,
          seconds: float
        )

        # One run of a request in its history.
        type RunHistory (
          run: int,
          startedAt: float,
          # null while it runs
          endedAt: ?float,
          seconds: float,
          forced: bool,
          # launched, resumed, running or adopted
          start: string,
          # completed, expired, cancelled, cut-off, app-ended or daemon-stopped; null while it runs
          outcome: ?string,
          # newData, noData or failed: what the app said, when it completed it
          result: ?string,
          # why its expiration handler was called: runtime, forced, conditions, cancelled, pressure or no-progress
          expiry: ?string,
          detail: ?string
        )

        # The history of one request within the window: its runs, how long it waited, and how long each reason held it.
        type TaskHistory (
          identifier: string,
          # refresh, processing, fetch or continued
          kind: string,
          runs: []RunHistory,
          # seconds it waited within the window, whatever held it
          waited: float,
          # each reason's own total, longest first: reasons that held it at once each count the time, so the totals
          # may add up to more than waited
          held: []HeldTotal,
          # a daemon stopped without closing a wait: its end is the last moment that daemon was known alive
          interrupted: bool
        )

        # Looking back (SCH-8): when each request of an app (or one of them) ran, how each run ended, and how long
        # each reason held it back, from `since` (seconds since the Unix epoch; a day ago when null) to now.
        # `keptSeconds` is how far back the daemon keeps history.
        method ExplainHistory(app: string, identifier: ?string, since: ?float) -> (
          app: string, from: float, to: float, keptSeconds: float, tasks: []TaskHistory
        )

        # What one app used in one part of one local day, or of the whole window (SET-3): bytes of its own sockets
        # (counted where the data controls are enforced), bytes the daemon moved for its transfers, CPU, runtime and
        # background wake-ups.
        type UsageRow (
          app: string,
          # the local date, YYYY-MM-DD; null in the sum over the window (every app's usage, asked for without an app)
          date: ?string,
          # in front (active or inactive), or not
          foreground: bool,
          # on a metered network, or not
          metered: bool,
          received: int,
          sent: int,
          transferReceived: int,
          transferSent: int,
          cpuSeconds: float,
          # seconds it ran: in front, or in the background and not frozen
          seconds: float,
          # launches into the background, and resumes from suspension to run there
          wakeUps: int
        )

        # An app's memory on one local day (or over the window, date null): at the last reading, and the most read.
        type UsageMemory (app: string, date: ?string, lastBytes: int, peakBytes: int)

        # An installed app beside its figures: its switches (SET-2), and its memory now when it runs.
        type UsageApp (
          app: string,
          backgroundRefresh: bool,
          backgroundData: bool,
          backgroundActivity: bool,
          unrestrictedData: bool,
          keptInMemory: bool,
          # notRunning, inactive, active, background or suspended
          state: string,
          memoryBytes: ?int
        )

        # What each app (or one) used from `since` (seconds since the Unix epoch; the start of the local day 29 days
        # ago when null) to now, the running apps' counters read now (SET-3): one app day by day, every app as sums
        # over the window (so the reply stays small with a thousand apps). `bytesCounted` says whether the bytes
        # of the apps' own sockets are counted (enforced) or not (advisory: the data controls cannot be had here, see
        # Status). `daysKept` is how many days the daemon keeps.
        method Usage(app: ?string, since: ?float) -> (
          from: float, to: float, daysKept: int, bytesCounted: string, rows: []UsageRow, memory: []UsageMemory,
          apps: []UsageApp
        )

        # Runs a pending request now, whatever the conditions (marked forced).
        method RunTask(app: string, identifier: string) -> ()

        # Calls the expiration handler of a running task now.
        method ExpireTask(app: string, identifier: string) -> ()

        # Runs the legacy background fetch now (marked forced).
        method Fetch(app: string) -> ()

        # Sends a memory warning (`applicationDidReceiveMemoryWarning`, MEM-1) to one running app, or to every running
        # app without `app`, as the device does when memory gets short; nothing is ended. A suspended app is refused
        # (AppNotRunning): it would not be warned. `warned` is how many apps were.
        method MemoryWarning(app: ?string) -> (warned: int)

        # The user cancels a continued-processing task (SPEC SCH-11): a running one has its expiration handler
        # called, a queued one is dropped. `message` says which happened.
        method CancelTask(app: string, identifier: string) -> (message: string)

        # No such pending or running request.
        error NoSuchTask (message: string, fix: string)

        # The manifest does not declare the background mode or list the identifier.
        error NotPermitted (message: string, fix: string)

        # No app with this id is installed.
        error AppNotInstalled (message: string, fix: string)

        # The app is not running.
        error AppNotRunning (message: string, fix: string)

        # The device is locked.
        error DeviceLocked (message: string, fix: string)

        # No interruption is in progress, or one already is.
        error NoInterruption (message: string, fix: string)

        # The bundle cannot be installed: its manifest or executable is wrong.
        error InvalidBundle (message: string, fix: string, file: string, key: ?string)

        # An argument is not acceptable.
        error InvalidArgument (message: string, fix: string)

        # Another process already runs as this app.
        error AlreadyRunning (message: string, fix: string)

        # The daemon could not carry out the request.
        error Failed (message: string, fix: string)
        """

    /// Full method names.
    public enum Method {
        public static let install = "io.offstage.Control.Install"
        public static let uninstall = "io.offstage.Control.Uninstall"
        public static let listApps = "io.offstage.Control.ListApps"
        public static let open = "io.offstage.Control.Open"
        public static let home = "io.offstage.Control.Home"
        public static let lock = "io.offstage.Control.Lock"
        public static let unlock = "io.offstage.Control.Unlock"
        public static let interrupt = "io.offstage.Control.Interrupt"
        public static let forceQuit = "io.offstage.Control.ForceQuit"
        public static let getSettings = "io.offstage.Control.GetSettings"
        public static let setSettings = "io.offstage.Control.SetSettings"
        public static let log = "io.offstage.Control.Log"
        public static let status = "io.offstage.Control.Status"
        public static let metrics = "io.offstage.Control.Metrics"
        public static let getDevice = "io.offstage.Control.GetDevice"
        public static let setDevice = "io.offstage.Control.SetDevice"
        public static let tasks = "io.offstage.Control.Tasks"
        public static let explain = "io.offstage.Control.Explain"
        public static let explainHistory = "io.offstage.Control.ExplainHistory"
        public static let runTask = "io.offstage.Control.RunTask"
        public static let expireTask = "io.offstage.Control.ExpireTask"
        public static let fetch = "io.offstage.Control.Fetch"
        public static let cancelTask = "io.offstage.Control.CancelTask"
        public static let usage = "io.offstage.Control.Usage"
        public static let memoryWarning = "io.offstage.Control.MemoryWarning"
    }

    /// One app on the wire; the field names are the CLI's JSON contract.
    public struct App: Codable, Hashable, Sendable {
        public var id: String
        public var state: String
        public var pid: Int32?
        public var backgroundTasks: Int
        public var backgroundTimeRemaining: Double?
        public var launchReason: String?
        public var terminating: String?
        public var forceQuit: Bool
        public var lastTermination: String?
        public var lastTerminationAt: Double?
        public var backgroundModes: [String]
        public var exitsOnSuspend: Bool
        public var activeModes: [String]
        public var modeHolds: [String]
        public var suspendedBecause: String?
        public var continuedTasks: [ContinuedTaskMessage]
        /// The memory of its processes at the latest reading, in bytes; nil when it is not running (or not read).
        public var memoryBytes: Int64?
        /// Its band for memory while it runs (SPEC MEM-1): `foreground`, `background-user`, `background-work` or
        /// `suspended`.
        public var memoryBand: String?
        /// Its place in the order apps are ended when memory stays short, 1 first; nil when it does not run.
        public var memoryEndingRank: Int?
        /// The user's "kept in memory" setting (SPEC SET-2).
        public var keptInMemory: Bool

        enum CodingKeys: String, CodingKey {
            case id, state, pid, backgroundTasks, backgroundTimeRemaining, launchReason, terminating, forceQuit
            case lastTermination, lastTerminationAt, backgroundModes, exitsOnSuspend, activeModes, modeHolds
            case suspendedBecause, continuedTasks, memoryBytes, memoryBand, memoryEndingRank, keptInMemory
        }

        /// The wire form of a core status, with the app's memory if it was read.
        public init(_ status: AppStatus, memoryBytes: Int64? = nil) {
            self.memoryBytes = memoryBytes
            id = status.id.rawValue
            state = status.state.rawValue
            pid = status.pid
            backgroundTasks = status.backgroundTasks
            backgroundTimeRemaining = status.backgroundTimeRemaining
            launchReason = status.launchReason?.rawValue
            terminating = status.terminating
            forceQuit = status.forceQuit
            lastTermination = status.lastTermination?.summary
            lastTerminationAt = status.lastTermination?.at.secondsSinceEpoch
            backgroundModes = status.backgroundModes.map(\.rawValue)
            exitsOnSuspend = status.exitsOnSuspend
            activeModes = status.activeModes.map(\.rawValue)
            modeHolds = status.modeHolds.map(\.description)
            suspendedBecause = status.suspendedBecause
            continuedTasks = status.continued.map(ContinuedTaskMessage.init)
            memoryBand = status.memoryBand?.rawValue
            memoryEndingRank = status.memoryEndingRank
            keptInMemory = status.keptInMemory
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            id = try container.decode(String.self, forKey: .id)
            state = try container.decode(String.self, forKey: .state)
            pid = try container.decodeIfPresent(Int32.self, forKey: .pid)
            backgroundTasks = try container.decode(Int.self, forKey: .backgroundTasks)
            backgroundTimeRemaining = try container.decodeIfPresent(Double.self, forKey: .backgroundTimeRemaining)
            launchReason = try container.decodeIfPresent(String.self, forKey: .launchReason)
            terminating = try container.decodeIfPresent(String.self, forKey: .terminating)
            forceQuit = try container.decode(Bool.self, forKey: .forceQuit)
            lastTermination = try container.decodeIfPresent(String.self, forKey: .lastTermination)
            lastTerminationAt = try container.decodeIfPresent(Double.self, forKey: .lastTerminationAt)
            backgroundModes = try container.decode([String].self, forKey: .backgroundModes)
            exitsOnSuspend = try container.decode(Bool.self, forKey: .exitsOnSuspend)
            activeModes = try container.decode([String].self, forKey: .activeModes)
            modeHolds = try container.decode([String].self, forKey: .modeHolds)
            suspendedBecause = try container.decodeIfPresent(String.self, forKey: .suspendedBecause)
            // A daemon from before continued processing sends none.
            continuedTasks = try container.decodeIfPresent([ContinuedTaskMessage].self, forKey: .continuedTasks) ?? []
            memoryBytes = try container.decodeIfPresent(Int64.self, forKey: .memoryBytes)
            // A daemon from before memory bands sends none.
            memoryBand = try container.decodeIfPresent(String.self, forKey: .memoryBand)
            memoryEndingRank = try container.decodeIfPresent(Int.self, forKey: .memoryEndingRank)
            keptInMemory = try container.decodeIfPresent(Bool.self, forKey: .keptInMemory) ?? false
        }

        // Optionals are written as null (not left out) so scripts can rely on every key being present.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(id, forKey: .id)
            try container.encode(state, forKey: .state)
            try container.encode(pid, forKey: .pid)
            try container.encode(backgroundTasks, forKey: .backgroundTasks)
            try container.encode(backgroundTimeRemaining, forKey: .backgroundTimeRemaining)
            try container.encode(launchReason, forKey: .launchReason)
            try container.encode(terminating, forKey: .terminating)
            try container.encode(forceQuit, forKey: .forceQuit)
            try container.encode(lastTermination, forKey: .lastTermination)
            try container.encode(lastTerminationAt, forKey: .lastTerminationAt)
            try container.encode(backgroundModes, forKey: .backgroundModes)
            try container.encode(exitsOnSuspend, forKey: .exitsOnSuspend)
            try container.encode(activeModes, forKey: .activeModes)
            try container.encode(modeHolds, forKey: .modeHolds)
            try container.encode(suspendedBecause, forKey: .suspendedBecause)
            try container.encode(continuedTasks, forKey: .continuedTasks)
            try container.encode(memoryBytes, forKey: .memoryBytes)
            try container.encode(memoryBand, forKey: .memoryBand)
            try container.encode(memoryEndingRank, forKey: .memoryEndingRank)
            try container.encode(keptInMemory, forKey: .keptInMemory)
        }
    }

    /// One log line on the wire.
    public struct LogLine: Codable, Hashable, Sendable {
        public var id: Int64
        public var at: Double
        public var app: String?
        public var kind: String
        public var message: String
        public var state: String?

        public init(id: Int64, entry: LogEntry) {
            self.id = id
            at = entry.at.secondsSinceEpoch
            app = entry.app?.rawValue
            kind = entry.kind.rawValue
            message = entry.message
            state = entry.state?.rawValue
        }
    }

    /// One setting on the wire.
    public struct Setting: Codable, Hashable, Sendable {
        public var name: String
        public var value: Bool
        public var summary: String
        public init(name: String, value: Bool, summary: String) {
            self.name = name
            self.value = value
            self.summary = summary
        }
    }

    public struct InstallParameters: Codable, Hashable, Sendable {
        public var path: String
        public init(path: String) { self.path = path }
    }
    public struct InstallReply: Codable, Hashable, Sendable {
        public var id: String
        public var outcome: String
        public init(id: String, outcome: String) {
            self.id = id
            self.outcome = outcome
        }
    }
    /// `MemoryWarning`'s parameters: one app, or every running one.
    public struct MemoryWarningParameters: Codable, Hashable, Sendable {
        public var app: String?
        public init(app: String? = nil) { self.app = app }
    }
    /// `MemoryWarning`'s reply: how many apps were warned.
    public struct MemoryWarningReply: Codable, Hashable, Sendable {
        public var warned: Int
        public init(warned: Int) { self.warned = warned }
    }
    public struct AppParameters: Codable, Hashable, Sendable {
        public var id: String
        public init(id: String) { self.id = id }
    }
    public struct AppsReply: Codable, Hashable, Sendable {
        public var apps: [App]
        public init(apps: [App]) { self.apps = apps }
    }
    public struct OpenReply: Codable, Hashable, Sendable {
        public var app: App
        public init(app: App) { self.app = app }
    }
    public struct InterruptParameters: Codable, Hashable, Sendable {
        public var resolution: String?
        public init(resolution: String?) { self.resolution = resolution }
    }
    public struct GetSettingsParameters: Codable, Hashable, Sendable {
        public var app: String?
        public init(app: String?) { self.app = app }
    }
    public struct SetSettingsParameters: Codable, Hashable, Sendable {
        public var app: String?
        public var changes: [String: String]
        public init(app: String?, changes: [String: String]) {
            self.app = app
            self.changes = changes
        }
    }
    public struct SettingsReply: Codable, Hashable, Sendable {
        public var settings: [Setting]
        public init(settings: [Setting]) { self.settings = settings }
    }
    public struct LogParameters: Codable, Hashable, Sendable {
        public var app: String?
        public var limit: Int?
        public var follow: Bool?
        public init(app: String? = nil, limit: Int? = nil, follow: Bool? = nil) {
            self.app = app
            self.limit = limit
            self.follow = follow
        }
    }
    public struct LogReply: Codable, Hashable, Sendable {
        public var entries: [LogLine]
        public init(entries: [LogLine]) { self.entries = entries }
    }
    public struct StatusReply: Codable, Hashable, Sendable {
        public var version: String
        public var pid: Int32
        public var freezer: String
        public var freezerReason: String
        /// Whether the kernel enforces the user's data controls (SPEC SET-2): `enforced`, `advisory` (it cannot
        /// here; the detail says why and what to install) or `failing` (the kernel refused the last change).
        public var dataControls: String
        /// The nftables table, or why the controls are advisory and the fix.
        public var dataControlsDetail: String
        /// Where the network's kind comes from (SPEC SET-1).
        public var networkSource: String
        /// How the apps' memory limits hold (SPEC MEM-2): `enforced` by the kernel's memory controller, or `watched` by
        /// the daemon (no controller can be used; the detail says why). Nil from a daemon from before memory limits.
        public var memoryLimits: String?
        /// Where the controller is, or why the daemon watches and how often.
        public var memoryLimitsDetail: String?
        /// The memory pressure now, where it comes from and when it is read (SPEC MEM-1). Nil from an older daemon.
        public var memoryPressure: String?
        public var stateDirectory: String
        public var socket: String
        public var foregroundApp: String?
        public var locked: Bool
        public var interruption: Bool
        public var apps: Int
        public init(
            version: String, pid: Int32, freezer: String, freezerReason: String, dataControls: String,
            dataControlsDetail: String, networkSource: String, stateDirectory: String, socket: String, foregroundApp: String?,
            locked: Bool, interruption: Bool, apps: Int, memoryLimits: String? = nil, memoryLimitsDetail: String? = nil,
            memoryPressure: String? = nil
        ) {
            self.memoryPressure = memoryPressure
            self.networkSource = networkSource
            self.memoryLimits = memoryLimits
            self.memoryLimitsDetail = memoryLimitsDetail
            self.version = version
            self.pid = pid
            self.freezer = freezer
            self.freezerReason = freezerReason
            self.dataControls = dataControls
            self.dataControlsDetail = dataControlsDetail
            self.stateDirectory = stateDirectory
            self.socket = socket
            self.foregroundApp = foregroundApp
            self.locked = locked
            self.interruption = interruption
            self.apps = apps
        }

        enum CodingKeys: String, CodingKey {
            case version, pid, freezer, freezerReason, dataControls, dataControlsDetail, networkSource, stateDirectory
            case socket, foregroundApp, locked, interruption, apps, memoryLimits, memoryLimitsDetail, memoryPressure
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            version = try container.decode(String.self, forKey: .version)
            pid = try container.decode(Int32.self, forKey: .pid)
            freezer = try container.decode(String.self, forKey: .freezer)
            freezerReason = try container.decode(String.self, forKey: .freezerReason)
            dataControls = try container.decode(String.self, forKey: .dataControls)
            dataControlsDetail = try container.decode(String.self, forKey: .dataControlsDetail)
            // A daemon from before NetworkManager was read sends none.
            networkSource = try container.decodeIfPresent(String.self, forKey: .networkSource) ?? "the network interfaces"
            memoryLimits = try container.decodeIfPresent(String.self, forKey: .memoryLimits)
            memoryLimitsDetail = try container.decodeIfPresent(String.self, forKey: .memoryLimitsDetail)
            memoryPressure = try container.decodeIfPresent(String.self, forKey: .memoryPressure)
            stateDirectory = try container.decode(String.self, forKey: .stateDirectory)
            socket = try container.decode(String.self, forKey: .socket)
            foregroundApp = try container.decodeIfPresent(String.self, forKey: .foregroundApp)
            locked = try container.decode(Bool.self, forKey: .locked)
            interruption = try container.decode(Bool.self, forKey: .interruption)
            apps = try container.decode(Int.self, forKey: .apps)
        }
    }
}

extension ControlInterface {
    /// `Metrics`'s reply: every metric in the Prometheus text format (version 0.0.4).
    public struct MetricsReply: Codable, Hashable, Sendable {
        public var text: String
        public init(text: String) { self.text = text }
    }
}

/// A reply with no parameters.
public struct EmptyReply: Codable, Hashable, Sendable {
    public init() {}
}

/// The version of Offstage, reported by `GetInfo`, `Status` and `--version`.
public let offstageVersion = "0.1.0"
