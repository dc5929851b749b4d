import Synchronization

/// Which players are playing in this process, so the SDK can tell the daemon (SPEC MODE-1).
///
/// An app with the `audio` background mode keeps running in the background while it plays: this is where the SDK
/// learns whether it does. Players report each start and stop; the observer hears each change between "none
/// playing" and "some playing", in the order they happened.
final class AudioActivity: Sendable {
    /// The process's registry, which every ``AudioPlayer`` reports to.
    static let shared = AudioActivity()

    /// A live player, held weakly so the registry does not keep players alive.
    private struct WeakPlayer {
        /// The player, until it is deallocated.
        weak var player: AudioPlayer?
    }

    /// What the lock protects.
    private struct State {
        /// The players playing now.
        var playing: Set<ObjectIdentifier> = []
        /// Every registered player still alive (pruned as they go), for ``pauseAll()``.
        var players: [ObjectIdentifier: WeakPlayer] = [:]
        /// Who hears the changes.
        var observer: (@Sendable (Bool) -> Void)?
        /// Changes not yet delivered to the observer, oldest first.
        var pending: [Bool] = []
        /// Whether a thread is delivering `pending` now: then others only queue, so the observer hears changes
        /// one at a time and in order, without being called under the lock.
        var delivering = false
    }

    /// The state.
    private let state = Mutex(State())

    /// A registry of its own (tests); the SDK uses ``shared``.
    init() {}

    /// Adds a live player to the registry, for ``pauseAll()``; called by ``AudioPlayer``'s initialiser.
    func register(_ player: AudioPlayer) {
        state.withLock { state in
            state.players = state.players.filter { $0.value.player != nil }
            state.players[ObjectIdentifier(player)] = WeakPlayer(player: player)
        }
    }

    /// Called by AudioPlayer when it starts / stops (pause, stop, end of file, error) actually playing.
    func playerDidStart(_ player: ObjectIdentifier) {
        change { $0.insert(player) }
    }

    /// Called by AudioPlayer when it stops playing (pause, stop, end of file, error, deallocation).
    func playerDidStop(_ player: ObjectIdentifier) {
        change { $0.remove(player) }
    }

    /// Whether at least one player is playing.
    var isPlaying: Bool { state.withLock { !$0.playing.isEmpty } }

    /// Called (on any thread, outside the lock) on each change between "no player playing" and "some player playing".
    ///
    /// Not called for the state at the time it is set: read ``isPlaying`` for that. Nil removes the observer.
    func setObserver(_ observer: (@Sendable (Bool) -> Void)?) {
        state.withLock { $0.observer = observer }
    }

    /// The process is gone (the test kit starts a new one): the observer is removed first, so that nobody hears of it,
    /// then every player is paused and forgotten.
    func forgetProcess() {
        setObserver(nil)
        pauseAll()
        state.withLock { state in
            state.playing = []
            state.players = [:]
            state.pending = []
        }
    }

    /// Pauses every playing player (an interruption began, as iOS does); returns how many were paused.
    @discardableResult func pauseAll() -> Int {
        let playing = state.withLock { state in
            state.playing.compactMap { state.players[$0]?.player }
        }
        // Outside the lock: pausing reports back through playerDidStop.
        return playing.filter { $0.pauseReportingWhetherPlaying() }.count
    }

    /// Applies `update` to the set of playing players and, if that changed whether any plays, tells the observer.
    private func change(_ update: (inout Set<ObjectIdentifier>) -> Void) {
        let deliver = state.withLock { state -> Bool in
            let before = !state.playing.isEmpty
            update(&state.playing)
            let after = !state.playing.isEmpty
            guard before != after, state.observer != nil else { return false }
            state.pending.append(after)
            if state.delivering { return false }  // the thread delivering will deliver this one too
            state.delivering = true
            return true
        }
        guard deliver else { return }
        while true {
            let next = state.withLock { state -> (Bool, @Sendable (Bool) -> Void)? in
                guard let observer = state.observer, !state.pending.isEmpty else {
                    state.pending.removeAll()
                    state.delivering = false
                    return nil
                }
                return (state.pending.removeFirst(), observer)
            }
            guard let (playing, observer) = next else { return }
            observer(playing)
        }
    }
}
