import Foundation
import Logging
import NIOPosix
import OffstageCore
import OffstageProtocol
import Synchronization

/// The daemon's location shell part (SPEC MODE-3): it owns the current ``LocationSource`` and feeds each fix to the
/// core on the daemon's loop; the CLI switches sources (`offstage location replay|set|gpsd`).
///
/// With no source set, it uses gpsd if one answers on the configured address when the daemon starts; otherwise
/// there is no source until the user sets one (decision 0025: the daemon depends on no file of the repository).
final class LocationService: Sendable {
    /// What kind of source is in use.
    enum Kind: String, Sendable {
        case none, replay, gpsd, fixed
    }

    private struct State: Sendable {
        var source: (any LocationSource)?
        var kind: Kind = .none
        var status = LocationService.noSourceStatus
        /// Counts source switches, so a fix or status of a replaced source that was already on its way is dropped.
        var generation: UInt64 = 0
        /// The source reported a failure that apps were told of; cleared by the next delivery.
        var failing = false
        var stopped = false
    }

    /// The status while there is no source: what to do about it.
    static let noSourceStatus = "no source: run `offstage location replay FILE` (a GPX or NMEA track), "
        + "`offstage location set LAT LON`, or start gpsd and run `offstage location gpsd`"

    private let state = Mutex(State())
    private let engine: DaemonEngine
    private let settings: LocationSourceSettings
    /// Reads the track files the user names: a thread of its own, so that a large file delays neither the event loop
    /// nor the store's writer (the daemon's thread pool).
    let trackReader = NIOThreadPool(numberOfThreads: 1)

    /// A service with no source yet; `settings` gives the sources' numbers.
    init(engine: DaemonEngine, settings: LocationSourceSettings = .init()) {
        self.engine = engine
        self.settings = settings
        trackReader.start()
    }

    /// Looks for gpsd at the configured address off the loop and uses it if it answers and no source was set
    /// meanwhile.
    func startDefault() {
        let settings = settings
        Thread.detachNewThread { [self] in
            let probe = GpsdClient.answers(host: settings.gpsdHost, port: settings.gpsdPort, timeout: settings.gpsdConnectTimeout)
            let unset = state.withLock { $0.kind == .none && !$0.stopped }
            guard probe, unset else { return }
            engine.logger.info("location: gpsd answers at \(settings.gpsdHost):\(settings.gpsdPort); using it")
            use(GpsdClient(settings: settings), .gpsd, onlyIfUnset: true)
        }
    }

    /// Replays the track file at `path`. A file that cannot be read or parsed throws, naming the file, the line
    /// and the fix, and the current source stays.
    ///
    /// Reading the file may take as long as the file is large: call it off the event loop (``replaySettings(speed:loop:)``
    /// checks the numbers first, on the loop).
    func replay(path: String, speed: Double?, loop: Bool?) throws(LocationServiceError) {
        let settings = try replaySettings(speed: speed, loop: loop)
        let track: LocationTrack
        do {
            track = try LocationTrack.load(path: path, settings: settings)
        } catch var error as LocationTrackError {
            // The whole path, as the user gave it: the file's name alone may not say which one.
            error.file = path
            throw .badTrack(error)
        } catch {
            throw .invalid("cannot read the track \(path): \(error)", fix: "give the path of a GPX or NMEA file")
        }
        use(TrackReplay(track: track, settings: settings), .replay)
    }

    /// The settings a replay at `speed` (looping or not) runs with, or why the speed is not usable.
    func replaySettings(speed: Double?, loop: Bool?) throws(LocationServiceError) -> LocationSourceSettings {
        var settings = settings
        if let speed {
            do throws(NumberOutOfRange) {
                settings.replaySpeed = try CheckedNumber.finite(
                    speed, field: "speed",
                    in: LocationSourceSettings.minimumReplaySpeed ... LocationSourceSettings.maximumReplaySpeed,
                    unit: "times real time")
            } catch {
                throw .invalid("a replay speed of \(error.value) is not usable", fix: "\(error.fix) (1 is real time)")
            }
        }
        if let loop { settings.replayLoops = loop }
        return settings
    }

    /// Uses a fixed position (moving the current one if it is already fixed).
    func set(latitude: Double, longitude: Double, accuracy: Double?) throws(LocationServiceError) {
        let position: LocationFix
        do throws(CoreError) {
            position = try LocationFix.fixed(
                latitude: latitude, longitude: longitude, horizontalAccuracy: accuracy ?? settings.defaultHorizontalAccuracy,
                at: LocationClock.now())
        } catch {
            throw .invalid(error.message, fix: error.fix)
        }
        use(StaticLocationSource(position: position), .fixed)
    }

    /// Reads positions from gpsd at `host`:`port` (the configured address by default); it reconnects by itself.
    func useGpsd(host: String?, port: Int?) throws(LocationServiceError) {
        var settings = settings
        if let host { settings.gpsdHost = host }
        if let port { settings.gpsdPort = port }
        if let problem = settings.problems.first { throw .invalid(problem, fix: "give a host name or address and a port 1–65535") }
        use(GpsdClient(settings: settings), .gpsd)
    }

    /// The kind of source, its description and its status.
    var snapshot: (kind: Kind, source: String, status: String) {
        state.withLock { state in (state.kind, state.source.map(\.description) ?? "none", state.status) }
    }

    /// Stops the source for good (the daemon is stopping).
    func stop() {
        let source = state.withLock { state in
            state.stopped = true
            state.generation += 1
            defer { state.source = nil }
            return state.source
        }
        source?.stop()
        trackReader.shutdownGracefully { _ in }
    }

    // MARK: Switching

    private func use(_ source: any LocationSource, _ kind: Kind, onlyIfUnset: Bool = false) {
        let switched = state.withLock { state -> (previous: (any LocationSource)?, generation: UInt64)? in
            guard !state.stopped, !onlyIfUnset || state.kind == .none else { return nil }
            state.generation += 1
            defer {
                state.source = source
                state.kind = kind
                state.status = "starting"
                state.failing = false
            }
            return (state.source, state.generation)
        }
        guard let switched else { return }
        switched.previous?.stop()
        let generation = switched.generation
        engine.logger.info("location source: \(source.description)")
        do {
            try source.start(
                onFix: { [self] fix in fixArrived(fix, generation) },
                onStatus: { [self] status in statusChanged(status, generation) })
        } catch {
            state.withLock { if $0.generation == generation { $0.status = "could not start: \(error)" } }
        }
    }

    private func fixArrived(_ fix: LocationFix, _ generation: UInt64) {
        guard state.withLock({ $0.generation == generation }) else { return }
        let engine = engine
        engine.eventLoop.execute {
            guard self.state.withLock({ $0.generation == generation }) else { return }
            engine.apply(engine.core.locationUpdated(fix, at: engine.now))
        }
    }

    private func statusChanged(_ status: LocationSourceStatus, _ generation: UInt64) {
        let tellApps = state.withLock { state -> Bool in
            guard state.generation == generation else { return false }
            state.status = status.description
            if case .disconnected = status {
                defer { state.failing = true }
                return !state.failing
            }
            if status == .delivering { state.failing = false }
            return false
        }
        guard tellApps else { return }
        let engine = engine
        let message = "the location source is unavailable: \(status.description)"
        engine.eventLoop.execute { engine.apply(engine.core.locationSourceFailed(message, at: engine.now)) }
    }
}

/// Why a location source was not switched; the current one stays.
enum LocationServiceError: Error, Sendable {
    /// The track file cannot be used.
    case badTrack(LocationTrackError)
    /// An argument is not acceptable.
    case invalid(String, fix: String)
}
