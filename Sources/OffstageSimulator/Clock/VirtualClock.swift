import OffstageCore

/// A clock that moves only when told to. Tests and the simulator move it by hand; nothing ever sleeps.
public struct VirtualClock: Sendable {
    /// The current virtual time.
    public private(set) var now: Instant

    /// Creates a clock at `start` (by default 2026-01-01T00:00:00Z, so wall dates in tests look real).
    public init(start: Instant = Instant(secondsSinceEpoch: 1_767_225_600)) {
        self.now = start
    }

    /// Moves the clock forward by `duration`.
    public mutating func advance(by duration: Duration) {
        precondition(duration >= .zero, "a virtual clock never goes back")
        now = now + duration
    }

    /// Moves the clock forward to `instant` (no-op if it is already later).
    public mutating func advance(to instant: Instant) {
        if instant > now { now = instant }
    }
}
