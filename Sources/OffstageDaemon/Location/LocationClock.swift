import Glibc
import OffstageCore

/// The real clock and sleep the location sources use unless a test injects its own.
public enum LocationClock {
    /// The wall clock (CLOCK_REALTIME), as `DaemonEngine` reads it: fixes carry wall time like everything the
    /// core sees.
    @Sendable public static func now() -> Instant {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Instant(nanosecondsSinceEpoch: Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec))
    }

    /// Sleeps for `duration` on the continuous clock; throws `CancellationError` as soon as the task is
    /// cancelled, which is how a replay's `stop()` cuts a long gap short.
    @Sendable public static func sleep(_ duration: Duration) async throws {
        try await Task.sleep(for: duration)
    }
}
