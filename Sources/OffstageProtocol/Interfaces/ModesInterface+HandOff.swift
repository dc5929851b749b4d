import OffstageCore

/// The calls the hand-off socket serves (SPEC MODE-2, MODE-4): each comes with one descriptor attached.
extension ModesInterface {
    /// One call on the hand-off socket, read from its method and parameters before its descriptor is looked at.
    public enum HandOffCall: Hashable, Sendable {
        /// `HandOffSocket`: the VoIP app's connected socket.
        case socket
        /// `HandOffAccessorySession`: the open channel to the registered accessory `name`.
        case accessorySession(name: String)

        /// The call `method` with `parameters` (a JSON object, or null).
        /// - Throws: `MethodNotFound` for any other method; `io.offstage.Modes.InvalidArgument` when an accessory
        ///   session names no accessory.
        public init(method: String, parameters: JSONValue) throws(VarlinkError) {
            switch method {
            case Method.handOffSocket:
                self = .socket
            case Method.handOffAccessorySession:
                guard let name = parameters["name"]?.stringValue else {
                    throw CoreError(
                        .invalidArgument, "the call names no accessory", fix: "pass the registered accessory's name as 'name'"
                    ).varlink(in: ModesInterface.name)
                }
                self = .accessorySession(name: name)
            default:
                throw .methodNotFound(method)
            }
        }
    }
}
