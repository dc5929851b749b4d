/// What a location source reports besides fixes: that it is delivering, that it has none to give, that it
/// lost its receiver, or that it has finished (SPEC MODE-3).
public enum LocationSourceStatus: Hashable, Sendable, CustomStringConvertible {
    /// Fixes are flowing (or, for a fixed position, one was delivered).
    case delivering
    /// Connected to the receiver, which has no position yet (gpsd mode 0 or 1); `detail` says what it knows.
    case noFix(detail: String)
    /// The receiver is unreachable; `reason` says why and another attempt follows after `retryingIn`.
    case disconnected(reason: String, retryingIn: Duration)
    /// A replay that does not loop has delivered its last point; nothing more will come.
    case finished

    /// One line for logs and the CLI.
    public var description: String {
        switch self {
        case .delivering: "delivering fixes"
        case .noFix(let detail): "no fix (\(detail))"
        case .disconnected(let reason, let delay): "disconnected (\(reason)); retrying in \(delay.inSeconds) s"
        case .finished: "finished: the track has ended"
        }
    }
}
