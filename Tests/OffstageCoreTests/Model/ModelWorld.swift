import OffstageCore

/// The manifests an app slot can be installed with.
enum ManifestVariant: String, CaseIterable, Hashable, Sendable {
    /// No background modes.
    case plain
    /// `fetch` and `processing`, with both task identifiers listed.
    case scheduler
    /// `fetch` only, with the refresh identifier listed.
    case fetchOnly
    /// `UIApplicationExitsOnSuspend`, yet declaring `fetch` and `processing` (SPEC LC-7 must win).
    case exitsOnSuspend
    /// The long-running modes `audio`, `voip` and `external-accessory`, with `fetch` (SPEC §7).
    case modes
    /// `external-accessory` alone (SPEC MODE-4): no VoIP relaunch brings the app back after it ends, so its accessory
    /// connecting is what launches it.
    case accessory
    /// `remote-notification` and `fetch` (SPEC NT-4): background pushes wake it.
    case messenger
    /// `fetch`, with continued-processing tasks permitted by the pattern `com.example.model.export.*` (SPEC SCH-11);
    /// like every app, it may use background transfers (SPEC TR-1), which need no mode.
    case downloader

    /// The manifest of `id` for this variant.
    func manifest(_ id: AppID) -> Manifest {
        switch self {
        case .plain:
            Manifest(id: id, executable: "app")
        case .scheduler:
            Manifest(
                id: id, executable: "app", backgroundModes: [.fetch, .processing],
                permittedTaskIdentifiers: [ModelWorld.refreshIdentifier, ModelWorld.processingIdentifier])
        case .fetchOnly:
            Manifest(
                id: id, executable: "app", backgroundModes: [.fetch],
                permittedTaskIdentifiers: [ModelWorld.refreshIdentifier])
        case .exitsOnSuspend:
            Manifest(
                id: id, executable: "app", backgroundModes: [.fetch, .processing],
                permittedTaskIdentifiers: [ModelWorld.refreshIdentifier, ModelWorld.processingIdentifier],
                exitsOnSuspend: true)
        case .modes:
            Manifest(
                id: id, executable: "app", backgroundModes: [.audio, .voip, .externalAccessory, .fetch],
                permittedTaskIdentifiers: [ModelWorld.refreshIdentifier])
        case .accessory:
            Manifest(id: id, executable: "app", backgroundModes: [.externalAccessory])
        case .messenger:
            Manifest(
                id: id, executable: "app", backgroundModes: [.remoteNotification, .fetch],
                permittedTaskIdentifiers: [ModelWorld.refreshIdentifier])
        case .downloader:
            Manifest(
                id: id, executable: "app", backgroundModes: [.fetch],
                permittedTaskIdentifiers: [ModelWorld.refreshIdentifier, "com.example.model.export.*"])
        }
    }
}

extension SystemEvent {
    /// The Swift case name, for reproductions printed as code.
    var caseName: String {
        let words = rawValue.split(separator: "-")
        return String(words[0]) + words.dropFirst().map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
    }
}

/// How a process the shell starts behaves when signalled, or whether it starts at all.
enum ProcessTrait: String, CaseIterable, Hashable, Sendable {
    /// Dies on SIGTERM, as a process with default signal handling does.
    case normal
    /// Survives SIGTERM: only SIGKILL ends it.
    case ignoresSIGTERM
    /// The executable cannot be started: the shell reports `launchFailed`.
    case failsToStart
}

/// A device-wide setting the model switches (SPEC SET-1).
enum DeviceSwitch: String, CaseIterable, Hashable, Sendable {
    case multitasking, backgroundRefresh, lowPower, dataSaver

    /// The settings with this switch set.
    func apply(_ on: Bool, to settings: DeviceSettings) -> DeviceSettings {
        var settings = settings
        switch self {
        case .multitasking: settings.multitaskingSupported = on
        case .backgroundRefresh: settings.backgroundRefresh = on
        case .lowPower: settings.lowPowerMode = on
        case .dataSaver: settings.dataSaver = on
        }
        return settings
    }
}

/// A per-app setting the model switches (SPEC SET-2).
enum AppSwitch: String, CaseIterable, Hashable, Sendable {
    case backgroundRefresh, backgroundData, backgroundActivity, unrestrictedData

    /// The settings with this switch set.
    func apply(_ on: Bool, to settings: AppSettings) -> AppSettings {
        var settings = settings
        switch self {
        case .backgroundRefresh: settings.backgroundRefresh = on
        case .backgroundData: settings.backgroundData = on
        case .backgroundActivity: settings.backgroundActivity = on
        case .unrestrictedData: settings.unrestrictedData = on
        }
        return settings
    }
}

/// The fixed facts of the modelled device.
enum ModelWorld {
    /// How many app slots there are.
    static let appCount = 3
    /// The refresh task identifier the scheduling manifests list.
    static let refreshIdentifier = "com.example.model.refresh"
    /// The processing task identifier the scheduling manifests list.
    static let processingIdentifier = "com.example.model.processing"
    /// Where virtual time starts: 2026-01-01 08:00 UTC, a weekday morning.
    static let start = Instant(secondsSinceEpoch: 1_767_254_400)

    /// The app id of a slot.
    static func app(_ slot: Int) -> AppID { AppID("com.example.model\(slot)") }

    /// The name each app gives its accessory (SPEC MODE-4).
    static let accessoryName = "acc"

    /// Where the accessory of a slot appears when it is plugged in. Slot 2's is slot 0's: two apps may watch one
    /// accessory.
    static func accessoryPath(_ slot: Int) -> String { "/dev/model-accessory\(slot % 2)" }

    /// The category every app of the model may register: an action handled in the background and one that opens the
    /// app (SPEC NT-2); its requests name it.
    static let notificationCategory = NotificationCategory(
        identifier: "model",
        actions: [
            NotificationActionButton(identifier: ModelTap.later.rawValue, title: "Later"),
            NotificationActionButton(identifier: ModelTap.show.rawValue, title: "Show", foreground: true),
        ])

    /// The time zones the device moves between: one without daylight saving, two with, one far east.
    static let timeZones = ["UTC", "Europe/Berlin", "America/New_York", "Asia/Tokyo"]

    /// The slot of an app id.
    static func slot(of id: AppID) -> Int? {
        (0..<appCount).first { app($0) == id }
    }

    /// The task identifier of a kind (the legacy fetch has the reserved one).
    static func identifier(_ kind: TaskKind) -> String {
        switch kind {
        case .appRefresh: refreshIdentifier
        case .processing: processingIdentifier
        case .fetch: TaskRequest.fetchIdentifier
        case .continued: "continued"  // not generated: continued processing has tests of its own
        }
    }
}
