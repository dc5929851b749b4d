import OffstageCore
import OffstageHost
import OffstageProtocol

/// How a call answered in `OffstageHost` is answered on the daemon's socket.
typealias HostAnswering = @Sendable (String, VarlinkReceivedCall, AppCaller, inout OffstageCore, Instant) throws(VarlinkError) -> HostAnswer

extension DaemonEngine {
    /// Handlers for `methods` of `interface`, answered by `answer` as every shell answers them: the daemon adds the
    /// caller (from the connection), carrying out the actions, and the reply. An answered callback is timed for the
    /// daemon's metrics.
    func hostMethods(
        _ methods: Set<String>, in interface: String, answer: @escaping HostAnswering
    ) -> [String: VarlinkMethodHandler] {
        Dictionary(
            uniqueKeysWithValues: methods.map { method in
                let handler: VarlinkMethodHandler = { [self] context, request, responder in
                    let (id, pid) = try requireApp(context, in: interface)
                    let answer = try answer(method, request.call, AppCaller(app: id, pid: pid), &core, now)
                    if let callback = answer.answeredCallback { callbackAnswered(callback, by: id) }
                    apply(answer.actions)
                    responder.reply(answer.reply)
                }
                return (method, handler)
            })
    }
}
