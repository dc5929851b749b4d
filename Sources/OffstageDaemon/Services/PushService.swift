import OffstageCore
import OffstageHost
import OffstageProtocol
import OffstagePush

/// `io.offstage.Push`: the calls an app's SDK makes for remote notifications (SPEC NT-3, NT-4). The app is the one that
/// owns the calling process (peer credentials): it gets its own token and completes only its own handlers.
struct PushService: VarlinkInterface {
    let engine: DaemonEngine

    var interfaceDescription: VarlinkInterfaceDescription {
        VarlinkInterfaceDescription(PushInterface.definition)
    }

    var methods: [String: VarlinkMethodHandler] {
        let registration: [String: VarlinkMethodHandler] = [
            "Register": { context, _, responder in
                let (id, _) = try engine.requireApp(context, in: PushInterface.name)
                guard let address = engine.pushAddress else { throw engine.noPushGateway(in: PushInterface.name) }
                let token = try engine.pushStoreCall(in: PushInterface.name) { try engine.registerForPush(id) }
                engine.flushLog()
                engine.afterRemoteRegistration(responder) {
                    PushInterface.RegisterReply(registration: .init(token: token, gateway: address, topic: id.rawValue))
                }
            },
            "SubscribeWebPush": { context, request, responder in
                let parameters = try request.decodeParameters(PushInterface.SubscribeWebPushParameters.self)
                let (id, _) = try engine.requireApp(context, in: PushInterface.name)
                guard engine.pushAddress != nil else { throw engine.noPushGateway(in: PushInterface.name) }
                let key = try PushCalls.applicationServerKey(parameters)
                let subscription = try engine.pushStoreCall(in: PushInterface.name) {
                    try engine.subscribeWebPush(id, applicationServerKey: key)
                }
                engine.flushLog()
                guard subscription.applicationServerKey == key else { throw PushCalls.otherApplicationServerKey }
                let message = try engine.pushStoreCall(in: PushInterface.name) {
                    try PushInterface.WebPushSubscriptionMessage(subscription, endpoint: engine.webPushEndpoint(subscription.id) ?? "")
                }
                engine.afterRemoteRegistration(responder) { PushInterface.SubscribeWebPushReply(subscription: message) }
            },
            "UnsubscribeWebPush": { context, _, responder in
                let (id, _) = try engine.requireApp(context, in: PushInterface.name)
                engine.unsubscribeWebPush(id, because: "the app unsubscribed")
                engine.flushLog()
                responder.reply()
            },
            "Unregister": { context, _, responder in
                let (id, _) = try engine.requireApp(context, in: PushInterface.name)
                engine.unregisterForPush(id, because: "the app unregistered")
                engine.flushLog()
                responder.reply()
            },
        ]
        return registration.merging(engine.hostMethods(PushCalls.methods, in: PushInterface.name, answer: PushCalls.answer)) { own, _ in own }
    }
}

extension DaemonEngine {
    /// Answers a registration with `reply`: at once with the daemon's own gateway; with a remote one, once the
    /// gateway has the registration, so an app server using the token at once is not refused (decision 0035). When
    /// the gateway cannot be reached the call fails and the app registers again later, as iOS reports a failed
    /// registration; the token stays the app's and reaches the gateway with the next connection.
    func afterRemoteRegistration<Reply: Encodable & Sendable>(_ responder: VarlinkResponder, _ reply: @escaping @Sendable () -> Reply) {
        guard let link = remotePush else {
            responder.reply(reply())
            return
        }
        let loop = eventLoop
        Task {
            do {
                try await link.registerNow()
                loop.execute { responder.reply(reply()) }
            } catch {
                loop.execute {
                    responder.fail(
                        VarlinkError(
                            "\(PushInterface.name).Unavailable",
                            parameters: [
                                "message": .string("the push gateway did not take the registration: \(error)"),
                                "fix": .string("register again later; the device reconnects to \(link.address) by itself"),
                            ]))
                }
            }
        }
    }

    /// The daemon runs without a gateway.
    func noPushGateway(in interface: String) -> VarlinkError {
        VarlinkError(
            "\(interface).Unavailable",
            parameters: [
                "message": .string("this daemon runs without a push gateway"),
                "fix": .string(
                    "start offstaged with the push gateway on (the setting push.enabled, on by default) or linked to one (push.remote)"),
            ])
    }

    /// Runs a store call of the push area; a failure is the store's, reported as such.
    func pushStoreCall<Result>(in interface: String, _ body: () throws -> Result) throws(VarlinkError) -> Result {
        do {
            return try body()
        } catch {
            logger.error("push store call failed", metadata: ["offstage.error": "\(error)"])
            throw VarlinkError(
                "\(interface).Unavailable",
                parameters: [
                    "message": .string("the daemon's store failed: \(error)"),
                    "fix": .string("see the daemon's log; the call changed nothing and can be tried again"),
                ])
        }
    }
}
