import Glibc
import OffstageCore
import OffstageProtocol

/// The accessory calls of `io.offstage.Modes` (SPEC MODE-4), answered the same way by every shell. Whether an
/// accessory is there is the file system's answer (``isPresent(_:)``); each shell reports every change after that
/// from its own watch of the path (the daemon's inotify watcher, the test kit's look at each step). Handing off a
/// session passes a descriptor: each shell's own.
public enum AccessoryCalls {
    /// The methods answered here, unqualified.
    public static let methods: Set<String> = ["RegisterAccessory", "UnregisterAccessory", "Accessories"]

    /// Answers `method` (one of ``methods``) for `caller` at `now`; `present` says whether the accessory at a path is
    /// plugged in now.
    ///
    /// - Throws: `org.varlink.service.InvalidParameter` for parameters that do not decode, and
    ///   `io.offstage.Modes.<Code>` for what the core refused (``ModeCalls/refusing(_:)``).
    public static func answer(
        _ method: String, _ call: VarlinkReceivedCall, caller: AppCaller, core: inout OffstageCore, at now: Instant,
        present: (String) -> Bool
    ) throws(VarlinkError) -> HostAnswer {
        let (id, pid) = (caller.app, caller.pid)
        switch method {
        case "RegisterAccessory":
            let parameters = try call.decodeParameters(as: ModesInterface.RegisterAccessoryParameters.self)
            let registration = try ModeCalls.refusing { () throws(CoreError) in try parameters.registration().get() }
            let connected = present(registration.path)
            let actions = try ModeCalls.refusing { () throws(CoreError) in
                try core.registerAccessory(id, pid: pid, registration, present: connected, at: now)
            }
            let message =
                core.modes.accessories.links[id]?[registration.name].map(ModesInterface.AccessoryMessage.init)
                ?? ModesInterface.AccessoryMessage(
                    name: registration.name, path: registration.path, mode: registration.mode.rawValue,
                    connected: connected, session: false)
            return HostAnswer(reply: ModesInterface.RegisterAccessoryReply(accessory: message), actions: actions)
        case "UnregisterAccessory":
            let parameters = try call.decodeParameters(as: ModesInterface.AccessoryNameParameters.self)
            return HostAnswer(
                actions: try ModeCalls.refusing { () throws(CoreError) in
                    try core.unregisterAccessory(id, pid: pid, name: parameters.name, at: now)
                })
        case "Accessories":
            let links = core.modes.accessories.links[id] ?? [:]
            let accessories = links.keys.sorted().compactMap { links[$0].map(ModesInterface.AccessoryMessage.init) }
            return HostAnswer(reply: ModesInterface.AccessoriesReply(accessories: accessories))
        default:
            throw VarlinkError.methodNotFound("\(ModesInterface.name).\(method)")
        }
    }

    /// Whether `path` exists, following links (a udev link whose device went away does not count).
    public static func isPresent(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0
    }
}
