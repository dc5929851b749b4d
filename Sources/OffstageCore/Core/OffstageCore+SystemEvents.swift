/// System notifications for apps (SPEC LC-4): a running app hears each at once; a suspended one hears each kind
/// once, coalesced, before anything else, when it runs again. Nothing is launched or thawed for them.
extension OffstageCore {
    /// A system event happened: every app with a process hears of it (or only `app`, for a setting of one app).
    /// - Returns: how many apps hear of it (now, or when they run again), and the actions.
    public mutating func systemEvent(
        _ event: SystemEvent, for app: AppID? = nil, at now: Instant
    ) -> (told: Int, actions: [CoreAction]) {
        let told = post(event, to: app, now)
        return (told, finish(now))
    }

    /// Queues `event` for `app`, or for every app with a process; returns how many apps it was queued for.
    @discardableResult
    mutating func post(_ event: SystemEvent, to app: AppID? = nil, _ now: Instant) -> Int {
        let targets = app.map { [$0] } ?? apps.keys.sorted()
        var told = 0
        for id in targets {
            guard let process = apps[id]?.process, process.termination == nil else { continue }
            enqueue(id, .systemEvent(event))
            told += 1
        }
        if told > 0 { log(now, app, .device, "system event \(event) for \(app.map { "'\($0)'" } ?? "\(told) app(s)")") }
        return told
    }

    /// Where a system event goes in a queue: coalesced with one of its kind already waiting, and, while the app
    /// cannot run (frozen, detached, launching), ahead of every other waiting callback (behind other system events),
    /// so that it arrives first when the app runs again.
    static func queueSystemEvent(_ event: SystemEvent, in queue: inout [CallbackKind], appCanRun: Bool) {
        guard !queue.contains(.systemEvent(event)) else { return }
        guard !appCanRun else { return queue.append(.systemEvent(event)) }
        let firstOther = queue.firstIndex { if case .systemEvent = $0 { false } else { true } } ?? queue.endIndex
        // did-finish-launching always comes first: an app hears nothing before it has launched.
        let position = queue.first.map { if case .didFinishLaunching = $0 { max(firstOther, 1) } else { firstOther } } ?? 0
        queue.insert(.systemEvent(event), at: position)
    }
}
