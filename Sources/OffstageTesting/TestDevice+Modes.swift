import Foundation
import OffstageCore
import OffstageSimulator

/// The long-running background modes on the test device (SPEC §7): audio and its interruptions, and location.
extension TestDevice {
    /// An incoming call interrupts audio (`offstage audio interrupt --begin`): every active session that does not
    /// belong to the call is interrupted, its players paused, and its app hears `interruptionNotification` (began).
    ///
    /// - Throws: ``TestKitError/refused(message:fix:)`` when an interruption is already in progress (nothing changes).
    public func beginAudioInterruption() async throws {
        try await user { simulation throws(CoreError) in try simulation.audioInterruption(began: true) }
    }

    /// The call ends (`offstage audio interrupt --end`): the interrupted apps hear `interruptionNotification` (ended),
    /// with `shouldResume` for those that were playing.
    ///
    /// - Throws: ``TestKitError/refused(message:fix:)`` when no interruption is in progress (nothing changes).
    public func endAudioInterruption() async throws {
        try await user { simulation throws(CoreError) in try simulation.audioInterruption(began: false) }
    }

    /// The device is at `latitude`, `longitude` now, within `accuracy` metres (`offstage location set`): the apps that
    /// listen get it as their modes allow (a suspended app without background updates does not; a move of about
    /// 500 m launches an app that monitors significant changes).
    ///
    /// - Throws: ``TestKitError/invalidArgument(_:)`` for a coordinate outside −90…90, −180…180 or an accuracy that is
    ///   not positive (nothing is delivered).
    public func setLocation(latitude: Double, longitude: Double, accuracy: Double = 5) async throws {
        guard (-90...90).contains(latitude), (-180...180).contains(longitude) else {
            throw TestKitError.invalidArgument("latitude \(latitude), longitude \(longitude): outside −90…90, −180…180")
        }
        guard accuracy > 0, accuracy.isFinite else {
            throw TestKitError.invalidArgument("accuracy \(accuracy): a number of metres above 0")
        }
        try await user { $0.locationFix(latitude: latitude, longitude: longitude, accuracy: accuracy) }
    }

    /// The device moves along `points` (latitude, longitude), one fix every `interval` of virtual time starting now,
    /// as `offstage location replay` replays a track: time advances by `interval` after each.
    public func moveAlong(_ points: [(latitude: Double, longitude: Double)], every interval: Duration) async throws {
        guard interval > .zero else { throw TestKitError.invalidArgument("interval \(interval): must be above zero") }
        for point in points {
            try await setLocation(latitude: point.latitude, longitude: point.longitude)
            try await advance(by: interval)
        }
    }

    /// The location source fails (gpsd went away): the listening apps' location managers hear the error.
    public func failLocationSource(_ message: String = "the location source stopped") async throws {
        try await user { $0.locationSourceFailed(message) }
    }
}

extension TestApp {
    /// The app's audio session as the system has it — `playback, active, playing`, `playback, interrupted by an
    /// incoming call (a system interruption), inactive` — as `offstage audio` shows it; nil before the app set one.
    public var audioSession: String? {
        device.host.with { $0.simulation.core.modes.audio.session(of: appID)?.summary }
    }

    /// Whether the app's players are playing, as the SDK told the system.
    public var isPlayingAudio: Bool {
        device.host.with { $0.simulation.core.modes.audio.session(of: appID)?.playing ?? false }
    }
}
