import OffstageCore

/// What the daemon acknowledged, as the harness knows it. Each fact is known (a reply said so) or uncertain (the
/// daemon was killed during the call, so either outcome is correct). After a restart the daemon's answers must agree
/// with every known fact; uncertain facts then take the daemon's answer.
struct AcknowledgedState {
    enum Fact: Equatable {
        case known(Bool)
        case uncertain

        func allows(_ value: Bool) -> Bool { self == .uncertain || self == .known(value) }
    }

    /// An app's setting names and their values in a fresh install.
    static let appDefaults: [String: Bool] = Dictionary(uniqueKeysWithValues: SettingsEditor.values(of: AppSettings()))
    /// The device's setting names and their values on a fresh daemon.
    static let deviceDefaults: [String: Bool] = Dictionary(uniqueKeysWithValues: SettingsEditor.values(of: DeviceSettings()))

    /// Per app id: installed or not (never mentioned: not installed).
    var installed: [String: Fact] = [:]
    /// Per installed app id, every setting's value.
    var appSettings: [String: [String: Fact]] = [:]
    /// Every device setting's value.
    var deviceSettings: [String: Fact] = deviceDefaults.mapValues { .known($0) }
    /// Requests ("app/identifier") seen pending in a reply and not run since: they must survive every crash.
    var pendingRequests: Set<String> = []

    func installation(_ id: String) -> Fact { installed[id] ?? .known(false) }

    /// An install of `id` was acknowledged: fresh (default settings), an upgrade (settings kept), or — after an
    /// uncertain uninstall — either.
    mutating func acknowledgeInstall(_ id: String) {
        switch installation(id) {
        case .known(true): break
        case .known(false): appSettings[id] = Self.appDefaults.mapValues { .known($0) }
        case .uncertain: appSettings[id] = settingsEitherFreshOrKept(id)
        }
        installed[id] = .known(true)
    }

    /// An uninstall of `id` was acknowledged.
    mutating func acknowledgeUninstall(_ id: String) {
        installed[id] = .known(false)
        appSettings[id] = nil
        pendingRequests = pendingRequests.filter { !$0.hasPrefix(id + "/") }
    }

    /// An install or uninstall of `id` may or may not have happened.
    mutating func uncertainInstallation(_ id: String) {
        installed[id] = .uncertain
        appSettings[id] = settingsEitherFreshOrKept(id)
        pendingRequests = pendingRequests.filter { !$0.hasPrefix(id + "/") }
    }

    /// Settings of an app that may have been installed afresh (defaults) or kept: known only where both agree.
    func settingsEitherFreshOrKept(_ id: String) -> [String: Fact] {
        Dictionary(uniqueKeysWithValues: Self.appDefaults.map { name, value in
            (name, appSettings[id]?[name] == .known(value) ? .known(value) : .uncertain)
        })
    }

    /// Takes the daemon's answers for what was uncertain.
    mutating func adopt(installedIDs: Set<String>, appSettings observed: [String: [String: Bool]], device: [String: Bool]) {
        for (id, fact) in installed where fact == .uncertain {
            installed[id] = .known(installedIDs.contains(id))
        }
        for id in installed.keys where installed[id] == .known(false) { appSettings[id] = nil }
        for (id, values) in observed {
            for (name, value) in values where appSettings[id]?[name] == .uncertain { appSettings[id]?[name] = .known(value) }
        }
        for (name, value) in device where deviceSettings[name] == .uncertain { deviceSettings[name] = .known(value) }
    }
}
