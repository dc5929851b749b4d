import OffstageCore

extension Simulation {
    /// A system event, as the machine would post it (SPEC LC-4).
    public mutating func systemEvent(_ event: SystemEvent, for app: AppID? = nil) {
        perform(core.systemEvent(event, for: app, at: now).actions)
    }
}
