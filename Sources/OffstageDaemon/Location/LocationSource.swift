import OffstageCore

/// Where the daemon's positions come from (SPEC MODE-3): a replayed track by default, gpsd when present, or a
/// fixed position set from the CLI. The daemon holds one and routes its fixes to the apps.
///
/// A source is started once. It calls `onFix` and `onStatus` from a thread or task of its own, one call at a
/// time and in order. After `stop()` returns neither is called again, and `stop()` may be called from inside
/// either callback.
public protocol LocationSource: AnyObject, Sendable, CustomStringConvertible {
    /// Starts delivering: each new position to `onFix`, each change of condition to `onStatus`. Throws when
    /// the source cannot start at all (no thread, already started); problems after that go to `onStatus`.
    func start(
        onFix: @escaping @Sendable (LocationFix) -> Void,
        onStatus: @escaping @Sendable (LocationSourceStatus) -> Void
    ) throws

    /// Stops for good and releases what the source holds (threads, sockets); idempotent.
    func stop()

    /// What the source is doing, for a person: "replaying walk.gpx at 10× (point 12 of 240)",
    /// "gpsd 3.22 at 127.0.0.1:2947, 3D fix", "fixed position 52.51629, 13.37771 ±10 m".
    var description: String { get }
}

/// Why a location source would not start.
public struct LocationSourceStartError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong and what to do.
    public var description: String

    /// An error that reads `description`.
    public init(_ description: String) { self.description = description }

    /// `start` was called a second time: a source is started once.
    static func alreadyStarted(_ source: String) -> Self {
        Self("\(source) was already started; make a new source instead of restarting a stopped one")
    }
}
