/// Why an app's sockets may not carry traffic now (SPEC SET-2). The kernel enforces it in the daemon; the scheduler
/// and the transfer queue hold work for the same reasons (``Hold``).
public enum NetworkRestriction: String, Hashable, Sendable, Codable, CaseIterable {
    /// Background activity is off for the app: nothing of it uses the network outside the foreground.
    case backgroundActivityOff = "background-activity-off"
    /// Background data is off for the app, and the network is metered.
    case backgroundDataOff = "background-data-off"
    /// Data Saver is on, the network is metered, and the app has no unrestricted data.
    case dataSaver = "data-saver"

    /// What the user reads: the setting that blocks the traffic, and what lifts it.
    public var description: String {
        switch self {
        case .backgroundActivityOff:
            "background activity is off for the app: it has network access only in the foreground"
        case .backgroundDataOff:
            "background data is off for the app and the network is metered: it has network access only in the foreground"
        case .dataSaver:
            "Data Saver is on and the network is metered: without unrestricted data the app has network access only in the foreground"
        }
    }

    /// The restriction the user's settings put on an app's traffic, if any: the first that applies of background
    /// activity (on any network), background data and Data Saver (on a metered one).
    ///
    /// - Parameters:
    ///   - inFront: the app is in the foreground (inactive or active): it is never restricted.
    ///   - userAudio: the app plays audio the user started; like the foreground it keeps its traffic, as a music
    ///     or podcast app streaming what the user chose keeps playing.
    public static func applying(
        to settings: AppSettings, inFront: Bool, userAudio: Bool, dataSaver: Bool, network: NetworkKind
    ) -> NetworkRestriction? {
        if inFront || userAudio { return nil }
        if !settings.backgroundActivity { return .backgroundActivityOff }
        guard network == .metered else { return nil }
        if !settings.backgroundData { return .backgroundDataOff }
        if dataSaver && !settings.unrestrictedData { return .dataSaver }
        return nil
    }
}

/// What the core decided about the apps' traffic in one input: the apps whose restriction changed (SPEC SET-2).
public struct NetworkRulesChange: Hashable, Sendable {
    /// Each changed app's restriction; nil lifts it.
    public var restrictions: [AppID: NetworkRestriction?]

    /// Creates a change.
    public init(_ restrictions: [AppID: NetworkRestriction?]) {
        self.restrictions = restrictions
    }
}

/// Which apps' traffic is blocked, and why (SPEC SET-2): what the core last told its shell.
public struct NetworkRules: Hashable, Sendable {
    /// The restricted apps; an app not listed may use the network.
    public private(set) var restricted: [AppID: NetworkRestriction] = [:]

    /// Creates rules restricting nothing.
    public init() {}

    /// Records an app's restriction; returns whether it changed.
    mutating func set(_ id: AppID, _ restriction: NetworkRestriction?) -> Bool {
        guard restricted[id] != restriction else { return false }
        restricted[id] = restriction
        return true
    }
}
