import OffstageCore
import OffstageProtocol

/// The accessory methods of `io.offstage.ModesControl` (SPEC MODE-4, CLI-1): every registration, and events simulated
/// as if from the device. Every method replies with the registrations afterwards; on an error nothing changes.
extension ModesControlService {
    var accessoryMethods: [String: VarlinkMethodHandler] {
        [
            "Accessories": { context, _, responder in
                try engine.requireUser(context)
                responder.reply(engine.accessoriesReply())
            },
            "AccessoryEvent": { context, request, responder in
                try engine.requireUser(context)
                let parameters = try request.decodeParameters(ModesControlInterface.AccessoryEventParameters.self)
                let id = try engine.appID(parameters.app)
                do throws(CoreError) {
                    let event = try parameters.accessoryEvent().get()
                    engine.apply(
                        try engine.core.simulateAccessoryEvent(id, name: parameters.name, event, at: engine.now))
                } catch {
                    throw error.varlink(in: ModesControlInterface.name)
                }
                responder.reply(engine.accessoriesReply())
            },
        ]
    }
}

extension DaemonEngine {
    /// Every registered accessory, by app and name, with the accessory mode's verdict on each app.
    func accessoriesReply() -> ModesControlInterface.AccessoryLinksReply {
        let accessories = core.modes.accessories
        let now = self.now
        var messages: [ModesControlInterface.AccessoryLinkMessage] = []
        for id in accessories.links.keys.sorted() {
            let links = accessories.links[id] ?? [:]
            let hold = core.modeHolds(of: id, at: now).first { AccessoryRegistration.modes.contains($0.mode) }
            for name in links.keys.sorted() {
                guard let link = links[name] else { continue }
                let handling = accessories.handling[id]?.name == name
                messages.append(
                    ModesControlInterface.AccessoryLinkMessage(app: id, link: link, hold: handling ? hold : nil))
            }
        }
        return ModesControlInterface.AccessoryLinksReply(accessories: messages)
    }
}
