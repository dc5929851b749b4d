/// What the scheduler found for one app when it last looked: the requests its controllers let through, and when the
/// first of the holds on the others lifts by itself.
///
/// The scheduler keeps one per app and recomputes it only when that app changed, when its next lift has come, or when
/// something every app depends on changed (``SchedulingInputs``). An input about one app then costs the scheduler
/// the work for that app, not for every installed app and every pending request (SPEC §11 scale).
struct AppSchedulingView: Equatable, Sendable {
    /// The runnable requests, in the app's order (identifiers sorted, the legacy fetch last).
    var candidates: [SchedulingContext.Candidate] = []
    /// When the first time-bound hold on the app's other requests lifts, if one does.
    var nextLift: Instant?
    /// Whether one of its pending requests is a processing request (the device's idleness matters then).
    var processingPending = false
}

/// What every app's view depends on besides the app itself: the conditions, the device's settings and the local
/// day (daily budgets). When any of these changes, every view is recomputed.
struct SchedulingInputs: Equatable, Sendable {
    var conditions: DeviceConditions
    var settings: DeviceSettings
    var day: Int64
}

extension SchedulingContext.Candidate: Equatable {
    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.key == rhs.key && lhs.request == rhs.request && lhs.usage == rhs.usage && lhs.results == rhs.results
            && lhs.installedAt == rhs.installedAt
    }
}
