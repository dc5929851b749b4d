import OffstageCore
import OffstageProtocol

/// `io.offstage.Push`: the calls an app's SDK makes for remote notifications (SPEC NT-3, NT-4). The app is the one that
/// owns the calling process (peer credentials): it gets its own token and completes only its own handlers.
struct PushService: VarlinkInterface {
    let engine: DaemonEngine

    var interfaceDescription: VarlinkInterfaceDescription {
        VarlinkInterfaceDescription(PushInterface.definition)
    }

    var methods: [String: VarlinkMethodHandler] {
        [
            "Register": { context, _, responder in
                let (id, _) = try engine.requireApp(context, in: PushInterface.name)
                guard let gateway = engine.pushGateway else { throw engine.noPushGateway(in: PushInterface.name) }
                let token = try engine.pushStoreCall(in: PushInterface.name) { try engine.registerForPush(id) }
                engine.flushLog()
                responder.reply(
                    PushInterface.RegisterReply(
                        registration: .init(token: token, gateway: gateway.address, topic: id.rawValue)))
            },
            "Unregister": { context, _, responder in
                let (id, _) = try engine.requireApp(context, in: PushInterface.name)
                engine.unregisterForPush(id, because: "the app unregistered")
                engine.flushLog()
                responder.reply()
            },
            "CompleteRemoteNotification": { context, request, responder in
                let parameters = try request.decodeParameters(PushInterface.CompleteParameters.self)
                let (id, pid) = try engine.requireApp(context, in: PushInterface.name)
                guard let result = TaskResult(rawValue: parameters.result) else {
                    throw CoreError(
                        .invalidArgument, "result \(QuotedText.quote(parameters.result)) is not a handler result",
                        fix: "complete with newData, noData or failed"
                    ).varlink(in: PushInterface.name)
                }
                let actions: [CoreAction]
                do throws(CoreError) {
                    actions = try engine.core.completeRemoteNotification(
                        id, pid: pid, run: parameters.run, result: result, at: engine.now)
                } catch {
                    throw error.varlink(in: PushInterface.name)
                }
                engine.apply(actions)
                responder.reply()
            },
        ]
    }
}

extension DaemonEngine {
    /// The daemon runs without a gateway.
    func noPushGateway(in interface: String) -> VarlinkError {
        VarlinkError(
            "\(interface).Unavailable",
            parameters: [
                "message": .string("this daemon runs without a push gateway"),
                "fix": .string("start offstaged with the push gateway on (the setting push.enabled, on by default)"),
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
