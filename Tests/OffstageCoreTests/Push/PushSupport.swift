import OffstageCore
import OffstageSimulator

/// An app that declares the `remote-notification` background mode.
let messenger: AppID = "com.example.messenger"

/// A push for `app` accepted now: a background one (`content-available: 1`, priority 5) unless an alert is given.
func push(
    _ id: String, to app: AppID = messenger, at now: Instant, alert: PushAlert? = nil, contentAvailable: Bool? = nil,
    collapseID: String? = nil, expiresAt: Instant? = nil, type: PushType? = nil, badge: Int? = nil
) -> RemotePush {
    let wakes = contentAvailable ?? (alert == nil)
    let aps = PushAPS(alert: alert, badge: badge, sound: alert == nil ? nil : "default", threadID: alert == nil ? nil : "chat-7",
        contentAvailable: wakes)
    var payload = #"{"aps":{"#
    payload += wakes ? #""content-available":1"# : #""alert":{"title":"\#(alert?.title ?? "")","body":"\#(alert?.body ?? "")"}"#
    payload += #"},"message":"\#(id)"}"#
    return RemotePush(
        id: id, app: app, type: type ?? (alert == nil ? .background : .alert), priority: alert == nil ? 5 : 10,
        collapseID: collapseID, expiresAt: expiresAt, acceptedAt: now, aps: aps, payload: payload)
}

extension Simulation {
    /// A simulation with the messenger installed (`remote-notification`, and whatever else `modes` adds).
    static func withMessenger(
        configuration: CoreConfiguration = .init(), modes: Set<BackgroundMode> = [.remoteNotification],
        behavior: AppBehavior = .init()
    ) -> Simulation {
        var sim = Simulation(configuration: configuration)
        sim.install(Manifest(id: messenger, executable: "app", backgroundModes: modes), behavior: behavior)
        sim.install(Manifest(id: "com.example.other", executable: "app"))
        return sim
    }

    /// Opens the app, sends it home and lets it be suspended.
    mutating func suspend(_ id: AppID) throws {
        try open(id)
        run(for: .milliseconds(100))
        home()
        run(for: .seconds(2))
    }

    /// The outcome names of these pushes, in order (nil for one still without an outcome).
    func outcomes(_ ids: [String]) -> [String?] { ids.map { pushOutcomes[$0]?.description } }
}
