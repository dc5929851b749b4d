import OffstageCore

extension DaemonEngine {
    // In progress: the accessory watcher comes next.
    func watchAccessory(_ id: AppID, name: String, path: String) {}
    func unwatchAccessory(_ id: AppID, name: String) {}
}
