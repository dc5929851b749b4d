/// Waits for a state the kernel offers no notification for (v1 `freezer.state`, the stop state in
/// `/proc/PID/stat`): checks, then sleeps with growing pauses, until a deadline. Only used inside a freeze, which
/// is bounded by the freeze timeout, so it never becomes an idle wake-up.
enum StateWait {
    /// Returns whether `done` said yes before `deadline`.
    static func until(
        _ deadline: ContinuousClock.Instant,
        syscalls: Syscalls,
        _ done: () throws -> Bool
    ) rethrows -> Bool {
        var pause = Duration.microseconds(50)
        while true {
            if try done() { return true }
            let remaining = deadline - .now
            if remaining <= .zero { return false }
            syscalls.sleep(min(pause, remaining))
            pause = min(pause * 2, .milliseconds(2))
        }
    }
}
