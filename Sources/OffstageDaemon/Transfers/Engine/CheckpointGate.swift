import NIOConcurrencyHelpers
import NIOCore

/// Holds a download back so that its part file never runs more than one checkpoint ahead of what the daemon's journal
/// vouches for (SPEC §11: after a daemon crash, at most one chunk is fetched again).
///
/// The attempt tells the gate of each checkpoint it reports (``reported(_:)``) and, before it writes bytes that would
/// end more than one checkpoint past what is journaled, waits for ``whenJournaled(_:on:)``. The daemon, once a
/// checkpoint is in its journal, calls ``journaledNext()``: checkpoints reach the journal in the order they were
/// reported, so each call confirms the oldest one not yet confirmed. While the daemon keeps up, nothing waits; when
/// its loop or its disk lags, the download stops reading the socket (back-pressure reaches the server) instead of
/// writing bytes a crash would lose.
///
/// When a response starts the part file over (``restart(from:)``), checkpoints reported before no longer count:
/// they are of bytes that were cut off.
///
/// Thread-safe: the attempt calls it on the engine's loop, the daemon on its own.
final class CheckpointGate: Sendable {
    private struct State {
        /// The bytes the journal vouches for, from the part file's start.
        var journaled: Int64 = 0
        /// Checkpoints reported and not yet journaled, oldest first, with the part file's generation they belong to.
        var pending: [(generation: Int, bytes: Int64)] = []
        /// Counts restarts: a checkpoint of an earlier generation confirms nothing.
        var generation = 0
        /// The write waiting for the journal to reach `bytes`.
        var waiter: (bytes: Int64, promise: EventLoopPromise<Void>)?
    }

    private let state = NIOLockedValueBox(State())

    /// A gate for a part file whose first `journaled` bytes the journal vouches for.
    init(journaled: Int64 = 0) {
        state.withLockedValue { $0.journaled = journaled }
    }

    /// The bytes the journal vouches for now.
    var journaled: Int64 { state.withLockedValue { $0.journaled } }

    /// The attempt reports a checkpoint of `bytes` (call before the event goes out).
    func reported(_ bytes: Int64) {
        state.withLockedValue { $0.pending.append(($0.generation, bytes)) }
    }

    /// The daemon journaled the oldest checkpoint not yet confirmed; a write waiting for it goes on.
    func journaledNext() {
        let ready: EventLoopPromise<Void>? = state.withLockedValue { state in
            guard !state.pending.isEmpty else { return nil }
            let confirmed = state.pending.removeFirst()
            guard confirmed.generation == state.generation else { return nil }
            state.journaled = max(state.journaled, confirmed.bytes)
            guard let waiter = state.waiter, state.journaled >= waiter.bytes else { return nil }
            state.waiter = nil
            return waiter.promise
        }
        ready?.succeed()
    }

    /// The part file starts over at `bytes` (cut to that length): only those are vouched for, and checkpoints
    /// reported before are of bytes that are gone.
    func restart(from bytes: Int64) {
        state.withLockedValue { state in
            state.generation += 1
            state.journaled = bytes
        }
    }

    /// Succeeds once the journal vouches for `bytes` (at once if it does). One write waits at a time.
    func whenJournaled(_ bytes: Int64, on loop: any EventLoop) -> EventLoopFuture<Void> {
        let promise = loop.makePromise(of: Void.self)
        let (ready, replaced): (Bool, EventLoopPromise<Void>?) = state.withLockedValue { state in
            if state.journaled >= bytes { return (true, nil) }
            defer { state.waiter = (bytes, promise) }
            return (false, state.waiter?.promise)
        }
        // Promises are completed outside the lock: their callbacks may come back to the gate.
        replaced?.fail(ChannelError.alreadyClosed)
        if ready { promise.succeed() }
        return promise.futureResult
    }

    /// The attempt ended (cancelled, failed, idle): a waiting write fails with `error` instead of waiting on.
    func release(_ error: any Error) {
        let waiting = state.withLockedValue { state in
            defer { state.waiter = nil }
            return state.waiter?.promise
        }
        waiting?.fail(error)
    }
}
