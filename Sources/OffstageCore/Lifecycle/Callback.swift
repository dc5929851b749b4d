/// Identifies one callback sent to an app; the app answers with it when its handler returns.
public struct CallbackID: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    /// The number.
    public var rawValue: UInt64

    /// Wraps a number.
    public init(_ rawValue: UInt64) { self.rawValue = rawValue }

    public static func < (lhs: CallbackID, rhs: CallbackID) -> Bool { lhs.rawValue < rhs.rawValue }

    public var description: String { String(rawValue) }

    public init(from decoder: any Decoder) throws { rawValue = try decoder.singleValueContainer().decode(UInt64.self) }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

/// What the daemon asks an app's code to do (SPEC LC-2, BT-4).
public enum CallbackKind: Hashable, Sendable, Codable, CustomStringConvertible {
    /// `application(_:didFinishLaunchingWithOptions:)`, with the launch reason.
    case didFinishLaunching(LaunchReason)
    /// `applicationWillEnterForeground(_:)`.
    case willEnterForeground
    /// `applicationDidBecomeActive(_:)`.
    case didBecomeActive
    /// `applicationWillResignActive(_:)`.
    case willResignActive
    /// `applicationDidEnterBackground(_:)`.
    case didEnterBackground
    /// `applicationWillTerminate(_:)`.
    case willTerminate
    /// The expiration handlers of these background tasks are due (SPEC BT-4).
    case backgroundTasksExpiring([BackgroundTaskID])
    /// Run the launch handler registered for a scheduled task (SPEC SCH-3).
    /// A continued-processing task carries the title and subtitle it was submitted with (SPEC SCH-11).
    case runTask(run: UInt64, identifier: String, kind: TaskKind, details: ContinuedTaskDetails? = nil)
    /// The legacy `application(_:performFetchWithCompletionHandler:)` (SPEC SCH-4).
    case performFetch(run: UInt64)
    /// The expiration handler of a running scheduled task (SPEC SCH-3).
    case taskExpiring(run: UInt64)
    /// An audio interruption began or ended (`AVAudioSession.interruptionNotification`, SPEC MODE-1).
    case audioInterruption(AudioInterruption)
    /// The VoIP keep-alive handler (`setKeepAliveTimeout(_:handler:)`, SPEC MODE-2).
    case keepAlive
    /// Data arrived on the socket the app handed off, or its peer closed it (SPEC MODE-2).
    case voipSocket(closed: Bool)
    /// A system notification (SPEC LC-4): time, time zone, locale, settings, battery, network, accessories.
    case systemEvent(SystemEvent)
    /// New locations for the app's location managers (`locationManager(_:didUpdateLocations:)`, SPEC MODE-3);
    /// while the app cannot receive, newer fixes replace a queued one (events coalesce, SPEC LC-4).
    case locations([LocationFix])
    /// The location source failed (`locationManager(_:didFailWithError:)`), with what went wrong.
    case locationError(String)
    /// An accessory the app registered connected, disconnected or sent data (SPEC MODE-4), with its name.
    case accessory(name: String, event: AccessoryEvent)
    /// A notification fired while the app is active (`userNotificationCenter(_:willPresent:)`, SPEC NT-2): the app
    /// answers whether the user should see it too.
    case notificationWillPresent(DeliveredNotification)
    /// The user tapped a notification or chose one of its actions (`userNotificationCenter(_:didReceive:)`).
    case notificationResponse(NotificationResponse)
    /// A push with `content-available` (`application(_:didReceiveRemoteNotification:fetchCompletionHandler:)`, SPEC
    /// NT-4): the app completes the run within 30 s.
    case remoteNotification(RemoteNotificationCall)
    /// The background session `session` has events (finished tasks, errors, progress): the app fetches them. With a
    /// run, it is `application(_:handleEventsForBackgroundURLSession:completionHandler:)` (SPEC TR-3), completed with
    /// `CompleteTransferEvents`; without, the session is open in the app and its delegate hears of them directly.
    case transferEvents(session: String, run: UInt64?)
    /// Memory is short (`applicationDidReceiveMemoryWarning(_:)`, SPEC MEM-1): free what can be rebuilt. Only a
    /// running app gets it.
    case memoryWarning

    /// The callback's wire name.
    public var name: String {
        switch self {
        case .didFinishLaunching: "didFinishLaunching"
        case .willEnterForeground: "willEnterForeground"
        case .didBecomeActive: "didBecomeActive"
        case .willResignActive: "willResignActive"
        case .didEnterBackground: "didEnterBackground"
        case .willTerminate: "willTerminate"
        case .backgroundTasksExpiring: "backgroundTasksExpiring"
        case .runTask: "runTask"
        case .performFetch: "performFetch"
        case .taskExpiring: "taskExpiring"
        case .audioInterruption: "audioInterruption"
        case .keepAlive: "keepAlive"
        case .voipSocket: "voipSocket"
        case .systemEvent: "systemEvent"
        case .locations: "locations"
        case .locationError: "locationError"
        case .accessory: "accessory"
        case .notificationWillPresent: "notificationWillPresent"
        case .notificationResponse: "notificationResponse"
        case .remoteNotification: "remoteNotification"
        case .transferEvents: "transferEvents"
        case .memoryWarning: "memoryWarning"
        }
    }

    /// The name as the log and the docs write it (`did-enter-background`).
    public var description: String {
        var out = ""
        for character in name {
            if character.isUppercase {
                out += "-" + character.lowercased()
            } else {
                out.append(character)
            }
        }
        return out
    }
}

/// One callback with its identity and, where a watchdog applies, its deadline (SPEC LC-3).
public struct Callback: Hashable, Sendable, Codable {
    /// The callback's identity.
    public var id: CallbackID
    /// What to call.
    public var kind: CallbackKind
    /// When the watchdog terminates the app if the callback has not returned; nil for no watchdog.
    public var deadline: Instant?

    /// Creates a callback.
    public init(id: CallbackID, kind: CallbackKind, deadline: Instant?) {
        self.id = id
        self.kind = kind
        self.deadline = deadline
    }
}
