import OffstageCore
import OffstageHost
import OffstageProtocol

/// How a call answered in `OffstageHost` is answered on the daemon's socket.
typealias HostAnswering = @Sendable (String, VarlinkReceivedCall, AppCaller, inout OffstageCore, Instant) throws(VarlinkError) -> HostAnswer

extension DaemonEngine {
    /// Handlers for `methods` of `interface`, answered by `answer` as every shell answers them: the daemon adds the
    /// caller (from the connection), carrying out the actions, and the reply. `noting` runs first, with the method,
    /// the call and the caller, for what only the daemon keeps (its metrics).
    func hostMethods(
        _ methods: Set<String>, in interface: String, answer: @escaping HostAnswering,
        noting: (@Sendable (String, VarlinkRequest, AppID) throws -> Void)? = nil
    ) -> [String: VarlinkMethodHandler] {
        Dictionary(
            uniqueKeysWithValues: methods.map { method in
                let handler: VarlinkMethodHandler = { [self] context, request, responder in
                    let (id, pid) = try requireApp(context, in: interface)
                    try noting?(method, request, id)
                    let answer = try answer(method, request.call, AppCaller(app: id, pid: pid), &core, now)
                    apply(answer.actions)
                    responder.reply(answer.reply)
                }
                return (method, handler)
            })
    }
}
