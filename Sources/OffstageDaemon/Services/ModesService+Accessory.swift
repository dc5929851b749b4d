import OffstageCore
import OffstageProtocol

/// The accessory methods of `io.offstage.Modes` (SPEC MODE-4). `HandOffAccessorySession` is served on the hand-off
/// socket, since descriptors cannot pass here: see `HandedOffChannels`.
extension ModesService {
    var accessoryMethods: [String: VarlinkMethodHandler] {
        [
            "RegisterAccessory": { context, request, responder in
                let parameters = try request.decodeParameters(ModesInterface.RegisterAccessoryParameters.self)
                let (id, pid) = try engine.requireApp(context, in: ModesInterface.name)
                let registration = try engine.modesCall { () throws(CoreError) in try parameters.registration().get() }
                // Whether it is there now is the file system's answer; the watcher reports every change after.
                let present = AccessoryPathWatcher.exists(registration.path)
                engine.apply(
                    try engine.modesCall { () throws(CoreError) in
                        try engine.core.registerAccessory(id, pid: pid, registration, present: present, at: engine.now)
                    })
                let link = engine.core.modes.accessories.links[id]?[registration.name]
                let message =
                    link.map(ModesInterface.AccessoryMessage.init)
                    ?? ModesInterface.AccessoryMessage(
                        name: registration.name, path: registration.path, mode: registration.mode.rawValue,
                        connected: present, session: false)
                responder.reply(ModesInterface.RegisterAccessoryReply(accessory: message))
            },
            "UnregisterAccessory": { context, request, responder in
                let parameters = try request.decodeParameters(ModesInterface.AccessoryNameParameters.self)
                let (id, pid) = try engine.requireApp(context, in: ModesInterface.name)
                engine.apply(
                    try engine.modesCall { () throws(CoreError) in
                        try engine.core.unregisterAccessory(id, pid: pid, name: parameters.name, at: engine.now)
                    })
                responder.reply()
            },
            "Accessories": { context, _, responder in
                let (id, _) = try engine.requireApp(context, in: ModesInterface.name)
                let links = engine.core.modes.accessories.links[id] ?? [:]
                let accessories = links.keys.sorted().compactMap { links[$0].map(ModesInterface.AccessoryMessage.init) }
                responder.reply(ModesInterface.AccessoriesReply(accessories: accessories))
            },
        ]
    }
}
