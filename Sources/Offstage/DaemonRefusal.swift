import OffstageProtocol

/// What the daemon said when it refused a call, or that it could not be reached: the one reading of a failed call
/// that the SDK's error types (audio, VoIP, location, accessories) each map to their own codes.
struct DaemonRefusal {
    /// The Varlink error name; nil when the daemon could not be reached at all.
    let name: String?
    /// What was wrong.
    let message: String
    /// What to do about it.
    let fix: String

    init(_ error: any Error) {
        let varlink: VarlinkError
        switch error {
        case let error as VarlinkError: varlink = error
        case SocketHandOffError.refused(let error): varlink = error
        default:
            name = nil
            message = "the Offstage daemon could not be reached: \(error)"
            fix = "start offstaged, or check OFFSTAGE_SOCKET"
            return
        }
        name = varlink.name
        message = varlink.stringParameter("message") ?? varlink.stringParameter("description") ?? varlink.name
        fix = varlink.stringParameter("fix") ?? "see `offstage log` for the daemon's side"
    }

    /// The code of a modes error type (VoIP, location, accessories) for this refusal: the two refusals an app can
    /// act on (the mode is not declared, an argument is wrong), and `otherwise` for the rest (no daemon, not an app).
    func code<Code>(notPermitted: Code, invalidArgument: Code, otherwise: Code) -> Code {
        switch name {
        case ModesInterface.name + ".NotPermitted": notPermitted
        case ModesInterface.name + ".InvalidArgument": invalidArgument
        default: otherwise
        }
    }

    /// The code of an error type for this refusal when the daemon named an error of `interface`: `codes` by the
    /// error's short name (`InvalidArgument`), `otherwise` for the rest (no daemon, an error of another interface).
    func code<Code>(in interface: String, _ codes: [String: Code], otherwise: Code) -> Code {
        guard let name, name.hasPrefix(interface + ".") else { return otherwise }
        return codes[String(name.dropFirst(interface.count + 1))] ?? otherwise
    }
}
