import OffstageCore

/// `io.offstage.App`: what an app's process may ask of the daemon. The daemon knows which app is calling from
/// the connection's peer credentials, never from a field of the message.
public enum AppInterface {
    /// The interface name.
    public static let name = "io.offstage.App"

    /// The Varlink interface definition, served by `GetInterfaceDescription`.
    public static let definition = """
        # What an app's process may ask of the Offstage daemon. The daemon identifies the calling app
        # from the connection's peer credentials (SO_PEERCRED), never from a message field.
        interface io.offstage.App

        # A background task the app holds open.
        type Task (
          id: int,
          name: string
        )

        # A continued-processing task an app is running, with its progress (SPEC SCH-11).
        type ContinuedRun (
          run: int,
          identifier: string,
          title: string,
          subtitle: string,
          completed: int,
          total: int
        )

        # What the daemon asks the app's code to do. Answer with CallbackDone(id) when the handler returns.
        type Callback (
          id: int,
          # didFinishLaunching, willEnterForeground, didBecomeActive, willResignActive, didEnterBackground,
          # willTerminate, backgroundTasksExpiring, runTask, performFetch, taskExpiring, audioInterruption, keepAlive,
          # voipSocket, systemEvent, locations, locationError, accessory, notificationWillPresent,
          # notificationResponse, remoteNotification, transferEvents or memoryWarning (MEM-1)
          kind: string,
          launchReason: ?string,
          taskIds: ?[]int,
          # seconds since the Unix epoch after which the app is terminated, if a watchdog applies
          deadline: ?float,
          # runTask, performFetch, taskExpiring: the run to complete with CompleteTask; remoteNotification: the run to
          # complete with io.offstage.Push.CompleteRemoteNotification; transferEvents: the run of the app's
          # handle-events-for-background-session handler, to complete with io.offstage.Transfers.CompleteEvents
          # (null: the session is open in the app and its delegate hears of the events directly)
          run: ?int,
          # runTask: the request's identifier and kind (refresh, processing or continued)
          taskIdentifier: ?string,
          taskKind: ?string,
          # runTask of a continued-processing task: the title and subtitle it was submitted with (SPEC SCH-11)
          taskTitle: ?string,
          taskSubtitle: ?string,
          # audioInterruption: the interruption that began or ended
          audioInterruption: ?AudioInterruption,
          # voipSocket: true when the peer closed the socket, false when data arrived
          socketClosed: ?bool,
          # systemEvent: significant-time-change, time-zone-change, locale-change, settings-change,
          # battery-level-change, battery-state-change, network-change, accessory-connect or accessory-disconnect
          systemEvent: ?string,
          # locations: the new locations, oldest first (SPEC MODE-3)
          locations: ?[]Location,
          # locationError: why the location source failed
          locationError: ?string,
          # accessory: the app's name for the accessory, and connected, disconnected or data (SPEC MODE-4)
          accessory: ?string,
          accessoryEvent: ?string,
          # notificationWillPresent, notificationResponse: the notification (SPEC NT-2)
          notification: ?Notification,
          # notificationResponse: default (a tap), dismiss, or the identifier of one of its category's actions
          actionIdentifier: ?string,
          # remoteNotification: the push's apns-id and its whole JSON payload, in text (SPEC NT-4)
          pushId: ?string,
          payload: ?string,
          # transferEvents: the background session with events to fetch with io.offstage.Transfers.Tasks (SPEC TR-3)
          session: ?string
        )

        # A local notification that fired (SPEC NT-2); see io.offstage.Notifications.
        type Notification (
          request: Request,
          due: float,
          deliveredAt: float,
          late: bool,
          route: string
        )

        \(NotificationsInterface.requestTypes)

        # A position (SPEC MODE-3).
        type Location (
          # degrees, WGS84
          latitude: float,
          longitude: float,
          # metres above mean sea level, when known
          altitude: ?float,
          # metres (68 % radius)
          horizontalAccuracy: float,
          verticalAccuracy: ?float,
          # metres per second, when known
          speed: ?float,
          # degrees clockwise from true north, when known
          course: ?float,
          # seconds since the Unix epoch
          timestamp: float
        )

        # An audio interruption (SPEC MODE-1).
        type AudioInterruption (
          began: bool,
          # on the end: the app may resume playback
          shouldResume: bool,
          # who interrupted, for people
          reason: string
        )

        # A request for scheduled background work.
        type TaskRequest (
          identifier: string,
          # refresh, processing or continued
          kind: string,
          # seconds since the Unix epoch; null for as soon as the system sees fit (never set for continued)
          earliestBegin: ?float,
          # processing only; refresh always needs a network
          requiresNetwork: ?bool,
          requiresExternalPower: ?bool,
          # continued only (SPEC SCH-11): what the user sees, and queue (the default) or fail when no slot is free
          title: ?string,
          subtitle: ?string,
          strategy: ?string
        )

        # Who the app is, as the daemon sees it.
        type AppInfo (
          id: string,
          pid: int,
          multitaskingSupported: bool,
          dataDirectory: string
        )

        # Opens the app's callback stream; call it with "more". The first reply carries `app`;
        # every later reply carries one `callback`. The report lets a restarted daemon re-adopt the app.
        # continuedTasks: the continued-processing tasks the app still runs, which a restarted daemon takes up again.
        method Attach(
          launchCompleted: bool, state: string, openTasks: []Task, continuedTasks: ?[]ContinuedRun
        ) -> (app: ?AppInfo, callback: ?Callback)

        # The handler of callback `id` returned.
        method CallbackDone(id: int) -> ()

        # Begins a finite-length background task; id 0 means invalid (the background time is spent).
        method BeginBackgroundTask(name: string) -> (id: int, timeRemaining: float)

        # Ends a background task; ending an unknown or ended task is harmless (ended is false).
        method EndBackgroundTask(id: int) -> (ended: bool)

        # Seconds of background time left; the largest finite value in the foreground.
        method BackgroundTimeRemaining() -> (seconds: float)

        # Device facts the SDK exposes.
        method GetDevice() -> (multitaskingSupported: bool)

        # Checks that a launch handler may be registered for `identifier`: it must be listed in the manifest's
        # BGTaskSchedulerPermittedIdentifiers.
        method RegisterTask(identifier: string) -> ()

        # Submits a request; a pending one with the same identifier is replaced.
        method SubmitTask(request: TaskRequest) -> ()

        # Cancels a pending request; cancelled is false when none was pending.
        method CancelTask(identifier: string) -> (cancelled: bool)

        # Cancels every pending request of the app.
        method CancelAllTasks() -> ()

        # The app's pending requests.
        method PendingTasks() -> (requests: []TaskRequest)

        # The legacy background fetch interval: "never", "minimum", or "seconds" with `seconds`.
        method SetFetchInterval(interval: string, seconds: ?float) -> ()

        # The handler of run `run` completed: newData, noData or failed. Completing an unknown run is harmless.
        method CompleteTask(run: int, result: string) -> ()

        # A running continued-processing task's progress, and its title and subtitle when they change (SPEC SCH-11).
        # Each report renews the task's time; reporting for an unknown run is harmless.
        method ReportTaskProgress(run: int, completed: int, total: int, title: ?string, subtitle: ?string) -> ()

        # The calling process belongs to no installed app.
        error NotAnApp (pid: int, message: string, fix: string)

        # The calling process is not the app's running process, or the app is not running.
        error AppNotRunning (message: string, fix: string)

        # Another process already runs as this app.
        error AlreadyRunning (message: string, fix: string)

        # Background work cannot be scheduled now (background refresh off, low power mode).
        error Unavailable (message: string, fix: string)

        # Too many pending requests of that kind.
        error TooManyPendingRequests (message: string, fix: string)

        # The manifest does not declare the background mode or list the identifier.
        error NotPermitted (message: string, fix: string)

        # An argument is not acceptable.
        error InvalidArgument (message: string, fix: string)

        # The run named is not one this process was handed (a run that ended already is not an error).
        error NoSuchTask (message: string, fix: string)
        """

    /// Full method names.
    public enum Method {
        public static let attach = "io.offstage.App.Attach"
        public static let callbackDone = "io.offstage.App.CallbackDone"
        public static let beginBackgroundTask = "io.offstage.App.BeginBackgroundTask"
        public static let endBackgroundTask = "io.offstage.App.EndBackgroundTask"
        public static let backgroundTimeRemaining = "io.offstage.App.BackgroundTimeRemaining"
        public static let getDevice = "io.offstage.App.GetDevice"
        public static let registerTask = "io.offstage.App.RegisterTask"
        public static let submitTask = "io.offstage.App.SubmitTask"
        public static let cancelTask = "io.offstage.App.CancelTask"
        public static let cancelAllTasks = "io.offstage.App.CancelAllTasks"
        public static let pendingTasks = "io.offstage.App.PendingTasks"
        public static let setFetchInterval = "io.offstage.App.SetFetchInterval"
        public static let completeTask = "io.offstage.App.CompleteTask"
        public static let reportTaskProgress = "io.offstage.App.ReportTaskProgress"
    }

    /// A background task on the wire.
    public struct Task: Codable, Hashable, Sendable {
        public var id: UInt64
        public var name: String
        public init(id: UInt64, name: String) {
            self.id = id
            self.name = name
        }
    }

    /// The app as the daemon sees it.
    public struct AppInfo: Codable, Hashable, Sendable {
        public var id: String
        public var pid: Int32
        public var multitaskingSupported: Bool
        public var dataDirectory: String
        public init(id: String, pid: Int32, multitaskingSupported: Bool, dataDirectory: String) {
            self.id = id
            self.pid = pid
            self.multitaskingSupported = multitaskingSupported
            self.dataDirectory = dataDirectory
        }
    }

    /// `Attach` parameters.
    public struct AttachParameters: Codable, Hashable, Sendable {
        public var launchCompleted: Bool
        public var state: String
        public var openTasks: [Task]
        /// Absent from SDKs before continued processing.
        public var continuedTasks: [ContinuedRun]?
        public init(launchCompleted: Bool, state: String, openTasks: [Task], continuedTasks: [ContinuedRun]? = nil) {
            self.launchCompleted = launchCompleted
            self.state = state
            self.openTasks = openTasks
            self.continuedTasks = continuedTasks
        }
    }

    /// A continued-processing task on the wire, as an app reports it at `Attach`.
    public struct ContinuedRun: Codable, Hashable, Sendable {
        public var run: UInt64
        public var identifier: String
        public var title: String
        public var subtitle: String
        public var completed: Int64
        public var total: Int64
        public init(run: UInt64, identifier: String, title: String, subtitle: String, completed: Int64, total: Int64) {
            self.run = run
            self.identifier = identifier
            self.title = title
            self.subtitle = subtitle
            self.completed = completed
            self.total = total
        }
    }

    /// One `Attach` reply.
    public struct AttachReply: Codable, Hashable, Sendable {
        public var app: AppInfo?
        public var callback: CallbackMessage?
        public init(app: AppInfo? = nil, callback: CallbackMessage? = nil) {
            self.app = app
            self.callback = callback
        }
    }

    /// `CallbackDone` parameters.
    public struct CallbackDoneParameters: Codable, Hashable, Sendable {
        public var id: UInt64
        public init(id: UInt64) { self.id = id }
    }

    /// `BeginBackgroundTask` parameters.
    public struct BeginParameters: Codable, Hashable, Sendable {
        public var name: String
        public init(name: String) { self.name = name }
    }

    /// `BeginBackgroundTask` reply.
    public struct BeginReply: Codable, Hashable, Sendable {
        public var id: UInt64
        public var timeRemaining: Double
        public init(id: UInt64, timeRemaining: Double) {
            self.id = id
            self.timeRemaining = timeRemaining
        }
    }

    /// `EndBackgroundTask` parameters.
    public struct EndParameters: Codable, Hashable, Sendable {
        public var id: UInt64
        public init(id: UInt64) { self.id = id }
    }

    /// `EndBackgroundTask` reply.
    public struct EndReply: Codable, Hashable, Sendable {
        public var ended: Bool
        public init(ended: Bool) { self.ended = ended }
    }

    /// `BackgroundTimeRemaining` reply.
    public struct TimeRemainingReply: Codable, Hashable, Sendable {
        public var seconds: Double
        public init(seconds: Double) { self.seconds = seconds }
    }

    /// `GetDevice` reply.
    public struct DeviceReply: Codable, Hashable, Sendable {
        public var multitaskingSupported: Bool
        public init(multitaskingSupported: Bool) { self.multitaskingSupported = multitaskingSupported }
    }
}

/// Parameters for a method that takes none.
public struct NoParameters: Codable, Hashable, Sendable {
    public init() {}
}
