import Foundation
import OffstageProtocol

/// A daemon that runs inside the app's own process — the test kit's, on virtual time — and answers the SDK's calls
/// instead of `offstaged` on its socket.
///
/// The SDK gives it each call exactly as it would write it on the socket (a Varlink call message, JSON text without
/// the NUL) and reads the answer as it would read the socket's reply, so the app's code, the SDK and the wire
/// format are the ones that run against the real daemon. Not for apps: the OffstageTesting library provides one.
@_spi(Testing)
public protocol InProcessDaemon: AnyObject, Sendable {
    /// Answers one call message with its reply message; nil for a `oneway` call, which has none.
    func answer(_ call: Data) -> Data?

    /// Answers a call of the hand-off socket (a VoIP socket, an accessory session) that hands over `fd`, the app's
    /// descriptor: the daemon duplicates what it keeps (the app keeps and may close its own) and replies as
    /// ``answer(_:)`` does.
    func handOff(_ fd: Int32, call: Data) -> Data

    /// The app's code ended its process with `status` (after will-terminate, as the SDK does). Nothing more of the
    /// app runs until the daemon starts it again.
    func processExited(status: Int32)
}

/// The app's process, as the SDK sees it, when its daemon runs in the same process: started, given callbacks and
/// ended by that daemon (the test kit). Not for apps.
@_spi(Testing)
@MainActor
public enum InProcessApp {
    /// A process of the app starts: the SDK forgets everything it knew (delegates, handlers, runs, sessions,
    /// registrations), calls go to `daemon`, and `delegate` becomes the application's delegate. `app` is what the
    /// daemon's `Attach` reply says of the app; `now` is the daemon's clock, in seconds since 1970, by which the
    /// dates the app gives and gets are converted (``WireTime``).
    ///
    /// `bundle` is the app's bundle folder (``Application/bundleURL``), where its resources are.
    public static func start(
        daemon: any InProcessDaemon, app: AppInterface.AppInfo, bundle: URL, now: @escaping @Sendable () -> Double,
        delegate: @MainActor () -> any ApplicationDelegate
    ) {
        forgetProcess()
        WireTime.use(now)
        Application.inProcessBundle.withLock { $0 = bundle }
        DaemonLink.shared.use(daemon, app: app)
        AudioSession.shared.observePlayers()
        Application.shared.delegate = delegate()
    }

    /// Hands one callback to the app on the main actor, as the SDK's main loop does: `message` is the reply of the
    /// `Attach` stream that carries it, as the socket would (a Varlink reply message, JSON text without the NUL).
    ///
    /// - Throws: what decoding the message threw; a reply without a callback is ignored, as on the socket.
    public static func deliver(_ message: Data) throws {
        guard case .reply(let reply, _) = try VarlinkCodec.decodeReply(message, as: AppInterface.AttachReply.self),
            let callback = reply.callback
        else { return }
        Application.shared.handle(callback)
    }

    /// The daemon restarted (its state read back from its store) and adopted this process: the report the SDK attaches
    /// with, as it would on the socket (whether did-finish-launching ran, the app's state as it believes it is, its
    /// open background tasks and continued-processing tasks). Call ``reattached()`` once the daemon took it.
    public static func attachReport() -> AppInterface.AttachParameters { DaemonLink.shared.attachReport() }

    /// The restarted daemon took the report: the SDK registers again what the old daemon knew of the process — its
    /// VoIP socket and keep-alive, its accessories, its location updates, its open background sessions.
    public static func reattached() { DaemonLink.shared.reattached() }

    /// What the SDK is still doing for the app, off the callbacks it was handed: its background sessions' refreshes
    /// (fetching tasks and giving the finished ones to the delegate). Empty once everything the SDK was asked has
    /// reached the app's code.
    public static var workInFlight: [String] {
        let refreshing = TransferDispatch.shared.refreshing
        return refreshing == 0 ? [] : ["\(refreshing) background session refresh(es)"]
    }

    /// The app's process is gone: the SDK forgets it, and calls go to the socket again.
    public static func end() {
        forgetProcess()
        DaemonLink.shared.use(nil, app: nil)
        WireTime.use(nil)
        Application.inProcessBundle.withLock { $0 = nil }
    }

    private static func forgetProcess() {
        Application.shared.forgetProcess()
        TaskScheduler.shared.forgetProcess()
        UserNotificationCenter.current().forgetProcess()
        RemoteNotificationState.shared.forgetProcess()
        RemoteNotificationDispatch.shared.forgetProcess()
        TransferDispatch.shared.forgetProcess()
        AudioSession.shared.forgetProcess()
        LocationDispatch.shared.forgetProcess()
        VoIPRegistration.shared.forgetProcess()
        AccessoryManager.shared.forgetProcess()
    }
}
