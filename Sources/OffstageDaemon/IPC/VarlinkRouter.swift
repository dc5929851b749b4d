import OffstageProtocol

/// The methods a server answers, frozen when it starts: read on the event loop for every call, never changed, so it
/// needs no lock.
struct VarlinkRouter: Sendable {
    /// Handlers by fully qualified method name: one hash lookup routes a call.
    private let handlers: [String: VarlinkMethodHandler]
    private let interfaces: [String: VarlinkInterfaceDescription]
    /// What `org.varlink.service.GetInfo` answers.
    let info: VarlinkServiceInfo

    init(
        registered: [(description: VarlinkInterfaceDescription, methods: [String: VarlinkMethodHandler])],
        vendor: String,
        product: String,
        version: String,
        url: String
    ) {
        var handlers: [String: VarlinkMethodHandler] = [:]
        var interfaces: [String: VarlinkInterfaceDescription] = [:]
        for (description, methods) in registered {
            interfaces[description.name] = description
            for (name, handler) in methods {
                handlers[description.qualified(name)] = handler
            }
        }
        interfaces[VarlinkInterfaceDescription.offstageProtocol.name] = .offstageProtocol
        interfaces[VarlinkInterfaceDescription.service.name] = .service
        let info = VarlinkServiceInfo(
            vendor: vendor,
            product: product,
            version: version,
            url: url,
            interfaces: interfaces.keys.sorted()
        )
        let descriptions = interfaces
        handlers["org.varlink.service.GetInfo"] = { _, _, responder in
            responder.reply(info)
        }
        handlers["org.varlink.service.GetInterfaceDescription"] = { _, request, responder in
            let name = try request.decodeParameters(VarlinkInterfaceDescriptionRequest.self).interface
            guard let description = descriptions[name] else { throw VarlinkError.interfaceNotFound(name) }
            responder.reply(VarlinkInterfaceDescriptionReply(description: description.text))
        }
        self.handlers = handlers
        self.interfaces = interfaces
        self.info = info
    }

    /// The handler for `method`, or the standard error saying why there is none.
    func route(_ header: VarlinkCallHeader) -> Result<VarlinkMethodHandler, VarlinkError> {
        if let handler = handlers[header.method] { return .success(handler) }
        let interface = header.interface
        guard !interface.isEmpty else { return .failure(.methodNotFound(header.method)) }
        guard let description = interfaces[interface] else { return .failure(.interfaceNotFound(interface)) }
        if description.declaresMethod(header.memberName) { return .failure(.methodNotImplemented(header.method)) }
        return .failure(.methodNotFound(header.method))
    }
}
