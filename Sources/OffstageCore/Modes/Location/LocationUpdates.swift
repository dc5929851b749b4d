/// Location for apps (SPEC MODE-3): standard updates, which keep an app running in the background only with the
/// `location` mode and `allowsBackgroundLocationUpdates`, and the significant-change service, which wakes or launches
/// an app when the device has moved about 500 m — even after a force-quit (SPEC LC-6's exception).
///
/// Standard updates go only to a process that runs: a suspended app gets nothing (they stop, and go on when it runs
/// again), as on iOS. Each app has its distance filter, measured from the last fix it was given. Significant-change
/// monitoring is kept in the app's durable state (``SignificantChangeRegistration``), so it outlives the process and
/// the daemon.
public struct LocationUpdates: Hashable, Sendable {
    /// An app's standard updates.
    public struct Updating: Hashable, Sendable {
        /// How the app asked for them.
        public var request: LocationRequest
        /// The last fix the app was given (the distance filter measures from it).
        public var lastDelivered: LocationFix?
    }

    /// Standard updates, by app.
    public private(set) var updating: [AppID: Updating] = [:]
    /// Significant-change monitoring, by app (a copy of what each app's durable state holds).
    public private(set) var significant: [AppID: SignificantChangeRegistration] = [:]
    /// The latest fix from the source, for `offstage location` and for an app that starts listening.
    public private(set) var lastFix: LocationFix?

    /// No app listening, no fix yet.
    public init() {}

    // MARK: Standard updates

    /// The app starts (or changes) its standard updates. With `allowsBackground` it needs the `location` mode
    /// (SPEC MODE-6: on iOS that is a programming error); nothing changes when it is refused. An app that starts
    /// gets the latest fix at once, as iOS delivers a first location promptly.
    mutating func startUpdating(_ app: AppID, _ request: LocationRequest, declared: Bool) throws(CoreError) -> [ModeAction] {
        // Negative values are Core Location's constants (kCLDistanceFilterNone, kCLLocationAccuracyBest): every fix,
        // the best there is. Beyond the Earth's circumference a distance means nothing.
        let metres = -LocationFix.earthCircumference ... LocationFix.earthCircumference
        try CoreError.checking { () throws(NumberOutOfRange) in
            try CheckedNumber.finite(request.distanceFilter, field: "distanceFilter", in: metres, unit: "metres")
            try CheckedNumber.finite(request.desiredAccuracy, field: "desiredAccuracy", in: metres, unit: "metres")
        }
        guard !request.allowsBackground || declared else {
            throw CoreError(
                .notPermitted,
                "'\(app)' sets allowsBackgroundLocationUpdates, but does not declare the 'location' background mode",
                fix: "add 'location' to UIBackgroundModes in the app's Info.plist, or leave allowsBackgroundLocationUpdates off")
        }
        var request = request
        request.distanceFilter = max(0, request.distanceFilter)
        let previous = updating[app]
        updating[app] = Updating(request: request, lastDelivered: previous?.lastDelivered)
        var actions: [ModeAction] = [
            .log(app, "location updates on (distance filter \(format(request.distanceFilter)) m"
                + (request.allowsBackground ? ", in the background too)" : ")")),
            .reconsider(app),
        ]
        if previous == nil, let lastFix { actions += deliver(lastFix, to: app) }
        return actions
    }

    /// The app stops its standard updates.
    mutating func stopUpdating(_ app: AppID) -> [ModeAction] {
        guard updating.removeValue(forKey: app) != nil else { return [] }
        return [.log(app, "location updates off"), .reconsider(app)]
    }

    // MARK: Significant changes

    /// The app starts monitoring significant changes; it needs no background mode (as on iOS). The anchor is the
    /// latest fix, which the app is given at once.
    mutating func startMonitoring(_ app: AppID) -> [ModeAction] {
        guard significant[app] == nil else { return [] }
        significant[app] = SignificantChangeRegistration(anchor: lastFix)
        var actions: [ModeAction] = [.log(app, "significant-change monitoring on"), .save(app)]
        if let lastFix { actions += deliver(lastFix, to: app) }
        return actions
    }

    /// The app stops monitoring significant changes.
    mutating func stopMonitoring(_ app: AppID) -> [ModeAction] {
        guard significant.removeValue(forKey: app) != nil else { return [] }
        return [.log(app, "significant-change monitoring off"), .save(app)]
    }

    /// Reads back the app's monitoring from its durable state (after a daemon restart).
    mutating func restore(_ app: AppID, _ registration: SignificantChangeRegistration?) {
        significant[app] = registration
    }

    // MARK: Fixes

    /// Every app that updates or monitors significant changes.
    public var listeners: Set<AppID> { Set(updating.keys).union(significant.keys) }

    /// A new fix from the source. Every running app that updates gets it if it passes its distance filter; every
    /// monitoring app whose anchor lies `significantDistance` metres or more away gets it too, woken or launched if
    /// need be, and its anchor moves there.
    mutating func locationUpdated(
        _ fix: LocationFix, significantDistance: Double, recipients: [AppID: ModeRecipient]
    ) -> [ModeAction] {
        lastFix = fix
        var actions: [ModeAction] = []
        for app in listeners.sorted() {
            let recipient = recipients[app] ?? .gone
            var deliver = false
            switch recipient {
            case .gone:
                updating[app] = nil
                significant[app] = nil
                continue
            case .running(frozen: false, _):
                if let updating = updating[app], Self.passes(fix, updating) { deliver = true }
            default:
                break  // a suspended app gets no standard updates; they go on when it runs again
            }
            if let registration = significant[app] {
                guard let distance = registration.distance(to: fix) else {
                    // The first fix since monitoring began is the anchor; a running app hears of it.
                    significant[app] = SignificantChangeRegistration(anchor: fix)
                    actions.append(.save(app))
                    if case .running(frozen: false, _) = recipient { deliver = true }
                    if deliver { actions += self.deliver(fix, to: app) }
                    continue
                }
                if distance >= significantDistance {
                    let moved = "moved \(format(distance)) m (a significant change)"
                    switch recipient {
                    case .running(frozen: false, _):
                        deliver = true
                    case .running(frozen: true, mayWake: true):
                        actions.append(.resume(app, because: "the device \(moved)"))
                        deliver = true
                    case .running(frozen: true, mayWake: false):
                        actions.append(.log(app, "the device \(moved), but background activity is off for this app: not woken"))
                    case .notRunning(whyNot: nil):
                        actions.append(.launch(app, .location, because: "the device \(moved)"))
                        deliver = true
                    case .notRunning(whyNot: let why?):
                        actions.append(.log(app, "the device \(moved), but the app is not launched: \(why)"))
                    case .gone:
                        break
                    }
                    if deliver {
                        significant[app] = SignificantChangeRegistration(anchor: fix)
                        actions.append(.save(app))
                    }
                }
            }
            if deliver { actions += self.deliver(fix, to: app) }
        }
        return actions
    }

    /// The source failed: every running app that updates is told (`locationManager(_:didFailWithError:)`).
    func sourceFailed(_ message: String, recipients: [AppID: ModeRecipient]) -> [ModeAction] {
        updating.keys.sorted().compactMap { app in
            guard case .running(frozen: false, _)? = recipients[app] else { return nil }
            return .notify(app, .locationError(message))
        }
    }

    // MARK: The process

    /// The app's process is gone: its standard updates end with it; significant-change monitoring does not.
    mutating func processEnded(_ app: AppID) { updating[app] = nil }

    /// Whether the app's updates keep it running in the background, or would but may not, and why.
    func hold(_ app: AppID, _ context: ModeContext) -> ModeHold? {
        guard let updating = updating[app] else { return nil }
        let doing = "receiving location updates"
        guard context.declared.contains(.location) else {
            return ModeHold(.location, .denied, "\(doing), but \(ModeContext.undeclared(.location))")
        }
        guard updating.request.allowsBackground else {
            return ModeHold(
                .location, .denied,
                "\(doing) in the foreground only: allowsBackgroundLocationUpdates is off; "
                    + "set it to true to keep receiving them in the background")
        }
        guard context.backgroundActivity else {
            return ModeHold(
                .location, .denied,
                "\(doing), but background activity is off for this app; "
                    + "turn it on with `offstage settings APP_ID background-activity=on`")
        }
        return ModeHold(.location, .holds, doing)
    }

    // MARK: Helpers

    /// Whether `fix` lies at least the distance filter from the last fix the app was given.
    private static func passes(_ fix: LocationFix, _ updating: Updating) -> Bool {
        guard let last = updating.lastDelivered else { return true }
        return updating.request.distanceFilter <= 0 || last.distance(to: fix) >= updating.request.distanceFilter
    }

    private mutating func deliver(_ fix: LocationFix, to app: AppID) -> [ModeAction] {
        updating[app]?.lastDelivered = fix
        return [.notify(app, .locations([fix]))]
    }
}
