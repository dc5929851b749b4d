import Foundation
import OffstageProtocol
import Synchronization

/// The app's audio session, as `AVAudioSession` on iOS: what the app's audio is for (its category and options), and
/// whether it is active (SPEC MODE-1).
///
/// An app that declares the `audio` background mode keeps running in the background while its session is active, of
/// the playback category (or record, playAndRecord), and a player plays; it is suspended once playback stops. The app
/// in the foreground always wins the audio: activating a session that does not mix interrupts the others, and a
/// background app cannot interrupt the foreground app's audio (``AudioSessionError/Code/cannotInterruptOthers``).
///
/// ```swift
/// let session = AudioSession.shared
/// try session.setCategory(.playback)
/// try session.setActive(true)
/// let player = try AudioPlayer(contentsOf: url)
/// player.play()          // goes on when the user leaves the app
/// ```
///
/// Playing an ``AudioPlayer`` activates the session if the app has not (as `AVAudioPlayer.play()` does). Interruptions
/// arrive as ``interruptionNotification`` and on ``interruptions``; when one begins, every player is already paused.
public final class AudioSession: Sendable {
    /// The process's audio session.
    public static let shared = AudioSession(link: .shared)

    /// The process's audio session (the `AVAudioSession.sharedInstance()` spelling).
    public static func sharedInstance() -> AudioSession { shared }

    struct State {
        var category: Category = .soloAmbient
        var options: CategoryOptions = []
        var active = false
        var backgroundAudioUnavailableReason: String?
        var warnedAbout: String?
        var subscribers: [UUID: AsyncStream<Interruption>.Continuation] = [:]
    }

    let link: DaemonLink
    let state = Mutex(State())

    init(link: DaemonLink) {
        self.link = link
    }

    /// The category (``Category/soloAmbient`` until the app sets one).
    public var category: Category { state.withLock { $0.category } }

    /// The category's options.
    public var categoryOptions: CategoryOptions { state.withLock { $0.options } }

    /// Whether the session is active (an interruption deactivates it).
    public var isActive: Bool { state.withLock { $0.active } }

    /// Nil when audio in this session goes on in the background; otherwise why it does not and what to change (the
    /// category, or the `audio` mode in `UIBackgroundModes`), as the daemon said when the session was last activated.
    public var backgroundAudioUnavailableReason: String? { state.withLock { $0.backgroundAudioUnavailableReason } }

    /// Sets the category and options. If the session is active, the daemon applies the change at once.
    public func setCategory(_ category: Category, options: CategoryOptions = []) throws(AudioSessionError) {
        let active = state.withLock { state in
            state.category = category
            state.options = options
            return state.active
        }
        if active { try send(active: true, notifyOthers: false) }
    }

    /// Activates or deactivates the session.
    ///
    /// - Throws: ``AudioSessionError/Code/cannotInterruptOthers`` when the app is in the background and the foreground
    ///   app's audio does not mix, or an interruption holds the audio; ``AudioSessionError/Code/isBusy`` when
    ///   deactivating while a player is still playing.
    public func setActive(_ active: Bool, options: SetActiveOptions = []) throws(AudioSessionError) {
        if !active && AudioActivity.shared.isPlaying {
            throw AudioSessionError(
                .isBusy, "the audio session cannot be deactivated while a player is playing",
                fix: "pause or stop every AudioPlayer first")
        }
        try send(active: active, notifyOthers: options.contains(.notifyOthersOnDeactivation))
    }

    /// Every interruption from now on, as an async sequence (in addition to ``interruptionNotification``).
    public var interruptions: AsyncStream<Interruption> {
        let (stream, continuation) = AsyncStream<Interruption>.makeStream()
        let key = UUID()
        state.withLock { $0.subscribers[key] = continuation }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.subscribers.removeValue(forKey: key) }
        }
        return stream
    }

    // MARK: The daemon

    private func send(active: Bool, notifyOthers: Bool) throws(AudioSessionError) {
        let (category, options) = state.withLock { ($0.category, $0.options) }
        let message = ModesInterface.AudioSessionMessage(
            category: category.rawValue, mixWithOthers: options.contains(.mixWithOthers), active: active,
            notifyOthersOnDeactivation: notifyOthers ? true : nil)
        let reply: ModesInterface.SetAudioSessionReply
        do {
            reply = try link.request(
                ModesInterface.Method.setAudioSession, ModesInterface.SetAudioSessionParameters(session: message),
                as: ModesInterface.SetAudioSessionReply.self)
        } catch {
            throw AudioSessionError(error)
        }
        let warning = state.withLock { state -> String? in
            state.active = active
            state.backgroundAudioUnavailableReason = reply.backgroundAudio ? nil : reply.reason
            guard active, let reason = state.backgroundAudioUnavailableReason, state.warnedAbout != reason else { return nil }
            state.warnedAbout = reason
            return reason
        }
        // Said once per reason, where the developer looks: the app's output.
        if let warning { reportToDeveloper("audio in this session stops when the app leaves the foreground: \(warning)") }
    }

    /// Players started or stopped (from ``AudioActivity``, on any thread): the daemon keeps the app running while they
    /// play. A player that starts with the session inactive activates it, as `AVAudioPlayer.play()` does; if the
    /// audio cannot be had, the players are paused again.
    func playersChanged(playing: Bool) {
        if playing && !isActive {
            do {
                try send(active: true, notifyOthers: false)
            } catch {
                reportToDeveloper("the audio session could not be activated for playback: \(error)")
                AudioActivity.shared.pauseAll()
                return
            }
        }
        do {
            try link.notify(ModesInterface.Method.setAudioPlaying, ModesInterface.SetAudioPlayingParameters(playing: playing))
        } catch {
            reportToDeveloper("could not tell the daemon that audio \(playing ? "started" : "stopped"): \(error)")
        }
    }

    /// Forgets the session and stops the players without telling anyone: a new process of the app starts (the test
    /// kit), with the category and state a fresh process has. Observers of ``interruptions`` see their sequence end.
    func forgetProcess() {
        AudioActivity.shared.forgetProcess()
        let subscribers = state.withLock { state in
            defer { state = State() }
            return Array(state.subscribers.values)
        }
        for continuation in subscribers { continuation.finish() }
    }

    /// Starts telling the daemon when players start and stop; called once when the application starts.
    func observePlayers() {
        AudioActivity.shared.setObserver { [weak self] playing in self?.playersChanged(playing: playing) }
    }
}
