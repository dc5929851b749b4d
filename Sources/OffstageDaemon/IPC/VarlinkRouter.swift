import OffstageProtocol

/// The methods a server answers, frozen when it starts: read on the event loop for every call, never changed, so it
/// needs no lock.
struct VarlinkRouter: Sendable {
    /// A method's handler and its counters.
    struct Route: Sendable {
        let handler: VarlinkMethodHandler
        /// Nil when the server keeps no metrics.
        let metrics: IPCMethodMetrics?
    }

    /// Routes by fully qualified method name: one hash lookup finds a call's handler and its counters.
    private let routes: [String: Route]
    /// The counters of calls no method answers (nil without metrics).
    let unrouted: IPCMethodMetrics?
    private let interfaces: [String: VarlinkInterfaceDescription]
    /// What `org.varlink.service.GetInfo` answers.
    let info: VarlinkServiceInfo

    init(
        registered: [(description: VarlinkInterfaceDescription, methods: [String: VarlinkMethodHandler])],
        vendor: String,
        product: String,
        version: String,
        url: String,
        metrics: DaemonMetrics? = nil
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
        // The labels come from the interface definitions, made here once: a call never creates a series.
        var routes: [String: Route] = [:]
        for (name, handler) in handlers {
            let dot = name.lastIndex(of: ".") ?? name.startIndex
            let methodMetrics = metrics?.ipcMethod(
                interface: String(name[..<dot]), method: String(name[name.index(after: dot)...]))
            routes[name] = Route(handler: handler, metrics: methodMetrics)
        }
        self.routes = routes
        self.unrouted = metrics?.unroutedCalls
        self.interfaces = interfaces
        self.info = info
    }

    /// The handler for `method` and its counters, or the standard error saying why there is none.
    func route(_ header: VarlinkCallHeader) -> Result<Route, VarlinkError> {
        if let route = routes[header.method] { return .success(route) }
        let interface = header.interface
        guard !interface.isEmpty else { return .failure(.methodNotFound(header.method)) }
        guard let description = interfaces[interface] else { return .failure(.interfaceNotFound(interface)) }
        if description.declaresMethod(header.memberName) { return .failure(.methodNotImplemented(header.method)) }
        return .failure(.methodNotFound(header.method))
    }
}
