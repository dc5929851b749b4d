import Foundation
import OffstageCore

/// A ``UsageTrace`` loaded from the two CSV files of the Usage Logger sample (Geyer et al. 2022, see
/// `Data/app-usage/README.md`), with a count of every repair the loader made.
///
/// The files mix two logging modes with different meanings (the `source` column):
/// - `retrospective_usagestats`: Android `UsageStatsManager` activity events. Switching activities inside one app
///   logs a close and an open of that app a few milliseconds apart, so a close followed by a re-open of the same app
///   less than ``Rules/activitySwitchGap`` later, with no other app opened in between, is one session. An open of
///   an app that is already open is ignored; a close of an app that is not open is ignored. An open of another app
///   ends a session whose close is missing (one app is in the foreground at a time).
/// - `prospective_foreground_poll`: the logger's own poll, which records only `open`, and only when the foreground
///   app *changes*. A session ends at the next open or at the next `screen_off`. Because the poll logs changes only,
///   the app on top when the screen went off is on top again when it comes back on: the loader resumes it (no
///   recorded screen-on span ever starts with an open of the app that was on top before, while 8 unlocked
///   screen-on spans record no open at all).
///
/// Screen-on spans come from `screen_interactive`/`screen_non_interactive` (retrospective) and
/// `screen_on`/`screen_off` (prospective). Repairs, all deterministic:
/// - **Missing screen-off**: a screen-on while the screen is on (8 times, each a restart of the phone: the next
///   rows are configuration changes and the boot-time Settings screen) ends the open span at the last app,
///   screen or lock event before it. A screen-off while the screen is off is ignored.
/// - **Sessions outside screen-on time** are clipped to it; a raw session that spans a screen-off (its close was
///   lost) becomes one session per screen-on span it covers; one with no screen-on time is dropped.
/// - **Lock-screen glances** (``Rules/requiresUnlock``): Android resumes the app on top when the screen comes on,
///   behind the lock screen, so a glance at the lock screen would count as an open. The loader counts foreground
///   time only while the phone is unlocked: `keyguard_shown` locks, `keyguard_hidden` and `user_present` unlock,
///   and, because the prospective log has no lock event, a prospective `screen_off` locks. Before the first lock
///   event the phone is in the state opposite to what that event sets. Files with no lock event at all count as
///   always unlocked.
/// - **Labels that are not user apps** (``Rules/notUserApps``) are dropped after the steps above, so they still end
///   the sessions of other apps.
/// - Sessions of one app that overlap or touch after all this are merged into one.
///
/// The trace runs from the first to the last event of either file.
public struct UsageLoggerTrace: Hashable, Sendable {
    /// The loaded trace.
    public let trace: UsageTrace
    /// How often each repair was made.
    public let repairs: Repairs

    /// The loader's knobs; the defaults are the rules described on ``UsageLoggerTrace``.
    public struct Rules: Hashable, Sendable {
        /// A close and a re-open of the same app closer than this are one session (retrospective mode only).
        public var activitySwitchGap: Duration
        /// Labels dropped from the trace.
        public var excludedLabels: Set<String>
        /// Whether foreground time counts only while the phone is unlocked (see ``UsageLoggerTrace``).
        public var requiresUnlock: Bool

        /// Labels in the sample that are not user apps whose content a background refresh would update:
        /// - `Quickstep`: the launcher (home screen); opening it is going home, not opening an app.
        /// - `Usage Logger`: the logging app itself, opened to set up and stop the study.
        /// - `Settings`: system settings, mostly study setup (granting usage access), and the boot-time
        ///   `FallbackHome` screen shown after each restart.
        /// - `Package installer`: the system dialog that installs apps (study setup).
        /// - `Android system`: system UI such as the power menu and resolver dialogs.
        /// - `Google Play services`: system sign-in and consent dialogs drawn over other apps.
        /// - `Contacts Storage`: a system content provider with no screen of its own.
        public static let notUserApps: Set<String> = [
            "Quickstep", "Usage Logger", "Settings", "Package installer", "Android system", "Google Play services",
            "Contacts Storage",
        ]

        /// The default rules, or others.
        public init(
            activitySwitchGap: Duration = .seconds(2), excludedLabels: Set<String> = Rules.notUserApps,
            requiresUnlock: Bool = true
        ) {
            self.activitySwitchGap = activitySwitchGap
            self.excludedLabels = excludedLabels
            self.requiresUnlock = requiresUnlock
        }
    }

    /// How often each repair was made while loading.
    public struct Repairs: Hashable, Sendable {
        /// Close/open pairs of one app closer than the activity-switch gap, joined into one session.
        public var mergedActivitySwitches = 0
        /// Opens of an app already in the foreground, ignored.
        public var repeatedOpens = 0
        /// Closes of an app not in the foreground, ignored.
        public var orphanCloses = 0
        /// Sessions with no close, ended by the open of another app.
        public var sessionsEndedByAnotherOpen = 0
        /// Prospective sessions of the app left on top, resumed when the screen came back on (counted if kept).
        public var resumedSessions = 0
        /// Screen-ons while the screen was on: the span before was ended at the last event before it.
        public var missingScreenOffs = 0
        /// Screen-offs while the screen was off, ignored.
        public var repeatedScreenOffs = 0
        /// Raw sessions with no screen-on time at all, dropped.
        public var sessionsOutsideScreenOn = 0
        /// Raw sessions whose screen-on time was all on the lock screen, dropped.
        public var lockScreenSessions = 0
        /// Raw sessions shortened to their screen-on, unlocked time.
        public var clippedSessions = 0
        /// Extra sessions made by splitting raw sessions that span a screen-off.
        public var splitSessions = 0
        /// Sessions of excluded labels, dropped.
        public var excludedSessions = 0
        /// Sessions of one app merged because they overlapped or touched.
        public var coalescedSessions = 0

        /// No repairs.
        public init() {}
    }

    /// Loads the trace from the two files.
    /// - Throws: a file-reading error, or ``UsageLoggerError``.
    public static func load(appEvents: URL, deviceEvents: URL, rules: Rules = Rules()) throws -> UsageTrace {
        try read(appEvents: appEvents, deviceEvents: deviceEvents, rules: rules).trace
    }

    /// Loads the trace from the two files, with the repair counts.
    /// - Throws: a file-reading error, or ``UsageLoggerError``.
    public static func read(appEvents: URL, deviceEvents: URL, rules: Rules = Rules()) throws -> UsageLoggerTrace {
        let apps = try String(contentsOf: appEvents, encoding: .utf8)
        let device = try String(contentsOf: deviceEvents, encoding: .utf8)
        return try parse(
            appEventsCSV: apps, deviceEventsCSV: device, name: appEvents.deletingPathExtension().lastPathComponent,
            rules: rules)
    }

    /// Builds the trace from the text of the two files.
    /// - Throws: ``UsageLoggerError``.
    public static func parse(
        appEventsCSV: String, deviceEventsCSV: String, name: String = "usagelogger", rules: Rules = Rules()
    ) throws(UsageLoggerError) -> UsageLoggerTrace {
        let log = try UsageLoggerLog(appEventsCSV: appEventsCSV, deviceEventsCSV: deviceEventsCSV)
        var assembly = UsageLoggerAssembly(log: log, rules: rules)
        let sessions = assembly.sessions()
        do throws(UsageTraceError) {
            let trace = try UsageTrace(
                name: name, start: log.start, end: log.end, sessions: sessions, screenOn: assembly.screenOn)
            return UsageLoggerTrace(trace: trace, repairs: assembly.repairs)
        } catch {
            throw .invalidTrace(error)
        }
    }
}
