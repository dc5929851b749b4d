/// The long-running background modes joined to the lifecycle (SPEC §7): what the mode components decide becomes
/// callbacks, thaws and suspension decisions here, so the lifecycle code only asks "does any mode hold this app?".
extension OffstageCore {
    /// What each mode says about the app: which keep it running, and which would but may not (SPEC LC-4, MODE-6).
    public func modeHolds(of id: AppID) -> [ModeHold] {
        guard let entry = apps[id], let process = entry.process else { return [] }
        let context = ModeContext(
            declared: entry.app.manifest.backgroundModes, backgroundActivity: entry.app.settings.backgroundActivity,
            inForeground: process.phase.isForeground)
        return modes.holds(id, context)
    }

    /// Whether a mode keeps the app running.
    func heldByMode(_ id: AppID) -> Bool {
        modeHolds(of: id).contains { $0.verdict == .holds }
    }

    /// Carries out what a mode component decided.
    mutating func perform(_ actions: [ModeAction], _ now: Instant) {
        for action in actions {
            switch action {
            case .notify(let id, let kind):
                guard let process = apps[id]?.process, process.termination == nil else { continue }
                enqueue(id, kind)
            case .resume(let id, let because):
                guard let process = apps[id]?.process, process.frozen, process.termination == nil else { continue }
                log(now, id, .mode, "resumed: \(because)")
                resume(id, now)
            case .reconsider(let id):
                if apps[id]?.process != nil { touched.insert(id) }
            case .log(let id, let message):
                log(now, id, .mode, message)
            }
        }
    }
}
