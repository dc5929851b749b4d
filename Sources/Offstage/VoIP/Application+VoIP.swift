import Foundation
import OffstageProtocol

/// What woke a VoIP app about its socket (SPEC MODE-2).
public enum VoIPSocketEvent: Sendable, Hashable {
    /// Data arrived while the app was suspended; it is still in the socket, for the app to read.
    case readable
    /// The peer closed the connection; the system no longer watches the socket.
    case closed
}

/// Why a VoIP call failed: a stable code, what was wrong, and the fix.
public struct VoIPError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A stable code.
    public enum Code: String, Hashable, Sendable {
        /// The app does not declare the `voip` background mode (SPEC MODE-6).
        case notPermitted
        /// The timeout is too short, or the descriptor is not a connected socket.
        case invalidArgument
        /// The daemon could not be reached, or the process is not a running installed app.
        case unavailable
    }

    /// The code.
    public var code: Code
    /// What was wrong.
    public var message: String
    /// What to do about it.
    public var fix: String

    public var description: String { "\(message); \(fix)" }

    init(_ code: Code, _ message: String, fix: String) {
        self.code = code
        self.message = message
        self.fix = fix
    }

    /// The SDK's error for what the daemon (or the connection to it) said.
    init(_ error: any Error) {
        let refusal = DaemonRefusal(error)
        let code = refusal.code(notPermitted: Code.notPermitted, invalidArgument: .invalidArgument, otherwise: .unavailable)
        self.init(code, refusal.message, fix: refusal.fix)
    }
}

extension Application {
    /// Asks the system to run `handler` in the background before each `timeout` expires, so a VoIP app can keep its
    /// signalling connection alive while suspended (`setKeepAliveTimeout(_:handler:)`, SPEC MODE-2). The handler runs
    /// on the main actor with at most 30 seconds; an app whose handler takes longer is terminated. Handlers of several
    /// apps, and other background work, share wake-ups, so it may run somewhat before the timeout.
    ///
    /// Returns false, and says why on the app's standard error, when the timeout is under 600 seconds or the app does
    /// not declare the `voip` background mode. A new call replaces the previous handler.
    @discardableResult
    nonisolated public func setKeepAliveTimeout(
        _ timeout: TimeInterval, handler: @escaping @MainActor @Sendable () -> Void
    ) -> Bool {
        do {
            try VoIPRegistration.shared.setKeepAlive(seconds: timeout, handler: handler, link: link)
            return true
        } catch {
            reportToDeveloper("setKeepAliveTimeout(\(timeout)) failed: \(error)")
            return false
        }
    }

    /// Removes the keep-alive handler (`clearKeepAliveTimeout()`).
    nonisolated public func clearKeepAliveTimeout() {
        VoIPRegistration.shared.clearKeepAlive(link: link)
    }

    /// Hands the system the connected socket of the app's signalling connection (SPEC MODE-2). While the app is
    /// suspended the system watches it, never reading it; when data arrives (or the peer hangs up) it wakes the app
    /// and calls `handler` on the main actor, which should read what came. The app then has about 10 seconds
    /// before it is suspended again; begin a background task for more.
    ///
    /// The app keeps its descriptor and keeps reading it as usual while it runs. One socket per app: a new one
    /// replaces the previous. If the daemon restarts, the SDK hands the socket off again.
    ///
    /// - Throws: ``VoIPError`` when the app does not declare `voip`, `fd` is not a connected socket, or the daemon
    ///   cannot be reached.
    nonisolated public func setVoIPSocket(
        _ fd: Int32, handler: @escaping @MainActor @Sendable (VoIPSocketEvent) -> Void
    ) throws(VoIPError) {
        try VoIPRegistration.shared.handOff(fd, handler: handler, link: link)
    }

    /// The daemon's keep-alive and socket callbacks, on the main thread.
    func handleVoIP(_ callback: AppInterface.CallbackMessage) {
        switch callback.kind {
        case "keepAlive": VoIPRegistration.shared.keepAliveHandler()?()
        case "voipSocket": VoIPRegistration.shared.socketHandler()?(callback.socketClosed == true ? .closed : .readable)
        default: break
        }
    }
}
