#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The signal mask every Offstage process starts from.
///
/// A process inherits the signal mask of the thread that spawned it. Thread pools (libdispatch workers, test
/// runners) block most signals, so a CLI or an app started from one would otherwise never see SIGTERM: the
/// daemon's termination escalation and an `offstage log --follow` stopped by its parent both depend on it.
public enum SignalMask {
    /// Unblocks every signal in the calling thread; call first thing in `main`, before any thread starts, so
    /// every thread created later inherits the empty mask. Dispositions (an inherited `SIG_IGN`) are left alone.
    public static func unblockAll() {
        var empty = sigset_t()
        sigemptyset(&empty)
        pthread_sigmask(SIG_SETMASK, &empty, nil)
    }
}
