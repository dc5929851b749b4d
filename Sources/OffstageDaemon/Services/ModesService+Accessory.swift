import OffstageCore
import OffstageHost
import OffstageProtocol

/// The accessory methods of `io.offstage.Modes` (SPEC MODE-4). `HandOffAccessorySession` is served on the hand-off
/// socket, since descriptors cannot pass here: see `HandedOffChannels`.
extension ModesService {
    var accessoryMethods: [String: VarlinkMethodHandler] {
        engine.hostMethods(AccessoryCalls.methods, in: ModesInterface.name) { method, call, caller, core, now throws(VarlinkError) in
            // Whether it is there now is the file system's answer; the watcher reports every change after.
            try AccessoryCalls.answer(method, call, caller: caller, core: &core, at: now, present: AccessoryCalls.isPresent)
        }
    }
}
