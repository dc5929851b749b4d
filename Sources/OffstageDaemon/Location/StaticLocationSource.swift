import Foundation
import OffstageCore
import Synchronization

/// A fixed position, as set from the CLI: delivers its fix once when started and again whenever it is moved.
public final class StaticLocationSource: LocationSource {
    private struct State: Sendable {
        var position: LocationFix
        var onFix: (@Sendable (LocationFix) -> Void)?
        var onStatus: (@Sendable (LocationSourceStatus) -> Void)?
        var started = false
    }

    // Deliveries happen outside this lock, under the gate, so a callback may call `move` or `stop`.
    private let state: Mutex<State>
    private let gate = DeliveryGate()
    private let clock: @Sendable () -> Instant

    /// A source at `position`; each delivery is stamped with `clock()` (the wall clock unless a test injects
    /// one), since the position holds "now", whatever `position.timestamp` says.
    public init(position: LocationFix, clock: @escaping @Sendable () -> Instant = LocationClock.now) {
        state = Mutex(State(position: position))
        self.clock = clock
    }

    /// A source at the given coordinate with `horizontalAccuracy` metres of error; other values unknown.
    public convenience init(
        latitude: Double, longitude: Double, altitude: Double? = nil, horizontalAccuracy: Double,
        clock: @escaping @Sendable () -> Instant = LocationClock.now
    ) {
        self.init(
            position: LocationFix(
                latitude: latitude, longitude: longitude, altitude: altitude, horizontalAccuracy: horizontalAccuracy,
                timestamp: clock()),
            clock: clock)
    }

    public func start(
        onFix: @escaping @Sendable (LocationFix) -> Void, onStatus: @escaping @Sendable (LocationSourceStatus) -> Void
    ) throws {
        let position = try state.withLock { state throws(LocationSourceStartError) -> LocationFix in
            guard !state.started else { throw .alreadyStarted("the fixed position") }
            state.started = true
            state.onFix = onFix
            state.onStatus = onStatus
            return state.position
        }
        deliver(position, onFix: onFix, onStatus: onStatus)
    }

    /// Moves the fixed position and, when started, delivers it at once.
    public func move(to position: LocationFix) {
        let callbacks = state.withLock { state in
            state.position = position
            return (state.onFix, state.onStatus)
        }
        if let onFix = callbacks.0, let onStatus = callbacks.1 { deliver(position, onFix: onFix, onStatus: onStatus) }
    }

    public func stop() {
        gate.close()
        state.withLock { state in
            state.onFix = nil
            state.onStatus = nil
        }
    }

    /// "fixed position 52.51629, 13.37771 ±10 m".
    public var description: String {
        let position = state.withLock { $0.position }
        let format = { (value: Double) in String(format: "%.5f", value) }
        return "fixed position \(format(position.latitude)), \(format(position.longitude)) "
            + "±\(String(format: "%.0f", position.horizontalAccuracy)) m"
    }

    private func deliver(
        _ position: LocationFix, onFix: @Sendable (LocationFix) -> Void, onStatus: @Sendable (LocationSourceStatus) -> Void
    ) {
        var fix = position
        fix.timestamp = clock()
        gate.deliver {
            onFix(fix)
            onStatus(.delivering)
        }
    }
}
