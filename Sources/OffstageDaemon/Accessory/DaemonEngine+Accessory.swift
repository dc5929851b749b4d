import OffstageCore

/// Carrying out the accessory actions (SPEC MODE-4): the path watcher reports each registered accessory's presence
/// to the core. Sessions are handed-off channels (`HandedOffChannels`).
extension DaemonEngine {
    /// Watches the path of the app's accessory `name`; its state now and every change reach the core.
    func watchAccessory(_ id: AppID, name: String, path: String) {
        guard let accessoryPaths else {
            logger.warning(
                "accessories are not watched", metadata: ["offstage.app": "\(id)", "offstage.accessory": "\(name)"])
            return
        }
        accessoryPaths.watch(AccessoryPathWatcher.Key(app: id, name: name), path: path)
    }

    /// Stops watching the app's accessory `name`.
    func unwatchAccessory(_ id: AppID, name: String) {
        accessoryPaths?.unwatch(AccessoryPathWatcher.Key(app: id, name: name))
    }

    /// The watcher found the accessory's path there (connected) or gone.
    func accessoryPresence(_ key: AccessoryPathWatcher.Key, present: Bool) {
        apply(core.accessoryPresence(key.app, name: key.name, connected: present, at: now))
    }
}
